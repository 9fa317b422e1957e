//! The eleventh accuracy round: shapes from the blind waves g179– that the engine read wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A signal regressor whose collate stacks the samples and moves the batch to the GPU itself.
const COLLATE_ON_GPU: &str = "import torch
from torch.utils.data import DataLoader
from data import SignalDataset
from model import ResNet1d

device = torch.device('cuda')

def collate(batch):
    xs = torch.stack([x for x, _ in batch])
    ys = torch.stack([y for _, y in batch])
    return xs.to(device), ys.to(device)

train_loader = DataLoader(SignalDataset('train.h5'), shuffle=True, batch_size=64, collate_fn=collate)
model = ResNet1d(12, 512).to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for x, y in train_loader:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) def collate(batch): ...; return xs.to(device), ys.to(device)
#[test]
fn a_collate_that_builds_its_batch_on_the_gpu_needs_no_workers_or_pinning() {
    let a = run(COLLATE_ON_GPU);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    // the same collate building CPU tensors leaves the loading to the training process
    let cpu = COLLATE_ON_GPU.replace("xs.to(device), ys.to(device)", "xs, ys");
    let a = run(&cpu);
    assert_eq!(lines_of(&a, "EA101"), vec![13]);
    assert_eq!(lines_of(&a, "EA102"), vec![13]);
}

