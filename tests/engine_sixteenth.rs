//! The sixteenth accuracy round: shapes from the blind wave g323– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// Skip-gram with negative sampling: two embedding tables scored with `torch.bmm`.
const SKIPGRAM: &str = "import torch
import torch.nn as nn
from torch.utils.data import DataLoader

class SkipGram(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.inp = nn.Embedding(vocab, dim)
        self.out = nn.Embedding(vocab, dim)

    def forward(self, center, ctx, neg):
        c = self.inp(center)
        pos = (c * self.out(ctx)).sum(1)
        negs = torch.bmm(self.out(neg), c.unsqueeze(2)).squeeze(2)
        return -(torch.nn.functional.logsigmoid(pos) + torch.nn.functional.logsigmoid(-negs).sum(1)).mean()

device = torch.device('cuda')
model = SkipGram(50000, 300).to(device)
optimizer = torch.optim.Adam(model.parameters())
loader = DataLoader(pairs, batch_size=1024, shuffle=True, num_workers=4)
for epoch in range(5):
    for center, ctx, neg in loader:
        loss = model(center.to(device), ctx.to(device), neg.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) torch.bmm(self.out(neg), c.unsqueeze(2))   <- embedding tables only: a gathered dot product
#[test]
fn embedding_tables_scored_by_bmm_are_no_matmul_work() {
    let a = run(SKIPGRAM);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
    // a Linear layer beside them is matmul work again, and so is the product
    let linear = SKIPGRAM.replace(
        "        self.out = nn.Embedding(vocab, dim)\n",
        "        self.out = nn.Embedding(vocab, dim)\n        self.proj = nn.Linear(dim, dim)\n",
    );
    assert_eq!(lines_of(&run(&linear), "EA202"), vec![19]);
    // and a bmm without embedding tables is attention written by hand
    let attention = SKIPGRAM.replace(
        "nn.Embedding(vocab, dim)",
        "nn.Parameter(torch.randn(vocab, dim))",
    );
    assert_eq!(lines_of(&run(&attention), "EA202"), vec![18]);
}

// Ex) DataLoader(pairs, batch_size=1024, num_workers=4)   <- batches of word ids: nothing to pin
#[test]
fn a_network_of_embedding_tables_only_reads_id_batches() {
    assert!(lines_of(&run(SKIPGRAM), "EA102").is_empty());
    // a table beside a network the file does not show (DeepSDF's latent codes and an imported
    // decoder) says nothing of that network
    let decoder = "import torch
from torch.utils.data import DataLoader
from networks import Decoder

device = torch.device('cuda')
decoder = Decoder(256).to(device)
lat_vecs = torch.nn.Embedding(num_scenes, 256).to(device)
optimizer = torch.optim.Adam(list(decoder.parameters()) + list(lat_vecs.parameters()))
loader = DataLoader(sdf_samples, batch_size=64, shuffle=True, num_workers=4)
for epoch in range(2000):
    for sdf, idx in loader:
        loss = (decoder(torch.cat([lat_vecs(idx.to(device)), sdf.to(device)], 1)) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";
    assert_eq!(lines_of(&run(decoder), "EA102"), vec![9]);
}

/// A Transformer-like operator whose layers come from another module; the file names
/// attention only in a copied source path and a transform variable.
const NAMED_ONLY: &str = "import argparse
import shutil
import torch
import torch_geometric.transforms as T
from nn_module.encoder_module import SpatialEncoder2D

parser = argparse.ArgumentParser()
parser.add_argument('--activation', default='silu', help='activation')
args = parser.parse_args()
shutil.copy('../../nn_module/attention_module.py', 'cache')
transformer = T.Compose([T.Cartesian(), T.Distance()])
device = torch.device('cuda')
model = SpatialEncoder2D(4, 96).to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for g in loader:
        g = transformer(g).to(device)
        loss = model(g).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) shutil.copy('../nn_module/attention_module.py', d); transformer = T.Compose([...])
#[test]
fn a_source_path_or_a_transform_variable_names_no_attention_model() {
    let a = run(NAMED_ONLY);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
    // each alone still names one where it is a model's name: an import of the attention module
    let imported = NAMED_ONLY.replace(
        "from nn_module.encoder_module import SpatialEncoder2D\n",
        "from nn_module.encoder_module import SpatialEncoder2D\nfrom nn_module.attention_module import LinearAttention\n",
    );
    assert_eq!(lines_of(&run(&imported), "EA202"), vec![14]);
    // a checkpoint name quoted as a model: `'--model', default='vit_base'`
    let quoted = NAMED_ONLY.replace("default='silu'", "default='vit_base_patch16'");
    assert_eq!(lines_of(&run(&quoted), "EA202"), vec![13]);
    // an option of the attention layers still hints at them (`--attn_pdrop`)
    let option = NAMED_ONLY.replace("'--activation'", "'--attn_pdrop'");
    assert_eq!(lines_of(&run(&option), "EA202"), vec![13]);
    // a variable bound to a model keeps what its name says (`vit_pose = ViTPose(cfg)`)
    let variable = NAMED_ONLY.replace(
        "transformer = T.Compose([T.Cartesian(), T.Distance()])",
        "transformer = build_model(4, 96)",
    );
    assert_eq!(lines_of(&run(&variable), "EA202"), vec![13]);
    // a class the file calls by its name
    let called = NAMED_ONLY
        .replace(
            "transformer = T.Compose([T.Cartesian(), T.Distance()])\n",
            "",
        )
        .replace("g = transformer(g)", "g = Transformer(g)");
    assert_eq!(lines_of(&run(&called), "EA202"), vec![12]);
}

/// A multi-view stereo trainer: the step is two wrappers deep, and the loader is handed on.
const WRAPPED_STEP: &str = "import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from models import MVSNet

def process_sample(model, sample, is_training=True, optimizer=None):
    images, depth = sample
    out = model(images.cuda())
    loss = F.smooth_l1_loss(out, depth.cuda())
    if is_training:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss

def train_sample(model, sample, optimizer):
    return process_sample(model, sample, True, optimizer)

def process_samples(model, image_loader, optimizer, epoch):
    for batch_idx, sample in enumerate(image_loader):
        loss = train_sample(model, sample, optimizer)

def train(model, train_image_loader, optimizer, epochs):
    for epoch_idx in range(epochs):
        process_samples(model, train_image_loader, optimizer, epoch_idx)

if __name__ == '__main__':
    model = MVSNet().cuda()
    optimizer = torch.optim.Adam(model.parameters())
    train_loader = DataLoader(train_set, batch_size=16, shuffle=True, num_workers=8)
    train(model, train_loader, optimizer, 16)
";

// Ex) def train_sample(model, sample, opt): return process_sample(model, sample, True, opt)
#[test]
fn a_step_two_wrappers_deep_makes_a_step_loop_and_a_loader_handed_on_restarts() {
    let a = run(WRAPPED_STEP);
    assert_eq!(lines_of(&a, "EA201"), vec![20], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA203"), vec![28], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA103"), vec![30], "{:?}", a.findings);
}