/// A character-level LSTM script whose training runs only with `--train`, off by default: as
/// shipped it loads its weights and samples text.
const TRAIN_SWITCHED_OFF: &str = "import argparse
import torch
import torch.nn.functional as F
from model import CharLSTM

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--train', type=bool, default=False)
    args = parser.parse_args()
    train_loader = torch.utils.data.DataLoader(CharDataset('input.txt'), batch_size=64)
    test_loader = torch.utils.data.DataLoader(CharDataset('test.txt'), batch_size=64)
    model = CharLSTM(65, 512).to('cuda')
    optimizer = torch.optim.Adam(model.parameters())

    @torch.inference_mode()
    def evaluate(loader):
        losses = []
        for x, y in loader:
            losses.append(F.cross_entropy(model(x.cuda()), y.cuda()).item())
        return sum(losses) / len(losses)

    def train():
        for epoch in range(10):
            for x, y in train_loader:
                loss = F.cross_entropy(model(x.cuda()), y.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                print(loss.item(), evaluate(test_loader))

    if args.train:
        train()

    model.load_state_dict(torch.load('pretrained.pth'))
";

// Ex) if __name__ == '__main__': ... def train(): ... if args.train: train()
#[test]
fn functions_a_script_calls_only_behind_a_switch_that_is_off_do_not_run() {
    let a = run(TRAIN_SWITCHED_OFF);
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    // with the switch on by default, training, its evaluation and both loaders run
    let on = run(&TRAIN_SWITCHED_OFF.replace("default=False", "default=True"));
    for rule in ["EA101", "EA201", "EA301", "EA504"] {
        assert!(!lines_of(&on, rule).is_empty(), "{rule}: {:?}", on.findings);
    }
    assert!(lines_of(&on, "EA301").contains(&19), "{:?}", on.findings);
}

/// A Hugging Face Trainer script that moves the model to the GPU itself before configuring
/// the Trainer, and back to the CPU after training to export it.
const HF_PLACED: &str = "import torch
from transformers import T5ForConditionalGeneration, Trainer, TrainingArguments

device = torch.device('cuda')
model = T5ForConditionalGeneration.from_pretrained('t5-large').to(device)
args = TrainingArguments(output_dir='out', per_device_train_batch_size=8, bf16=False)
trainer = Trainer(model=model, args=args, train_dataset=train_ds)
trainer.train()
model.to('cpu')
model.save_pretrained('export')
";

// Ex) model = T5ForConditionalGeneration.from_pretrained('t5-large').to(device); TrainingArguments(...)
#[test]
fn tf32_advice_for_a_trainer_goes_where_the_script_places_the_model() {
    assert_eq!(lines_of(&run(HF_PLACED), "EA202"), vec![5]);
    // without the script's own placement it goes to `TrainingArguments(`; a move back to the
    // host is no placement
    let unplaced = HF_PLACED.replace(
        ".from_pretrained('t5-large').to(device)",
        ".from_pretrained('t5-large')",
    );
    assert_eq!(lines_of(&run(&unplaced), "EA202"), vec![6]);
}

/// A VQ-VAE code extractor that writes each batch's codes into LMDB, row by row.
const CODES_TO_LMDB: &str = "import pickle
import lmdb
import torch
from vqvae import VQVAE

device = 'cuda'
model = VQVAE().to(device)
model.eval()
env = lmdb.open('codes', map_size=100 * 1024 ** 3)
with env.begin(write=True) as txn, torch.no_grad():
    index = 0
    for img, _, filename in loader:
        img = img.to(device)
        _, _, _, id_t, id_b = model.encode(img)
        id_t = id_t.cpu().numpy()
        id_b = id_b.cpu().numpy()
        for file, top, bottom in zip(filename, id_t, id_b):
            row = (file, top, bottom)
            txn.put(str(index).encode('utf-8'), pickle.dumps(row))
            index += 1
";

/// An embedding job that buffers each batch's features and hands the buffer to a function of
/// the file that writes a shard when it is full.
const FEATURES_TO_SHARDS: &str = "import numpy as np
import torch
from transformers import AutoModel

def flush_if_needed(out_dir, shard, buf, size):
    if len(buf) < size:
        return shard, buf
    np.save(f'{out_dir}/shard{shard}.npy', np.concatenate(buf))
    return shard + 1, []

model = AutoModel.from_pretrained('google/siglip-base-patch16-224').cuda().eval()
buf, shard = [], 0
with torch.no_grad():
    for batch in loader:
        feats = model.get_image_features(pixel_values=batch.cuda())
        feats_np = feats.cpu().half().numpy()
        buf.append(feats_np)
        shard, buf = flush_if_needed('out', shard, buf, 64)
";

// Ex) id_t = id_t.cpu().numpy(); for file, top in zip(filename, id_t): txn.put(key, pickle.dumps(top))
#[test]
fn features_written_to_lmdb_or_a_shard_writer_are_the_loops_product() {
    assert!(lines_of(&run(CODES_TO_LMDB), "EA301").is_empty());
    assert!(lines_of(&run(FEATURES_TO_SHARDS), "EA301").is_empty());
    // read back and only counted, they are host syncs
    let counted = CODES_TO_LMDB.replace(
        "            txn.put(str(index).encode('utf-8'), pickle.dumps(row))\n",
        "",
    );
    assert_eq!(lines_of(&run(&counted), "EA301"), vec![15, 16]);
    let kept = FEATURES_TO_SHARDS.replace(
        "    np.save(f'{out_dir}/shard{shard}.npy', np.concatenate(buf))\n",
        "",
    );
    assert_eq!(lines_of(&run(&kept), "EA301"), vec![15]);
}

/// A click-through-rate trainer whose model comes from another module; only a constant and a
/// keyword mention attention.
const ATTENTION_BY_CONSTANT: &str = "import torch
from din.model import DeepInterestNetwork

ATTENTION_SIZE = 36
device = torch.device('cuda')
model = DeepInterestNetwork(18, ATTENTION_SIZE)
model.to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for users, items, labels, mask in loader:
        out = model(users.to(device), items.to(device), attention_mask=mask.to(device))
        loss = torch.nn.functional.binary_cross_entropy(out, labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) ATTENTION_SIZE = 36; model = DeepInterestNetwork(18, ATTENTION_SIZE)
#[test]
fn a_constant_or_keyword_naming_attention_shows_no_attention_layers() {
    assert!(lines_of(&run(ATTENTION_BY_CONSTANT), "EA202").is_empty());
    // a model the file builds by a transformer family's name does (T5 through its helpers'
    // module)
    let t5 = ATTENTION_BY_CONSTANT
        .replace(
            "from din.model import DeepInterestNetwork",
            "from t5_utils import initialize_model",
        )
        .replace(
            "DeepInterestNetwork(18, ATTENTION_SIZE)",
            "initialize_model(ATTENTION_SIZE)",
        );
    assert_eq!(lines_of(&run(&t5), "EA202"), vec![7]);
    let named = ATTENTION_BY_CONSTANT.replace("DeepInterestNetwork", "DeepInterestTransformer");
    assert_eq!(lines_of(&run(&named), "EA202"), vec![7]);
}

/// A conditional DCGAN whose label tensors are rebuilt only for the loader's last, short batch,
/// and whose guidance sweep samples three strengths after each epoch.
const LAST_BATCH_AND_SWEEP: &str = "import torch
from models import Generator

G = Generator(128).cuda()
opt = torch.optim.Adam(G.parameters())
batch_size = 128
ws_test = [0.0, 0.5, 2.0]
for epoch in range(20):
    for x_, y_ in train_loader:
        mini_batch = x_.size()[0]
        if mini_batch != batch_size:
            y_real_ = torch.ones(mini_batch).cuda()
        if (epoch + 1) % 10 == 0:
            noise = torch.randn(16, 100).cuda()
        loss = G(x_.cuda(), y_.cuda()).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        for w_i, w in enumerate(ws_test):
            z = torch.randn(64, 100).cuda()
            samples = G(z, w)
";

// Ex) if mini_batch != batch_size: y_real_ = torch.ones(mini_batch).cuda()
#[test]
fn tensors_built_for_the_last_batch_every_n_steps_or_per_setting_are_no_waste() {
    assert!(lines_of(&run(LAST_BATCH_AND_SWEEP), "EA304").is_empty());
    // built at every step they are
    let every = LAST_BATCH_AND_SWEEP
        .replace("        if mini_batch != batch_size:\n    ", "    ")
        .replace("ws_test = [0.0, 0.5, 2.0]", "ws_test = list(weights)");
    assert_eq!(lines_of(&run(&every), "EA304"), vec![11, 20]);
}

/// A character model's sampler and a translator's greedy decode, written by hand: each reads
/// its token back to build the next input.
const HAND_DECODE: &str = "import torch
from torch.distributions import Categorical
from model import CharTransformer

device = torch.device('cuda')
model = CharTransformer(65, 512).to(device)
model.eval()

@torch.inference_mode()
def generate_sample(start_idx=0, output_len=100):
    sequence = [start_idx]
    for _ in range(output_len):
        inp = torch.tensor(sequence[-256:], device=device)
        logits = model(inp)[-1]
        idx = Categorical(logits=logits).sample().item()
        sequence.append(idx)
    return sequence

@torch.no_grad()
def greedy_decode(source, max_len):
    memory = model.encode(source)
    decoder_input = torch.full((1, 1), 1, device=device)
    while decoder_input.size(1) < max_len:
        prob = model.decode(memory, decoder_input)[:, -1]
        next_word = prob.argmax(dim=1)
        decoder_input = torch.cat([decoder_input, torch.full((1, 1), next_word.item(), device=device)], dim=1)
    return decoder_input

print(generate_sample())
print(greedy_decode(torch.tensor([[1, 5, 7]], device=device), 50))
";

// Ex) idx = Categorical(logits=logits).sample().item(); sequence.append(idx) ... model(torch.tensor(sequence))
#[test]
fn a_hand_written_decode_reads_each_token_back_by_design() {
    assert!(
        lines_of(&run(HAND_DECODE), "EA301").is_empty(),
        "{:?}",
        run(HAND_DECODE).findings
    );
    // a count read back and only printed is a host sync
    let counted = HAND_DECODE.replace("        sequence.append(idx)\n", "        print(idx)\n");
    assert_eq!(lines_of(&run(&counted), "EA301"), vec![15]);
}

/// A point-cloud classifier that copies its per-step accuracy to the host and sums it there.
const SUM_OF_A_COPY: &str = "import torch
from model import PointNet

classifier = PointNet(40).cuda()
optimizer = torch.optim.Adam(classifier.parameters())
mean_correct = []
for epoch in range(200):
    for points, target in train_loader:
        points, target = points.cuda(), target.cuda()
        pred = classifier(points)
        loss = torch.nn.functional.cross_entropy(pred, target)
        pred_choice = pred.max(1)[1]
        correct = pred_choice.eq(target).cpu().sum()
        mean_correct.append(correct.item() / float(points.size()[0]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) correct = pred_choice.eq(target).cpu().sum(); mean_correct.append(correct.item() / n)
#[test]
fn a_value_summed_after_its_copy_to_the_host_waits_at_the_copy_only() {
    assert_eq!(lines_of(&run(SUM_OF_A_COPY), "EA301"), vec![13]);
    // summed on the device, the `.item()` is the read
    let device = SUM_OF_A_COPY.replace(".eq(target).cpu().sum()", ".eq(target).sum()");
    assert_eq!(lines_of(&run(&device), "EA301"), vec![14]);
}

/// A protein-embedding job that writes each sequence's embedding to a gzipped pickle.
const GZIP_PER_STEP: &str = "import gzip
import pickle
import torch
from transformers import AutoModel

model = AutoModel.from_pretrained('Rostlab/prot_bert').cuda().eval()
with torch.no_grad():
    for identifier, ids in loader:
        emb = model(input_ids=ids.cuda()).last_hidden_state
        with gzip.open(f'emb/{identifier}.pkl.gz', 'wb') as f:
            pickle.dump({'representation': emb.cpu().numpy()}, f)
";

// Ex) with gzip.open(path, 'wb') as f: pickle.dump(obj, f)
#[test]
fn a_write_through_an_opened_handle_is_reported_once_at_the_open() {
    assert_eq!(lines_of(&run(GZIP_PER_STEP), "EA501"), vec![10]);
    // a dump to a file object the loop did not open is its own write
    let plain = GZIP_PER_STEP.replace(
        "with gzip.open(f'emb/{identifier}.pkl.gz', 'wb') as f:\n            ",
        "",
    );
    assert_eq!(lines_of(&run(&plain), "EA501"), vec![10]);
}

/// A prototypical network whose four conv blocks come from a helper in its `__init__`, trained
/// by a function that hands the model back.
const HELPER_BLOCKS: &str = "import torch
import torch.nn as nn

class EmbeddingNetwork(nn.Module):
    def __init__(self):
        super(EmbeddingNetwork, self).__init__()
        def conv_block(in_channels, out_channels):
            return nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 3, padding=1),
                nn.BatchNorm2d(out_channels),
                nn.ReLU(),
                nn.MaxPool2d(2)
            )
        self.encoder = nn.Sequential(conv_block(3, 64), conv_block(64, 64), conv_block(64, 64))
        print(self.encoder)

    def forward(self, x):
        return self.encoder(x).flatten(1)

def train_model(model, optimizer, num_epochs=25):
    for epoch in range(num_epochs):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model

net = EmbeddingNetwork().cuda()
optimizer = torch.optim.Adam(net.parameters())
net = train_model(net, optimizer)
";

// Ex) def conv_block(c_in, c_out): return nn.Sequential(nn.Conv2d(c_in, c_out, 3), ...); conv_block(3, 64)
#[test]
fn layers_a_helper_builds_count_with_the_sizes_each_call_passes() {
    // 3 blocks: 1,728 + 36,864 + 36,864 weights, under a million
    let a = run(HELPER_BLOCKS);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA204").is_empty(), "{:?}", a.findings);
    // the same helper at 512 channels builds millions of parameters
    let wide = HELPER_BLOCKS.replace("conv_block(64, 64)", "conv_block(512, 512)");
    let a = run(&wide);
    assert_eq!(lines_of(&a, "EA201"), vec![22]);
    assert_eq!(lines_of(&a, "EA204"), vec![29]);
}

/// A depth trainer that names its logging cadence before testing it.
const NAMED_CADENCE: &str = "import torch
from models import DispResNet

disp_net = DispResNet(18).cuda()
optimizer = torch.optim.Adam(disp_net.parameters())
n_iter = 0
for epoch in range(200):
    for i, (tgt_img, ref_imgs) in enumerate(train_loader):
        log_losses = i > 0 and n_iter % 100 == 0
        loss = disp_net(tgt_img.cuda()).mean()
        if log_losses:
            writer.add_scalar('total_loss', loss.item(), n_iter)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        n_iter += 1