/// A CLIP-style trainer class fed by a loader whose settings live in a dict.
const TRAINER_CLASS: &str = "import torch
from torch.utils.data import DataLoader
from tqdm import tqdm

class Trainer:
    def __init__(self, model, train_loader, device):
        self.model = model.to(device)
        self.train_loader = train_loader
        self.device = device
        self.optimizer = torch.optim.AdamW(self.model.parameters())

    def train_epoch(self, epoch):
        pbar = tqdm(self.train_loader, desc=f'Epoch {epoch}')
        for images, text in pbar:
            loss = self.model(images.to(self.device), text.to(self.device))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def train(self, epochs):
        for epoch in range(epochs):
            self.train_epoch(epoch)

def main():
    config = {
        'batch_size': 32,
        'num_workers': 4,
    }
    device = torch.device('cuda')
    model = ImageEncoder()
    train_loader = DataLoader(train_set, batch_size=config['batch_size'], num_workers=config['num_workers'])
    trainer = Trainer(model=model, train_loader=train_loader, device=device)
    trainer.train(10)

if __name__ == '__main__':
    main()
";

// Ex) DataLoader(ds, num_workers=config['num_workers']); Trainer(train_loader=train_loader).train(10)
#[test]
fn a_dict_written_out_and_a_loader_kept_by_a_trainer_object_are_followed() {
    let a = run(TRAINER_CLASS);
    assert_eq!(lines_of(&a, "EA103"), vec![31], "{:?}", a.findings);
    // the dict's entry as it stands at the call: written 0 afterwards, no workers to keep
    let zeroed = TRAINER_CLASS.replace(
        "    device = torch.device('cuda')\n",
        "    config['num_workers'] = 0\n    device = torch.device('cuda')\n",
    );
    assert!(lines_of(&run(&zeroed), "EA103").is_empty());
    // a key the dict does not hold is not read as anything
    let missing = TRAINER_CLASS.replace("config['num_workers']", "config['workers']");
    assert!(lines_of(&run(&missing), "EA103").is_empty());
}

/// A fine-tune whose validation loader is read for one batch every ten steps.
const ONE_BATCH_VALIDATION: &str = "import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForVision2Seq

device = torch.device('cuda')
model = AutoModelForVision2Seq.from_pretrained('google/paligemma-3b-pt-224', torch_dtype=torch.bfloat16).to(device)
optimizer = torch.optim.AdamW(model.parameters())
train_loader = DataLoader(train_set, batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True)
val_loader = DataLoader(val_set, batch_size=8, num_workers=0)
for epoch in range(3):
    for step, batch in enumerate(train_loader):
        loss = model(**{k: v.to(device, non_blocking=True) for k, v in batch.items()}).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 10 == 0:
            with torch.no_grad():
                for batch in val_loader:
                    val_loss = model(**{k: v.to(device) for k, v in batch.items()}).loss
                    break
";