";

// Ex) log_losses = i > 0 and n_iter % args.print_freq == 0 ... if log_losses: loss.item()
#[test]
fn a_cadence_test_bound_to_a_name_guards_like_the_test_itself() {
    assert!(lines_of(&run(NAMED_CADENCE), "EA301").is_empty());
    // a flag that is not a cadence leaves the read at every step
    let every = NAMED_CADENCE.replace("i > 0 and n_iter % 100 == 0", "i > 0");
    assert_eq!(lines_of(&run(&every), "EA301"), vec![12]);
}

/// A splatting trainer whose per-step report helper logs only when a writer exists.
const REPORT_HELPER: &str = "import torch
from gaussian_renderer import render

def training_report(tb_writer, iteration, loss):
    if tb_writer:
        tb_writer.add_scalar('train_loss_patches/total_loss', loss.item(), iteration)

def number_correct(pred, y):
    return pred.eq(y).sum().item()

tb_writer = prepare_output_and_logger()
for iteration in range(30000):
    image = render(viewpoint_cam, gaussians, pipe, torch.zeros(3, device='cuda'))['render']
    loss = (image - gt_image.cuda()).abs().mean()
    loss.backward()
    training_report(tb_writer, iteration, loss)
    correct = number_correct(image, gt_image)
    optimizer.step()