// Ex) for batch in tqdm(val_loader): ...; break   <- one batch: workers would cost more than they save
#[test]
fn a_loader_whose_loop_always_breaks_off_reads_one_batch() {
    let a = run(ONE_BATCH_VALIDATION);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    // without the break it is read whole
    let whole = ONE_BATCH_VALIDATION.replace("                    break\n", "");
    assert_eq!(lines_of(&run(&whole), "EA101"), vec![9]);
    // a training loop that returns after one batch is still run every epoch: its loader is read
    // again each time (labellers flag its pinning and persistence)
    let returns = "import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
model = Net().to(device)
optimizer = torch.optim.Adam(model.parameters())
loader = DataLoader(train_set, batch_size=32, num_workers=8)

def train(epoch):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return

for epoch in range(200):
    train(epoch)
";
    let a = run(returns);
    assert_eq!(lines_of(&a, "EA102"), vec![7], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA103"), vec![7], "{:?}", a.findings);
}

/// A PDE benchmark: `eval = args.eval` with an integer default of 0 switches evaluation off.
const INT_SWITCH: &str = "import argparse
import torch
from torch.utils.data import DataLoader
from model import Transolver

parser = argparse.ArgumentParser()
parser.add_argument('--eval', type=int, default=0)
parser.add_argument('--save_name', type=str, default='')
args = parser.parse_args()
eval = args.eval
save_name = args.save_name

def main():
    model = Transolver().cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    if eval:
        with torch.no_grad():
            for x, y in test_loader:
                print(model(x.cuda()).sum().item())
    else:
        for ep in range(10):
            for x, y in train_loader:
                loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    if save_name:
        for x, y in test_loader:
            print(model(x.cuda()).mean().item())

if __name__ == '__main__':
    main()
";

// Ex) eval = args.eval (type=int, default=0) ... if eval:   <- off as shipped
#[test]
fn an_integer_or_string_option_read_through_a_name_is_a_switch() {
    let a = run(INT_SWITCH);
    assert!(!lines_of(&a, "EA301").contains(&19), "{:?}", a.findings);
    assert!(!lines_of(&a, "EA301").contains(&29), "{:?}", a.findings);
    let on = INT_SWITCH
        .replace("default=0)", "default=1)")
        .replace("default='')", "default='run1')");
    let lines = lines_of(&run(&on), "EA301");
    assert!(lines.contains(&19) && lines.contains(&29), "{lines:?}");
}

/// A mixture-of-experts example that trains for one epoch.
const ONE_EPOCH: &str = "import torch
import torchvision
from moe import MoE

trainloader = torch.utils.data.DataLoader(trainset, batch_size=64, shuffle=True, num_workers=2)
device = torch.device('cuda')
net = MoE(input_size=3072, output_size=10, num_experts=10).to(device)
optimizer = torch.optim.SGD(net.parameters(), lr=0.001)
for epoch in range(1):
    for inputs, labels in trainloader:
        outputs = net(inputs.to(device).view(inputs.shape[0], -1))
        loss = torch.nn.functional.cross_entropy(outputs, labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) for epoch in range(1):   <- one pass: no workers restarted
#[test]
fn an_epoch_loop_over_range_one_restarts_nothing() {
    assert!(lines_of(&run(ONE_EPOCH), "EA103").is_empty());
    let epochs = ONE_EPOCH.replace("range(1)", "range(2)");
    assert_eq!(lines_of(&run(&epochs), "EA103"), vec![5]);
    let named = ONE_EPOCH
        .replace("range(1)", "range(EPOCHS)")
        .replace("import torch\n", "import torch\nEPOCHS = 1\n");
    assert!(lines_of(&run(&named), "EA103").is_empty());
}

/// lucidrains' enwik8 example: the loader is wrapped in a generator and read with `next`.
const CYCLED: &str = "import torch
from torch.utils.data import DataLoader
from performer_pytorch import PerformerLM

BATCH_SIZE = 4

def cycle(loader):
    while True:
        for data in loader:
            yield data

model = PerformerLM(num_tokens=256, dim=512, depth=6, max_seq_len=1024).cuda()
train_loader = cycle(DataLoader(train_dataset, batch_size=BATCH_SIZE))
val_loader = cycle(DataLoader(val_dataset, batch_size=BATCH_SIZE))
optim = torch.optim.Adam(model.parameters(), lr=1e-4)
for i in range(100000):
    model.train()
    loss = model(next(train_loader))
    loss.backward()
    optim.step()
    optim.zero_grad()
";

// Ex) train_loader = cycle(DataLoader(train_dataset, batch_size=4))
#[test]
fn a_small_batch_of_a_wrapped_training_loader_is_reported() {
    assert_eq!(lines_of(&run(CYCLED), "EA702"), vec![13]);
}

/// Mamba pre-training with its settings in a class defined in the function.
const LOCAL_CLASS: &str = "import torch
from torch.utils.data import DataLoader
from mamba_ssm import MambaLMHeadModel

def main():
    class Args:
        lr = 1e-3
        train_batch_size = 8

    model = MambaLMHeadModel(config).to('cuda')
    train_dataloader = DataLoader(train_dataset, batch_size=Args.train_batch_size, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=Args.lr)
    for epoch in range(3):
        for batch in train_dataloader:
            loss = model(batch.to('cuda')).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

main()
";

// Ex) def main(): class Args: train_batch_size = 8 ... DataLoader(ds, batch_size=Args.train_batch_size)
#[test]
fn a_field_of_a_class_defined_in_a_function_is_read() {
    assert_eq!(lines_of(&run(LOCAL_CLASS), "EA702"), vec![11]);
    // a value a method assigns is no class field
    let method = LOCAL_CLASS.replace(
        "        train_batch_size = 8\n",
        "        def __init__(self):\n            self.train_batch_size = 8\n",
    );
    assert!(lines_of(&run(&method), "EA702").is_empty());
}

/// A VAE-based VQA model whose optimizers take the model's own parameter groups.
const OWN_PARAMETER_GROUPS: &str = "import torch
from models import VQA

vqa = VQA(vocab_size, 20, 512)
vqa.cuda()
gen_optimizer = torch.optim.Adam(vqa.generator_parameters(), lr=1e-3)
info_optimizer = torch.optim.Adam(vqa.info_parameters(), lr=1e-3)
for epoch in range(20):
    for images, questions in data_loader:
        loss = vqa(images.cuda(), questions.cuda())
        gen_optimizer.zero_grad()
        loss.backward()
        gen_optimizer.step()
";

// Ex) torch.optim.Adam(vqa.generator_parameters())   <- vqa is the trained model
#[test]
fn a_models_own_parameter_group_names_the_trained_model() {
    assert_eq!(lines_of(&run(OWN_PARAMETER_GROUPS), "EA203"), vec![5]);
}

/// DBNet training that moves its target dict item by item.
const ITEMS_MOVED: &str = "import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
model = DBNet().to(device)
optimizer = torch.optim.Adam(model.parameters())
train_loader = DataLoader(train_set, batch_size=16, num_workers=4, pin_memory=True, persistent_workers=True)
for epoch in range(100):
    for images, targets in train_loader:
        images = images.to(device, non_blocking=True)
        for k, v in targets.items():
            targets[k] = v.to(device)
        loss = model(images, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        gt = [t.cpu().numpy() for t in targets['boxes']]
";

// Ex) for k, v in targets.items(): targets[k] = v.to(device)   <- a pinned part, copied blocking
#[test]
fn a_batch_dict_moved_item_by_item_is_a_pinned_copy_and_then_on_the_device() {
    let a = run(ITEMS_MOVED);
    assert_eq!(lines_of(&a, "EA303"), vec![12], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA301"), vec![17], "{:?}", a.findings);
    // a dict the loop does not take from the batch is not its part
    let other = ITEMS_MOVED.replace("targets.items()", "extras.items()");
    assert!(!lines_of(&run(&other), "EA303").contains(&12));
}

/// SocialVAE's driver: `--train` and `--test` default to empty lists, so nothing runs.
const EMPTY_LIST_SWITCH: &str = "import argparse
import torch
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument('--train', nargs='+', default=[])
settings = parser.parse_args()
if __name__ == '__main__':
    model = Net().cuda()
    optimizer = torch.optim.Adam(model.parameters())
    if settings.train:
        train_data = DataLoader(train_set, batch_size=64)
        for epoch in range(10):
            for x, y in train_data:
                loss = model(x.cuda(), y.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
";

// Ex) parser.add_argument('--train', nargs='+', default=[]) ... if settings.train:
#[test]
fn an_option_defaulting_to_an_empty_list_is_off() {
    let a = run(EMPTY_LIST_SWITCH);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    let given = EMPTY_LIST_SWITCH.replace("default=[]", "default=['eth']");
    assert_eq!(lines_of(&run(&given), "EA101"), vec![12]);
}

/// A latency benchmark timed with CUDA events.
const EVENT_TIMING: &str = "import torch

model = resnet18().cuda().eval()
latencies = []
with torch.no_grad():
    for x, _ in loader:
        x = x.cuda(non_blocking=True)
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        out = model(x)
        end.record()
        torch.cuda.synchronize()
        latencies.append(start.elapsed_time(end))
        torch.cuda.synchronize()
        preds.append(out.argmax(1))
";

// Ex) end.record(); torch.cuda.synchronize(); latencies.append(start.elapsed_time(end))
#[test]
fn a_synchronize_around_cuda_event_timing_is_measurement() {
    assert_eq!(lines_of(&run(EVENT_TIMING), "EA302"), vec![16]);
}

/// An FSDP script that steps its optimizer once more after each training pass.
const STEP_PER_PASS: &str = "import torch
from torch.utils.data import DataLoader

def train(model, rank, train_loader, optimizer, epoch):
    model.train()
    ddp_loss = torch.zeros(2).to(rank)
    for data, target in train_loader:
        data, target = data.to(rank), target.to(rank)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()
        ddp_loss[0] += loss.item()

def main(rank):
    model = ViT().to(rank)
    optimizer = torch.optim.Adam(model.parameters())
    train_loader = DataLoader(train_set, batch_size=64, num_workers=2, pin_memory=True)
    for epoch in range(1, 11):
        train(model, rank, train_loader, optimizer, epoch)
        optimizer.step()

main(0)
";

// Ex) for epoch in ...: train(model, rank, loader, optimizer, epoch); optimizer.step()
#[test]
fn an_optimizer_step_once_per_training_pass_is_no_step_loop() {
    let a = run(STEP_PER_PASS);
    assert!(lines_of(&a, "EA304").is_empty(), "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA201"), vec![7], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA103"), vec![18], "{:?}", a.findings);
}

/// Social GAN: the discriminator and generator steps alternate, each in a helper.
const GAN_STEPS: &str = "import torch

def discriminator_step(batch, generator, discriminator, optimizer_d):
    batch = [t.cuda() for t in batch]
    obs, gt = batch
    losses = {}
    loss = discriminator(obs, generator(obs)).mean()
    losses['D_total_loss'] = loss.item()
    optimizer_d.zero_grad()
    loss.backward()
    optimizer_d.step()
    return losses

def generator_step(batch, generator, discriminator, optimizer_g):
    batch = [t.cuda() for t in batch]
    obs, gt = batch
    loss = (generator(obs) - gt).pow(2).mean()
    optimizer_g.zero_grad()
    loss.backward()
    optimizer_g.step()
    return {'G_total_loss': loss.item()}

generator = TrajectoryGenerator().cuda()
discriminator = TrajectoryDiscriminator().cuda()
optimizer_g = torch.optim.Adam(generator.parameters())
optimizer_d = torch.optim.Adam(discriminator.parameters())
for epoch in range(200):
    d_steps_left, g_steps_left = 2, 1
    for batch in train_loader:
        if d_steps_left > 0:
            losses_d = discriminator_step(batch, generator, discriminator, optimizer_d)
            d_steps_left -= 1
        elif g_steps_left > 0:
            losses_g = generator_step(batch, generator, discriminator, optimizer_g)
            g_steps_left -= 1
";

// Ex) if d_steps_left > 0: losses_d = discriminator_step(...)  <- its `.item()` runs on its steps
#[test]
fn a_training_step_helper_chosen_by_a_branch_reads_every_step_it_runs() {
    assert_eq!(lines_of(&run(GAN_STEPS), "EA301"), vec![8, 21]);
    // a helper that does not train, called under such a branch, is not known to run every step
    let metric = GAN_STEPS.replace("    loss.backward()\n    optimizer_g.step()\n", "");
    assert_eq!(lines_of(&run(&metric), "EA301"), vec![8]);
}

/// TUTR: a random scale built on the host, then moved, every step.
const SCALED_CTOR: &str = "import torch

model = TrajectoryTransformer().cuda()
optimizer = torch.optim.AdamW(model.parameters())
for epoch in range(100):
    for ped, neis, mask in train_loader:
        ped = ped.cuda()
        scale = torch.randn(ped.shape[0]) * 0.05 + 1
        scale = scale.cuda()
        loss = model(ped * scale.reshape(-1, 1, 1)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) scale = torch.randn(n) * 0.05 + 1; scale = scale.cuda()
#[test]
fn a_constructor_scaled_then_moved_is_built_on_the_host() {
    assert_eq!(lines_of(&run(SCALED_CTOR), "EA304"), vec![8]);
    // host data scaled is the data's own copy
    let data = SCALED_CTOR.replace("torch.randn(ped.shape[0])", "torch.tensor(scales)");
    assert!(lines_of(&run(&data), "EA304").is_empty());
}

/// 4D occupancy forecasting: the dataset is chosen by a case-folded option.
const FOLDED_SWITCH: &str = "import argparse
import torch
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument('--dataset', type=str, default='nuscenes')
args = parser.parse_args()
if args.dataset.lower() == 'kitti':
    train_loader = DataLoader(kitti, batch_size=16, num_workers=4)
elif args.dataset.lower() == 'nuscenes':
    train_loader = DataLoader(nusc, batch_size=16, num_workers=4)
model = OccupancyForecaster().cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(15):
    for batch in train_loader:
        loss = model(batch.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) if args.dataset.lower() == 'kitti':   <- `default='nuscenes'`: off as shipped
#[test]
fn a_case_folded_option_is_a_switch() {
    assert_eq!(lines_of(&run(FOLDED_SWITCH), "EA102"), vec![11]);
}

/// Social-Implicit: an imported model cast to float64.
const FLOAT64: &str = "import torch
from model import SocialImplicit

model = SocialImplicit(spatial_input=2, temporal_input=8).cuda().double()
optimizer = torch.optim.AdamW(model.parameters())
for epoch in range(100):
    for v_obs, v_tr in loader:
        loss = model(v_obs.cuda().double(), v_tr.cuda().double()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = SocialImplicit(...).cuda().double()   <- fp64: no TF32, no autocast to suggest
#[test]
fn an_imported_model_cast_to_float64_is_fp64() {
    let a = run(FLOAT64);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    let single = FLOAT64.replace(".cuda().double()", ".cuda()");
    assert_eq!(lines_of(&run(&single), "EA201"), vec![7]);
}

/// A DDP demo: a 10x10 Linear model wrapped for several GPUs, over Gloo with `.to(rank)`.
const WRAPPED_TINY: &str = "import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

class SimpleModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(10, 10)

    def forward(self, x):
        return self.linear(x)

def main(rank, world_size):
    dist.init_process_group('gloo', rank=rank, world_size=world_size)
    train_loader = DataLoader(dataset, batch_size=32, num_workers=2)
    model = SimpleModel().to(rank)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(10):
        for data, target in train_loader:
            data, target = data.to(rank), target.to(rank)
            loss = torch.nn.functional.mse_loss(model(data), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
";

// Ex) model = DDP(SimpleModel().to(rank))   <- still 110 parameters; `.to(rank)` is a GPU
#[test]
fn a_model_wrapped_for_several_gpus_keeps_its_size_and_an_ordinal_is_cuda() {
    let a = run(WRAPPED_TINY);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    // the file runs on CUDA although the process group uses Gloo
    assert_eq!(lines_of(&a, "EA103"), vec![15], "{:?}", a.findings);
    let big = WRAPPED_TINY.replace("Linear(10, 10)", "Linear(4096, 4096)");
    assert_eq!(lines_of(&run(&big), "EA201"), vec![20]);
}

/// A Lightning speech recognizer: the module is loaded only when asked, and a second Trainer
/// replaces the first before `fit`.
const LIGHTNING_REBOUND: &str = "import argparse
from pytorch_lightning import Trainer
from model import SpeechRecognition, SpeechModule

parser = argparse.ArgumentParser()
parser.add_argument('--load_model_from', default=None, type=str)
parser.add_argument('--epochs', default=10, type=int)
args = parser.parse_args()
model = SpeechRecognition()
if args.load_model_from:
    speech_module = SpeechModule.load_from_checkpoint(args.load_model_from, model, args)
else:
    speech_module = SpeechModule(model, args)
trainer = Trainer(logger=logger)
trainer = Trainer(max_epochs=args.epochs, gpus=1, gradient_clip_val=1.0)
trainer.fit(speech_module)
";

// Ex) trainer = Trainer(logger=logger); trainer = Trainer(max_epochs=..., gpus=1); trainer.fit(m)
#[test]
fn the_anchors_are_the_module_built_as_shipped_and_the_trainer_that_fits() {
    let a = run(LIGHTNING_REBOUND);
    assert_eq!(lines_of(&a, "EA203"), vec![13], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA201"), vec![15], "{:?}", a.findings);
}

/// I3D: the validation pass lives in `do_val`, put in eval mode by its caller.
const DO_VAL: &str = "import torch

def do_val(model, val_dataloader, device):
    results = {}
    for iters, data in enumerate(val_dataloader):
        inputs, labels = data
        logits = model(inputs.to(device))
        results[iters] = logits.mean(dim=-1)
    return results

model = InceptionI3d(157).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for steps, (x, y) in enumerate(train_loader):
    loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if steps % 1000 == 0:
        model.eval()
        do_val(model, val_loader, 'cuda')
        model.train()
";

// Ex) def do_val(model, val_dataloader, device): for iters, data in enumerate(val_dataloader): ...
#[test]
fn a_function_named_val_is_an_evaluation() {
    assert_eq!(lines_of(&run(DO_VAL), "EA401"), vec![5]);
    // `val` inside another word is not one (`interval_stats`)
    let other = DO_VAL.replace("do_val", "interval_stats");
    assert!(lines_of(&run(&other), "EA401").is_empty());
}

/// ELECTRA pretraining: autocast and the scaler are there, switched off by default.
const AUTOCAST_OFF: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--amp', action='store_true')
args = parser.parse_args()
model = Electra().cuda()
optimizer = torch.optim.AdamW(model.parameters())
scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
for step, batch in enumerate(loader):
    with torch.cuda.amp.autocast(enabled=args.amp):
        loss = model(batch.cuda())
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
";

// Ex) with torch.cuda.amp.autocast(enabled=args.amp):   <- `--amp` off: fp32 as shipped
#[test]
fn code_under_an_autocast_disabled_as_shipped_runs_in_fp32() {
    assert_eq!(lines_of(&run(AUTOCAST_OFF), "EA201"), vec![10]);
    let on = AUTOCAST_OFF.replace("action='store_true'", "action='store_false'");
    assert!(lines_of(&run(&on), "EA201").is_empty());
}

/// Glow training that announces the end of warm-up once.
const ONCE_FLAG: &str = "import torch

model = Glow().cuda()
opt = torch.optim.Adam(model.parameters())
warmup_completed = False
for epoch in range(100):
    for global_step, x in enumerate(loader):
        nll = model(x.cuda())
        opt.zero_grad()
        nll.backward()
        opt.step()
        if global_step > 500:
            if not warmup_completed:
                print('Warm up Completed')
            warmup_completed = True
";

// Ex) if not warmup_completed: print("Warm up Completed") ... warmup_completed = True
#[test]
fn a_branch_whose_flag_is_set_right_after_runs_once() {
    assert!(lines_of(&run(ONCE_FLAG), "EA504").is_empty());
    let never_set = ONCE_FLAG.replace("            warmup_completed = True\n", "");
    assert_eq!(lines_of(&run(&never_set), "EA504"), vec![14]);
}

/// A PixelCNN prior: workers from an option defaulting to the cores less one; a sampling
/// helper nothing calls builds its own copy of the model.
const CORES_LESS_ONE: &str = "import argparse
import multiprocessing as mp
import torch
from torch.utils.data import DataLoader

def sample(args):
    prior = GatedPixelCNN(args.k, 64).to(args.device)
    return prior.generate()

def main(args):
    train_loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=args.num_workers, pin_memory=True)
    prior = GatedPixelCNN(args.k, 64).to(args.device)
    optimizer = torch.optim.Adam(prior.parameters(), lr=3e-4)
    for epoch in range(100):
        for images, labels in train_loader:
            loss = prior(images.to(args.device)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--num-workers', type=int, default=mp.cpu_count() - 1)
    parser.add_argument('--device', type=str, default='cuda')
    parser.add_argument('--k', type=int, default=512)
    main(parser.parse_args())
";

// Ex) parser.add_argument('--num-workers', type=int, default=mp.cpu_count() - 1)
#[test]
fn an_option_defaulting_to_a_share_of_the_cores_starts_workers_and_dead_copies_anchor_nothing() {
    let a = run(CORES_LESS_ONE);
    assert_eq!(lines_of(&a, "EA103"), vec![11], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA203"), vec![12], "{:?}", a.findings);
}

/// scBERT: each item is moved to the GPU by the dataset itself.
const GETITEM_ON_DEVICE: &str = "import torch
from torch.utils.data import Dataset, DataLoader

device = torch.device('cuda')

class SCDataset(Dataset):
    def __init__(self, data, label):
        self.data = data
        self.label = label

    def __getitem__(self, index):
        seq = torch.from_numpy(self.data[index].toarray()[0]).long()
        seq = torch.cat((seq, torch.tensor([0]))).to(device)
        return seq, self.label[index]

    def __len__(self):
        return self.data.shape[0]

model = PerformerLM(num_tokens=7, dim=200, depth=6, heads=10).to(device)
optimizer = torch.optim.Adam(model.parameters())
train_loader = DataLoader(SCDataset(data_train, label_train), batch_size=32)
for epoch in range(100):
    for data, labels in train_loader:
        loss = torch.nn.functional.cross_entropy(model(data), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) def __getitem__(self, i): ...; seq = seq.to(device); return seq, label   <- already on the GPU
#[test]
fn a_dataset_that_moves_its_items_to_the_gpu_needs_no_workers_or_pinning() {
    let a = run(GETITEM_ON_DEVICE);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    let host = GETITEM_ON_DEVICE.replace("torch.tensor([0]))).to(device)", "torch.tensor([0])))");
    assert_eq!(lines_of(&run(&host), "EA101"), vec![21]);
}

/// ProstT5 embedding: half precision is chosen by an integer option, off by default.
const CONDITIONAL_VALUE: &str = "import argparse
import torch
from transformers import T5EncoderModel

def get_embeddings(seqs, half_precision):
    model = T5EncoderModel.from_pretrained('Rostlab/ProstT5').to('cuda')
    if half_precision:
        model = model.half()
    model = model.eval()
    with torch.no_grad():
        for ids in seqs:
            emb = model(ids.to('cuda')).last_hidden_state
            torch.save(emb, 'emb.pt')

parser = argparse.ArgumentParser()
parser.add_argument('--half', type=int, default=0)
args = parser.parse_args()
half_precision = False if int(args.half) == 0 else True
get_embeddings(seqs, half_precision=half_precision)
";

// Ex) half_precision = False if int(args.half) == 0 else True   <- False as shipped
#[test]
fn a_conditional_value_takes_the_branch_its_test_takes_as_shipped() {
    assert_eq!(lines_of(&run(CONDITIONAL_VALUE), "EA202"), vec![6]);
    let half = CONDITIONAL_VALUE.replace("default=0)", "default=1)");
    assert!(lines_of(&run(&half), "EA202").is_empty());
}

/// A Lightning Trainer that only runs a validation pass to pre-encode a dataset.
const VALIDATE_ONLY: &str = "import argparse
import pytorch_lightning as pl

parser = argparse.ArgumentParser()
parser.add_argument('--model-half', action='store_true')
args = parser.parse_args()
pl_module = PreEncodedLatentsInferenceWrapper(model)
trainer = pl.Trainer(accelerator='gpu', devices='auto', precision='16-true' if args.model_half else '32')
trainer.validate(pl_module, data_loader)
";

// Ex) trainer = pl.Trainer(precision='32'); trainer.validate(module, loader)   <- no training
#[test]
fn a_lightning_trainer_that_never_fits_trains_nothing() {
    assert!(lines_of(&run(VALIDATE_ONLY), "EA201").is_empty());
    let fits = VALIDATE_ONLY.replace("trainer.validate(", "trainer.fit(");
    assert_eq!(lines_of(&run(&fits), "EA201"), vec![8]);
}

/// Textual inversion (diffusers): only the text encoder's embeddings train; the frozen U-Net is
/// moved and cast to a dtype chosen by the mixed-precision setting, off by default.
const TEXTUAL_INVERSION: &str = "import argparse
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel
from transformers import CLIPTextModel

parser = argparse.ArgumentParser()
parser.add_argument('--mixed_precision', type=str, default='no', choices=['no', 'fp16', 'bf16'])
args = parser.parse_args()
accelerator = Accelerator(mixed_precision=args.mixed_precision)
text_encoder = CLIPTextModel.from_pretrained('runwayml/stable-diffusion-v1-5', subfolder='text_encoder')
unet = UNet2DConditionModel.from_pretrained('runwayml/stable-diffusion-v1-5', subfolder='unet')
optimizer = torch.optim.AdamW(text_encoder.get_input_embeddings().parameters(), lr=5e-4)
text_encoder, optimizer, train_dataloader = accelerator.prepare(text_encoder, optimizer, train_dataloader)
weight_dtype = torch.float32
if accelerator.mixed_precision == 'fp16':
    weight_dtype = torch.float16
elif accelerator.mixed_precision == 'bf16':
    weight_dtype = torch.bfloat16
unet.to(accelerator.device, dtype=weight_dtype)
for epoch in range(100):
    for step, batch in enumerate(train_dataloader):
        hidden = text_encoder(batch['input_ids'])[0]
        loss = unet(batch['latents'], batch['t'], hidden).sample.pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
";

// Ex) AdamW(text_encoder.get_input_embeddings().parameters()); if mixed_precision == 'fp16': weight_dtype = ...
#[test]
fn a_part_a_model_hands_out_trains_that_model_and_dead_dtype_bindings_bind_nothing() {
    let a = run(TEXTUAL_INVERSION);
    // anchored where the trained text encoder is built, not at the frozen U-Net's move
    assert_eq!(lines_of(&a, "EA203"), vec![11], "{:?}", a.findings);
    // `weight_dtype` stays float32 as shipped: fp32 training
    assert_eq!(lines_of(&a, "EA201"), vec![22], "{:?}", a.findings);
    let fp16 = TEXTUAL_INVERSION.replace("default='no'", "default='fp16'");
    assert!(lines_of(&run(&fp16), "EA201").is_empty());
}

/// LRW lip reading: the step loop draws each batch with `next` from the pinned loader.
const NEXT_DRAWN: &str = "import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
train_loader = DataLoader(train_data, shuffle=True, batch_size=64, num_workers=8, pin_memory=True, persistent_workers=True)
model = LipNet().to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(30):
    loader = iter(train_loader)
    for step in range(1, len(train_loader) + 1):
        batch = next(loader)
        frames = batch['frames'].to(device)
        labels = batch['label'].to(device)
        loss = torch.nn.functional.cross_entropy(model(frames), labels.squeeze(1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) batch = next(loader); frames = batch['frames'].to(device)   <- a pinned batch, copied blocking
#[test]
fn a_batch_drawn_with_next_from_a_pinned_loader_is_a_pinned_batch() {
    assert_eq!(lines_of(&run(NEXT_DRAWN), "EA303"), vec![12, 13]);
    // not from a loader: an iterator over something else draws no pinned batch
    let other = NEXT_DRAWN.replace("loader = iter(train_loader)", "loader = iter(samples)");
    assert!(lines_of(&run(&other), "EA303").is_empty());
}

/// HTS-AT on Lightning 1.x: `accelerator` names the distributed strategy, `gpus=` the device.
const LIGHTNING_ONE: &str = "import torch
import pytorch_lightning as pl
from sed_model import SEDWrapper

device_num = torch.cuda.device_count()
model = SEDWrapper(sed_model=HTSAT_Swin_Transformer(), config=config, dataset=dataset)
trainer = pl.Trainer(
    gpus=device_num,
    max_epochs=100,
    accelerator='ddp' if device_num > 1 else None,
)
trainer.fit(model, audioset_data)
";

// Ex) pl.Trainer(gpus=device_num, accelerator="ddp" if device_num > 1 else None)   <- on GPUs
#[test]
fn a_lightning_one_strategy_named_as_accelerator_leaves_the_gpus_to_decide() {
    assert_eq!(lines_of(&run(LIGHTNING_ONE), "EA203"), vec![6]);
    let cpu = LIGHTNING_ONE.replace("'ddp' if device_num > 1 else None", "'cpu'");
    assert!(lines_of(&run(&cpu), "EA203").is_empty());
}

/// An OWL-ViT fine-tune binding each loader to two names at once.
const CHAINED: &str = "import torch
from torch.utils.data import DataLoader

def main():
    dataloader = test_dataloader = DataLoader(dataset, batch_size=4, shuffle=True, num_workers=8)
    model = load_owlvit().cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    for epoch in range(20):
        for images, targets in dataloader:
            loss = model(images.cuda(), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

main()
";

// Ex) dataloader = test_dataloader = DataLoader(...)   <- both names hold the loader
#[test]
fn every_name_of_a_chained_assignment_holds_the_value() {
    assert_eq!(lines_of(&run(CHAINED), "EA103"), vec![5]);
}

/// YOLO-World's demo: a helper of the file runs MMEngine's `test_step`, then decodes the
/// image again to draw on it.
const TEST_STEP: &str = "import os
import cv2
import torch

def inference_detector(model, image_path, texts, test_pipeline):
    data_info = test_pipeline(dict(img_id=0, img_path=image_path, texts=texts))
    data_batch = dict(inputs=data_info['inputs'].unsqueeze(0), data_samples=[data_info['data_samples']])
    with torch.no_grad():
        output = model.test_step(data_batch)[0]
    image = cv2.imread(image_path)
    cv2.imwrite(os.path.join('out', os.path.basename(image_path)), image)

model = init_detector(config, checkpoint, device='cuda:0')
for image_path in [os.path.join(folder, f) for f in os.listdir(folder)]:
    inference_detector(model, image_path, texts, test_pipeline)
";

// Ex) output = model.test_step(data_batch)[0]   <- MMEngine's forward
#[test]
fn mmengine_test_step_runs_the_model() {
    let a = run(TEST_STEP);
    assert_eq!(lines_of(&a, "EA502"), vec![10], "{:?}", a.findings);
    assert!(lines_of(&a, "EA602").is_empty(), "{:?}", a.findings);
}

/// CLAP zero-shot classification: the model method takes the processor's dict, moved to the GPU.
const SPLAT_INPUTS: &str = "import torch
import pandas as pd
from transformers import ClapModel, ClapProcessor

DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'
processor = ClapProcessor.from_pretrained('laion/clap-htsat-unfused')
model = ClapModel.from_pretrained('laion/clap-htsat-unfused').to(DEVICE)
meta = pd.read_csv('esc50.csv')
predicted = []
for _, row in meta.iterrows():
    inputs = processor(audios=[load_audio(row['filename'])], return_tensors='pt', sampling_rate=48000).to(DEVICE)
    with torch.no_grad():
        audio_embed = model.get_audio_features(**inputs)
        predicted.append(labels[(audio_embed @ text_embeds.T).argmax().item()])
";

// Ex) audio_embed = model.get_audio_features(**inputs)   <- the model runs once per row
#[test]
fn a_model_method_given_an_unpacked_batch_runs_the_model() {
    let a = run(SPLAT_INPUTS);
    assert_eq!(lines_of(&a, "EA301"), vec![14], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA202"), vec![7], "{:?}", a.findings);
    assert!(lines_of(&a, "EA601").is_empty(), "{:?}", a.findings);
}

/// Grounded-SAM over a folder, on the CPU by default, clearing CUDA's cache per image.
const CPU_EMPTY_CACHE: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--device', type=str, default='cpu')
args = parser.parse_args()
device = args.device
model = load_model(config_file, checkpoint, device=device)
for img in images:
    boxes = model(torch.Tensor(img).to(device))
    masks = predictor.predict_torch(boxes.to(device))
    torch.cuda.empty_cache()
";

// Ex) --device defaults to 'cpu' ... torch.cuda.empty_cache()   <- a no-op
#[test]
fn cuda_housekeeping_in_a_file_that_runs_on_the_cpu_is_no_sync() {
    assert!(lines_of(&run(CPU_EMPTY_CACHE), "EA302").is_empty());
    let gpu = CPU_EMPTY_CACHE.replace("default='cpu'", "default='cuda'");
    assert_eq!(lines_of(&run(&gpu), "EA302"), vec![12]);
}

/// OWL-ViT fine-tune that builds a GradScaler and never uses it.
const UNUSED_SCALER: &str = "import torch

model = OwlViTForObjectDetection.from_pretrained('google/owlvit-base-patch32').cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
scaler = torch.cuda.amp.GradScaler()
for epoch in range(10):
    for images, targets in loader:
        loss = model(images.cuda(), targets).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) scaler = torch.cuda.amp.GradScaler()  # and `scaler` never used: fp32 training
#[test]
fn a_grad_scaler_never_used_scales_nothing() {
    assert_eq!(lines_of(&run(UNUSED_SCALER), "EA201"), vec![7]);
    let used = UNUSED_SCALER
        .replace("        loss.backward()\n        optimizer.step()\n", "        scaler.scale(loss).backward()\n        scaler.step(optimizer)\n        scaler.update()\n");
    assert!(lines_of(&run(&used), "EA201").is_empty());
}

/// LAVT evaluation: precision at five IoU thresholds written out.
const FEW_THRESHOLDS: &str = "import numpy as np
import torch

eval_seg_iou_list = [.5, .6, .7, .8, .9]
seg_correct = np.zeros(len(eval_seg_iou_list), dtype=np.int32)
for n_eval_iou in range(len(eval_seg_iou_list)):
    seg_correct[n_eval_iou] += (iou >= eval_seg_iou_list[n_eval_iou])
";

// Ex) for n in range(len(eval_seg_iou_list)):   <- five thresholds written out
#[test]
fn a_range_over_the_length_of_a_short_list_written_out_is_a_few_iterations() {
    assert!(lines_of(&run(FEW_THRESHOLDS), "EA603").is_empty());
    let many = FEW_THRESHOLDS.replace("[.5, .6, .7, .8, .9]", "np.linspace(0, 1, 1000)");
    assert_eq!(lines_of(&run(&many), "EA603"), vec![6]);
}

/// APPS generation: the model is loaded with `device_map="auto"` unless a checkpoint is given.
const DEVICE_MAP: &str = "import argparse
import torch
from transformers import AutoModelForCausalLM, GPT2LMHeadModel

parser = argparse.ArgumentParser()
parser.add_argument('--load', default='', type=str)
args = parser.parse_args()
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
if args.load:
    model = GPT2LMHeadModel.from_pretrained(args.load)
    model.to(device)
else:
    model = AutoModelForCausalLM.from_pretrained('gpt2', device_map='auto').eval()
for problem in problems:
    ids = tokenizer(problem, return_tensors='pt').input_ids.to(device)
    out = model.generate(ids, max_new_tokens=256)
    print(tokenizer.decode(out[0]))
";

// Ex) model = AutoModelForCausalLM.from_pretrained(name, device_map='auto').eval()
#[test]
fn a_model_loaded_with_a_device_map_is_placed_where_it_is_loaded() {
    assert_eq!(lines_of(&run(DEVICE_MAP), "EA202"), vec![13]);
}