";

// Ex) def training_report(tb_writer, it, loss): if tb_writer: tb_writer.add_scalar('l', loss.item(), it)
#[test]
fn a_per_step_helper_reads_only_outside_its_own_ifs() {
    // the helper's unconditional read is a host sync; the one under its `if` is not counted
    assert_eq!(lines_of(&run(REPORT_HELPER), "EA301"), vec![9]);
    let unguarded = REPORT_HELPER.replace(
        "    if tb_writer:\n        tb_writer.add_scalar",
        "    tb_writer.add_scalar",
    );
    assert_eq!(lines_of(&run(&unguarded), "EA301"), vec![5, 8]);
}

/// A token-classification script whose `trainer.train()` is commented out.
const TRAINER_NEVER_RUNS: &str = "import torch
from transformers import AutoModelForTokenClassification, Trainer, TrainingArguments

model = AutoModelForTokenClassification.from_pretrained('bert-base-cased', num_labels=9)
args = TrainingArguments(output_dir='out', per_device_train_batch_size=16)
trainer = Trainer(model=model, args=args, train_dataset=train_ds)
#trainer.train()
";

// Ex) trainer = Trainer(model=model, args=args, ...); #trainer.train()
#[test]
fn a_trainer_that_never_runs_is_configured_for_nothing() {
    let a = run(TRAINER_NEVER_RUNS);
    for rule in ["EA201", "EA202", "EA203"] {
        assert!(lines_of(&a, rule).is_empty(), "{rule}: {:?}", a.findings);
    }
    let runs = run(&TRAINER_NEVER_RUNS.replace("#trainer.train()", "trainer.train()"));
    for rule in ["EA201", "EA202", "EA203"] {
        assert_eq!(
            lines_of(&runs, rule),
            vec![5],
            "{rule}: {:?}",
            runs.findings
        );
    }
}

/// A molecular-property regressor: two graph convolutions sized by the dataset's node
/// features, then a small MLP.
const SMALL_GCN: &str = "import torch
import torch.nn as nn
from torch_geometric.datasets import QM9
from torch_geometric.nn import GCNConv, global_mean_pool

dataset = QM9(root='data/QM9')

class GNN(nn.Module):
    def __init__(self, num_node_features):
        super().__init__()
        self.conv1 = GCNConv(num_node_features, 64)
        self.conv2 = GCNConv(64, 64)
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 1)

    def forward(self, x, edge_index, batch):
        x = self.conv2(self.conv1(x, edge_index).relu(), edge_index).relu()
        return self.fc2(self.fc1(global_mean_pool(x, batch)).relu()).squeeze()

device = torch.device('cuda')
model = GNN(dataset.num_features).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
for epoch in range(5):
    for data in train_loader:
        data = data.to(device)
        loss = nn.functional.mse_loss(model(data.x, data.edge_index, data.batch), data.y[:, 0])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) self.conv1 = GCNConv(num_node_features, 64) ... GNN(dataset.num_features)
#[test]
fn graph_convolutions_sized_by_the_dataset_count_as_small() {
    // at most 4,096 node features: about 275k parameters
    let a = run(SMALL_GCN);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
    // 2,048-wide convolutions are millions
    let wide = SMALL_GCN.replace("GCNConv(64, 64)", "GCNConv(2048, 2048)");
    assert_eq!(lines_of(&run(&wide), "EA201"), vec![24]);
}

/// A benchmark that trains for `args.num_iterations + 1` steps (11 by default).
const ELEVEN_STEPS: &str = "import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument('--num_iterations', type=int, default=10)
args = parser.parse_args()
model = GPT().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(args.num_iterations + 1):
    x, y = loader.next_batch()
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    opt.step()
    print(loss.item())
";

/// A WGAN whose five critic iterations run inside every batch.
const CRITIC_ITERATIONS: &str = "import torch
from models import Generator, Critic

G, C = Generator().cuda(), Critic().cuda()
opt_g = torch.optim.Adam(G.parameters())
opt_c = torch.optim.Adam(C.parameters())
critic_iter = 5
for epoch in range(300):
    for real in loader:
        for j in range(1, critic_iter + 1):
            z = torch.rand(64, 100).cuda()
            loss_c = C(G(z)).mean() - C(real.cuda()).mean()
            opt_c.zero_grad()
            loss_c.backward()
            opt_c.step()
        loss_g = -C(G(torch.randn(64, 100, device='cuda'))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
";

// Ex) for step in range(args.num_iterations + 1)  with default 10; for j in range(1, critic_iter + 1) in a batch loop
#[test]
fn a_few_steps_by_arithmetic_are_few_but_not_inside_a_longer_step_loop() {
    let a = run(ELEVEN_STEPS);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    let many = run(&ELEVEN_STEPS.replace("default=10", "default=1000"));
    assert_eq!(lines_of(&many, "EA301"), vec![13]);
    // five critic iterations per batch run at every batch
    assert_eq!(lines_of(&run(CRITIC_ITERATIONS), "EA304"), vec![11]);
}

/// A cat-vs-dog trainer whose data split hands back three datasets already on the device.
const SPLIT_ON_DEVICE: &str = "import torch
from torch.utils import data
from datasplit import DataSplit
from models import AlexNet

device = torch.device('cuda')
train_dataset, val_dataset, test_dataset = DataSplit('data', 70, 15, 15).get_datasets(device)
train_generator = data.DataLoader(train_dataset, batch_size=64, shuffle=True)
model = AlexNet(1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
for epoch in range(50):
    for x, y in train_generator:
        loss = torch.nn.functional.binary_cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) train_ds, val_ds, test_ds = DataSplit(root).get_datasets(device)
#[test]
fn datasets_a_split_builds_on_the_device_need_no_workers_or_pinning() {
    let a = run(SPLIT_ON_DEVICE);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    let host = run(&SPLIT_ON_DEVICE.replace(".get_datasets(device)", ".get_datasets()"));
    assert_eq!(lines_of(&host, "EA101"), vec![8]);
}

/// A trajectory model trained with gradient accumulation: the optimizer steps, and the loss is
/// read, in the `else` of `if batch_count % batch_size != 0`.
const ACCUMULATE_ELSE: &str = "import torch
from model import social_stgcnn

model = social_stgcnn(n_stgcnn=1, n_txpcnn=5).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batch_size = 128
for epoch in range(250):
    batch_count = 0
    for cnt, batch in enumerate(loader_train):
        batch_count += 1
        l = model(batch[0].cuda()).pow(2).mean()
        if batch_count % batch_size != 0 and cnt != turn_point:
            loss = l if batch_count % batch_size == 1 else loss + l
        else:
            loss = loss / batch_size
            loss.backward()
            optimizer.step()
            print('TRAIN:', loss.item())
";

// Ex) if batch_count % batch_size != 0 and cnt != turn_point: ... else: optimizer.step(); loss.item()
#[test]
fn the_else_of_a_modulo_not_zero_test_runs_every_n_steps() {
    assert!(lines_of(&run(ACCUMULATE_ELSE), "EA301").is_empty());
    // an `else` of a test that fails at most steps runs at most steps
    let often = ACCUMULATE_ELSE.replace(
        "batch_count % batch_size != 0 and cnt != turn_point",
        "cnt == turn_point",
    );
    assert_eq!(lines_of(&run(&often), "EA301"), vec![18]);
}

/// A DeepFM regressor whose loaders take parts of an in-file dataset that only indexes
/// tensors prepared in `__init__`.
const SUBSET_OF_CHEAP: &str = "import torch
from torch.utils.data import DataLoader, Dataset, Subset
from model import DeepFM

class Rows(Dataset):
    def __init__(self, x, y):
        self.x = torch.as_tensor(x, dtype=torch.long)
        self.y = torch.as_tensor(y, dtype=torch.float32)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]

ds = Rows(features, targets)
train_loader = DataLoader(Subset(ds, train_idx), batch_size=256, shuffle=True)
model = DeepFM(field_dims, 16).cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(20):
    for x, y in train_loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) DataLoader(Subset(ds, train_idx), batch_size=256)  with ds an in-file dataset of prepared tensors
#[test]
fn a_subset_of_a_cheap_dataset_needs_no_workers() {
    assert!(lines_of(&run(SUBSET_OF_CHEAP), "EA101").is_empty());
    // an image folder's subset decodes per item
    let images = SUBSET_OF_CHEAP.replace(
        "ds = Rows(features, targets)",
        "ds = ImageFolder('data', transform=tf)",
    );
    assert_eq!(lines_of(&run(&images), "EA101"), vec![17]);
}

/// A word2vec trainer that imports torch twice, once under an alias.
const TWO_TORCH_NAMES: &str = "import torch as t
import torch

model = SkipGram(100000, 300).cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for pos_u, pos_v, neg_v in loader:
        loss = model(pos_u.cuda(), pos_v.cuda(), neg_v.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) import torch as t; import torch  → every run writes `model = t.compile(model)`
#[test]
fn a_fix_names_torch_the_same_way_on_every_run() {
    // (the import table is a hash map: an unordered pick differed from run to run)
    for _ in 0..24 {
        let a = run(TWO_TORCH_NAMES);
        let fix = a
            .findings
            .iter()
            .find(|f| f.rule == "EA203")
            .and_then(|f| f.fix.as_ref())
            .expect("EA203 with a fix");
        assert_eq!(fix.edits[0].content, "model = t.compile(model)\n");
    }
}
