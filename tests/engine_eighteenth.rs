//! The eighteenth accuracy round: shapes from the blind waves g387– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A dataset-preparation script whose entry point prints the function's result in an f-string.
const FSTRING_CALL: &str = "import argparse
import cv2
from helpers import source_images


def prepare(root, out):
    for source in source_images(root):
        image = cv2.imread(str(source))
        cv2.imwrite(str(out / source.name), image)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--root', default='data')
    args = parser.parse_args()
    print(f\"final data: {prepare(args.root, 'out')}\")


if __name__ == '__main__':
    main()
";

// Ex) print(f"final data: {prepare(args.dataset, args.output)}")
#[test]
fn a_function_called_in_an_f_string_runs() {
    assert_eq!(lines_of(&run(FSTRING_CALL), "EA602"), vec![7]);
    // named only in a plain string, it is not called
    let plain = FSTRING_CALL.replace(
        "print(f\"final data: {prepare(args.root, 'out')}\")",
        "print(\"final data: prepare(args.root)\")",
    );
    assert!(lines_of(&run(&plain), "EA602").is_empty());
}

/// A script whose `__main__` block runs the training; one loader is built and never read.
const UNREAD_LOADER: &str = "import torch
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
valid_loader = DataLoader(valid_set, batch_size=32, shuffle=True)
model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters())


def train(epochs):
    for epoch in range(epochs):
        for x, y in train_loader:
            loss = model(x.cuda()).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    train(10)
";

// Ex) valid_loader = DataLoader(valid_dataset, batch_size=batch_size, shuffle=True)  (never read)
#[test]
fn an_unread_loader_of_a_script_whose_main_block_trains_is_not_reported() {
    let out = run(UNREAD_LOADER);
    assert_eq!(lines_of(&out, "EA101"), vec![4]);
    assert_eq!(lines_of(&out, "EA102"), vec![4]);
    // a module with no `__main__` block may be imported for its loaders
    let module = UNREAD_LOADER.replace("if __name__ == '__main__':\n    train(10)\n", "");
    let out = run(&module);
    assert_eq!(lines_of(&out, "EA101"), vec![4, 5]);
}

/// An inference script whose GPU switch is an optparse flag, off by default.
const OPTPARSE_GPU: &str = "import torch
from optparse import OptionParser
from unet import UNet


def run(gpu, loader):
    if gpu and torch.cuda.is_available():
        device = torch.device('cuda')
    else:
        device = torch.device('cpu')
    net = UNet(n_channels=1)
    net.to(device)
    net.eval()
    with torch.no_grad():
        for x in loader:
            y = net(x.to(device))
            print(y.sum().item())


def get_args():
    parser = OptionParser()
    parser.add_option('-g', '--gpu', action='store_true', dest='gpu', default=False)
    (options, args) = parser.parse_args()
    return options


if __name__ == '__main__':
    args = get_args()
    run(gpu=args.gpu, loader=[])
";

// Ex) parser.add_option('-g', '--gpu', action='store_true', dest='gpu', default=False)
#[test]
fn an_optparse_option_reads_its_default() {
    let out = run(OPTPARSE_GPU);
    assert!(lines_of(&out, "EA204").is_empty());
    assert!(lines_of(&out, "EA301").is_empty());
    let on = OPTPARSE_GPU.replace("default=False)", "default=True)");
    let out = run(&on);
    assert_eq!(lines_of(&out, "EA204"), vec![12]);
    assert_eq!(lines_of(&out, "EA301"), vec![17]);
}

/// A loop converting each batch's labels with a helper that builds a new tensor.
const ONE_HOT: &str = "import torch
from torch.utils import data


def to_one_hot(y, k=10):
    y = y.view(-1, 1)
    out = torch.zeros(y.numel(), k)
    out.scatter_(1, y, 1)
    return out.float()


net = Net().cuda()
tr = data.DataLoader(train_set, batch_size=128, num_workers=1, pin_memory=True)
optimizer = torch.optim.Adam(net.parameters())
for epoch in range(25):
    for inp, lab in tr:
        lab = to_one_hot(lab)
        emb = lab.cuda()
        inp = inp.cuda()
        loss = net(inp, emb).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) lab = to_one_hot(lab); lab_emb = label_net(lab.cuda())
#[test]
fn a_batch_rebuilt_by_a_helper_is_not_pinned() {
    assert_eq!(lines_of(&run(ONE_HOT), "EA303"), vec![19]);
    // a helper that only reshapes hands back the pinned batch
    let view = ONE_HOT.replace(
        "    out = torch.zeros(y.numel(), k)\n    out.scatter_(1, y, 1)\n    return out.float()\n",
        "    return y\n",
    );
    assert_eq!(lines_of(&run(&view), "EA303"), vec![16, 17]);
}

/// A training script that builds its optimizer through a helper and trains in imported passes.
const BUILT_OPTIMIZER: &str = "import torch
from src.model import build_resnet34
from src.trainer import build_optimizer, train_one_epoch
from src.utils import pick_device


def main():
    device = pick_device()
    model = build_resnet34(num_classes=10).to(device)
    optimizer = build_optimizer(model, {})
    for ep in range(20):
        train_one_epoch(model, train_loader, optimizer, device)


if __name__ == '__main__':
    main()
";

// Ex) optimizer = build_optimizer(model, train_cfg) ... train_one_epoch(model, loader, optimizer, ...)
#[test]
fn an_optimizer_built_by_a_helper_makes_an_epoch_loop() {
    let out = run(BUILT_OPTIMIZER);
    assert_eq!(lines_of(&out, "EA203"), vec![9]);
    assert_eq!(lines_of(&out, "EA204"), vec![9]);
    // a helper named otherwise builds nothing the engine knows
    let other = BUILT_OPTIMIZER.replace("build_optimizer", "configure");
    assert!(lines_of(&run(&other), "EA203").is_empty());
}

/// A training script that hands each pass to a function of an imported module.
const MODULE_PASS: &str = "import torch
import train_utils, models

model = models.Model(features_dim=128)
model = model.cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
for epoch in range(5000):
    total_loss = train_utils.train(train_dataloader, model, criterion, optimizer)
    torch.save(model.state_dict(), 'model.pt')
";

// Ex) total_loss = train_utils.train(train_dataloader, model, criterion, optimizer)
#[test]
fn a_training_pass_of_an_imported_module_is_delegated_training() {
    assert_eq!(lines_of(&run(MODULE_PASS), "EA203"), vec![5]);
    // a checkpoint helper handed the optimizer trains nothing
    let save = MODULE_PASS.replace(
        "total_loss = train_utils.train(train_dataloader, model, criterion, optimizer)",
        "train_utils.save_checkpoint(model, optimizer)",
    );
    assert!(lines_of(&run(&save), "EA203").is_empty());
}

/// A contrastive trainer choosing its method with an if / elif / else chain.
const METHOD_CHAIN: &str = "import argparse
import torch


def train_simclr(loader, model, optimizer):
    for x in loader:
        loss = model(x.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_ins(loader, model, optimizer):
    for x in loader:
        loss = model(x.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--method', type=str, default='simclr')
    args = parser.parse_args()
    model = torch.nn.Linear(3, 3).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        if args.method == 'moco':
            pass
        elif args.method == 'simclr':
            train_simclr(loader, model, optimizer)
        else:
            train_ins(loader, model, optimizer)


if __name__ == '__main__':
    main()
";

// Ex) if args.contrastive_model == 'moco': ... elif ... == 'simclr': ... else: train_ins(...)
#[test]
fn the_else_of_an_elif_chain_is_dead_when_a_test_holds() {
    assert!(lines_of(&run(METHOD_CHAIN), "EA301").is_empty());
    let insdis = METHOD_CHAIN.replace("default='simclr'", "default='insdis'");
    assert_eq!(lines_of(&run(&insdis), "EA301"), vec![19]);
    // an elif after a test that holds does not run either
    let moco_first = METHOD_CHAIN
        .replace("default='simclr'", "default='moco'")
        .replace(
            "        else:\n            train_ins",
            "        elif args.method == 'moco':\n            train_ins",
        );
    assert!(lines_of(&run(&moco_first), "EA301").is_empty());
}

/// A step timed with a clock read inside the next call.
const TIMED_STEP: &str = "import time
import torch

model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
end = time.time()
for x, y in loader:
    loss = model(x.cuda()).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    batch_time.update(time.time() - end)
    end = time.time()
";

// Ex) torch.cuda.synchronize(); batch_time.update(time.time() - end)
#[test]
fn a_synchronize_before_a_clock_read_inside_a_call_times_the_step() {
    assert!(lines_of(&run(TIMED_STEP), "EA302").is_empty());
    let untimed = TIMED_STEP.replace("batch_time.update(time.time() - end)", "meter.update(loss)");
    assert_eq!(lines_of(&run(&untimed), "EA302"), vec![12]);
}

/// A BYOL trainer iterating a progress bar a `with` statement names.
const WITH_TQDM: &str = "import torch
from tqdm import tqdm

learner = Net().cuda()
loader = torch.utils.data.DataLoader(ds, batch_size=256, num_workers=8, pin_memory=True)
optimizer = torch.optim.SGD(learner.parameters(), lr=0.1)
for e in range(100):
    with tqdm(loader, unit='batch') as tepoch:
        for images, label in tepoch:
            images = images.cuda()
            loss = learner(images)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
";

// Ex) with tqdm(train_loader, unit="batch") as tepoch: for images, label in tepoch: images.cuda()
#[test]
fn a_progress_bar_named_by_with_iterates_its_loader() {
    assert_eq!(lines_of(&run(WITH_TQDM), "EA303"), vec![10]);
    let unpinned = WITH_TQDM.replace("pin_memory=True", "pin_memory=False");
    assert!(lines_of(&run(&unpinned), "EA303").is_empty());
}

/// A contrastive loss building its masks every step and moving them to an upper-case device.
const UPPER_DEVICE: &str = "import torch

DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
model = Net().to(DEVICE)
optimizer = torch.optim.Adam(model.parameters())


def nt_xent(z):
    mask = torch.eye(z.shape[0], dtype=torch.bool).to(DEVICE)
    return (z[~mask]).sum()


for epoch in range(20):
    for x in loader:
        loss = nt_xent(model(x.to(DEVICE)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) mask = torch.eye(labels.shape[0], dtype=torch.bool).to(DEVICE)
#[test]
fn a_move_to_an_upper_case_device_is_a_move() {
    assert_eq!(lines_of(&run(UPPER_DEVICE), "EA304"), vec![9]);
}

/// A fine-tuning script that validates its dataset option and raises on anything unknown.
const ELSE_RAISES: &str = "import argparse
import torch
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument('--dataset', type=str, default='tox21')
args = parser.parse_args()
if args.dataset == '435008':
    root = 'qsar'
else:
    raise Exception('cannot find dataset')
model = Net().cuda()
loader = DataLoader(MoleculeDataset(root), batch_size=32, num_workers=4)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(100):
    for batch in loader:
        loss = model(batch.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) if args.dataset == '435008': ... else: raise Exception('cannot find dataset')
#[test]
fn code_after_an_else_that_raises_as_shipped_does_not_run() {
    let out = run(ELSE_RAISES);
    assert!(lines_of(&out, "EA201").is_empty());
    assert!(lines_of(&out, "EA102").is_empty());
    let known = ELSE_RAISES.replace("default='tox21'", "default='435008'");
    let out = run(&known);
    assert_eq!(lines_of(&out, "EA201"), vec![16]);
    assert_eq!(lines_of(&out, "EA102"), vec![13]);
}

/// A script with an inference function placing its own `model` before the training function.
const TWO_MODELS: &str = "import torch
import timm


def inference(loader):
    model = timm.create_model('resnet50', pretrained=False, num_classes=4)
    model = model.cuda()
    model.eval()
    with torch.no_grad():
        for x in loader:
            model(x.cuda())


def train(loader):
    model = timm.create_model('resnet50', pretrained=True, num_classes=4)
    model = model.cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(10):
        for x, y in loader:
            loss = model(x.cuda()).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    train(train_loader)
    inference(test_loader)
";

// Ex) def inference(): model = model.cuda() ... def train(): model = model.cuda(); optimizer = Adam(model.parameters())
#[test]
fn the_model_trained_is_the_one_placed_where_its_optimizer_is_built() {
    let out = run(TWO_MODELS);
    assert_eq!(lines_of(&out, "EA203"), vec![16]);
    assert_eq!(lines_of(&out, "EA204"), vec![16]);
}

/// A quantisation script that trains on the GPU, then moves the model back to the CPU.
const BACK_TO_CPU: &str = "import torch

cuda_device = torch.device('cuda:0')
cpu_device = torch.device('cpu:0')


def train_model(model, loader, device):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(200):
        for x, y in loader:
            loss = model(x.to(device)).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


def main():
    model = create_model(num_classes=10)
    model = train_model(model, train_loader, cuda_device)
    model.to(cpu_device)


if __name__ == '__main__':
    main()
";

// Ex) model.to(cpu_device)  # pytorch's static quantization runs on the CPU
#[test]
fn a_move_to_a_cpu_device_is_no_placement() {
    assert_eq!(lines_of(&run(BACK_TO_CPU), "EA203"), vec![8]);
}

/// A distillation trainer whose student is built and placed by helpers.
const HELPER_PLACED: &str = "import argparse
import torch
from utils import define_net, set_gpu

parser = argparse.ArgumentParser()
parser.add_argument('--cuda', type=int, default=1)
parser.add_argument('--kd_mode', type=str, default='at')
args = parser.parse_args()

snet = define_net(name='resnet20', num_class=10, cuda=args.cuda)
tnet = set_gpu(args, define_net(name='resnet110', num_class=10))
if args.kd_mode == 'vid':
    criterion = [c.cuda() for c in criterions]
optimizer = torch.optim.SGD(snet.parameters(), lr=0.1)
for epoch in range(200):
    for img, target in train_loader:
        loss = snet(img.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) snet = define_tsnet(name=args.s_name, num_class=args.num_class, cuda=args.cuda)
#[test]
fn a_helper_handed_cuda_places_the_model_it_builds() {
    assert_eq!(lines_of(&run(HELPER_PLACED), "EA203"), vec![10]);
    // `model_s = set_gpu(args, model_s)`: a helper named for the placement
    let set_gpu = HELPER_PLACED.replace(
        "snet = define_net(name='resnet20', num_class=10, cuda=args.cuda)",
        "snet = define_net(name='resnet20', num_class=10)\nsnet = set_gpu(args, snet)",
    );
    assert_eq!(lines_of(&run(&set_gpu), "EA203"), vec![11]);
}

/// A distillation script whose first stage runs only for two of its modes.
const MODE_IN_LIST: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--kd_mode', type=str, default='at')
args = parser.parse_args()


def train_init(loader, net, optimizer):
    for img, target in loader:
        loss = net(img.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())


net = Net().cuda()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
if args.kd_mode in ['fsp', 'ab']:
    train_init(train_loader, net, optimizer)
";

// Ex) if args.kd_mode in ['fsp', 'ab']: train_init(train_loader, nets, optimizer, criterions, 10)
#[test]
fn membership_in_a_written_out_list_is_known_as_shipped() {
    assert!(lines_of(&run(MODE_IN_LIST), "EA301").is_empty());
    let fsp = MODE_IN_LIST.replace("default='at'", "default='fsp'");
    assert_eq!(lines_of(&run(&fsp), "EA301"), vec![15]);
}

/// A Lightning script keeping an old trainer class nothing builds.
const OLD_TRAINER: &str = "import torch
import pytorch_lightning as pl
from torch.utils import data


class Trainer(object):
    def __init__(self, args):
        self.loader = data.DataLoader(dataset=val_dataset, batch_size=1, shuffle=False)
        self.model = get_model().cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def train(self):
        for images, targets in self.loader:
            loss = self.model(images.cuda()).sum()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


if __name__ == '__main__':
    model = LitModel()
    pl_trainer = pl.Trainer(gpus=[0])
    pl_trainer.fit(model)
";

// Ex) class Trainer(object): ... (its use commented out) ... pl.Trainer(callbacks=[...], gpus=[0])
#[test]
fn a_class_the_script_never_names_does_not_run() {
    let out = run(OLD_TRAINER);
    assert!(lines_of(&out, "EA101").is_empty());
    // (the Lightning trainer that runs is judged: no precision set)
    assert_eq!(lines_of(&out, "EA201"), vec![22]);
    let built = OLD_TRAINER.replace("    model = LitModel()\n", "    Trainer(None).train()\n");
    assert_eq!(lines_of(&run(&built), "EA101"), vec![8]);
}

/// A DreamBooth fine-tune that tokenises prompts and trains a diffusers U-Net on images.
const DIFFUSERS_TOKENS: &str = "import torch
from torch.utils.data import DataLoader
from transformers import AutoTokenizer
from diffusers import UNet2DConditionModel

tokenizer = AutoTokenizer.from_pretrained(path, subfolder='tokenizer')
unet = UNet2DConditionModel.from_pretrained(path, subfolder='unet').to('cuda')
optimizer = torch.optim.AdamW(unet.parameters(), lr=5e-6)
loader = DataLoader(DreamBoothDataset(root, tokenizer=tokenizer), batch_size=1, num_workers=1)
for epoch in range(100):
    for batch in loader:
        loss = unet(batch['latents'].to('cuda'), batch['input_ids'].to('cuda')).sample.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) train_dataloader = DataLoader(train_dataset, ..., collate_fn=collate_fn, num_workers=1)
#[test]
fn a_diffusion_fine_tune_feeds_images_not_only_token_ids() {
    assert_eq!(lines_of(&run(DIFFUSERS_TOKENS), "EA102"), vec![9]);
}

/// Training handed to a trainer object of another module, or to a training function.
const TRAINER_OBJECT: &str = "import torch
from training.trainer import RxnTrainer


def main():
    model = Net()
    model.to('cuda')
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    trainer = RxnTrainer(model=model, optimizer=optimizer, epochs=100)
    return trainer.train()


if __name__ == '__main__':
    main()
";

// Ex) trainer = RxnGraphTrainer(model=model, optimizer=optimizer, ...); return trainer.train()
#[test]
fn a_trainer_object_handed_the_optimizer_trains() {
    assert_eq!(lines_of(&run(TRAINER_OBJECT), "EA203"), vec![7]);
    // a scheduler handed the optimizer trains nothing
    let scheduler = TRAINER_OBJECT
        .replace(
            "RxnTrainer(model=model, optimizer=optimizer, epochs=100)",
            "ReduceLROnPlateau(optimizer)",
        )
        .replace("trainer.train()", "trainer.step(0.1)");
    assert!(lines_of(&run(&scheduler), "EA203").is_empty());
    // a training function of another module, called once
    let function = TRAINER_OBJECT
        .replace("from training.trainer import RxnTrainer", "import hydragnn")
        .replace(
            "    trainer = RxnTrainer(model=model, optimizer=optimizer, epochs=100)\n    return trainer.train()\n",
            "    hydragnn.train.train_validate_test(model, optimizer, loaders)\n",
        );
    assert_eq!(lines_of(&run(&function), "EA203"), vec![7]);
}

/// An evaluation loop averaging metrics in a Python object whose method is named `item`.
const AVERAGER: &str = "import torch
import utils

model = Net().cuda()
model.eval()
val_res = utils.Averager()
for batch in loader:
    with torch.no_grad():
        pred = model(batch['inp'].cuda())
    res = metric_fn(pred, batch['gt'].cuda())
    val_res.add(res.item(), pred.shape[0])
    pbar.set_description('val {:.4f}'.format(val_res.item()))
";

// Ex) val_res = utils.Averager() ... pbar.set_description('val {:.4f}'.format(val_res.item()))
#[test]
fn an_item_method_of_a_python_object_reads_no_tensor() {
    assert_eq!(lines_of(&run(AVERAGER), "EA301"), vec![11]);
    // a tensor bound from torch is read
    let tensor = AVERAGER.replace(
        "val_res = utils.Averager()",
        "val_res = torch.zeros(1).cuda()",
    );
    assert_eq!(lines_of(&run(&tensor), "EA301"), vec![11, 12]);
    // a capitalised metric function of tensors returns one
    let metric = AVERAGER
        .replace(
            "val_res = utils.Averager()
",
            "",
        )
        .replace(
            "    res = metric_fn(pred, batch['gt'].cuda())
",
            "    res = IoU(pred, batch['gt'].cuda())
",
        );
    assert_eq!(lines_of(&run(&metric), "EA301"), vec![10, 11]);
}

/// A segmentation trainer handing its loaders a dict of arguments that turns pinning off.
const SPLAT_FALSE: &str = "import torch
from torch.utils.data import DataLoader

model = UNet(n_channels=4, n_classes=3).cuda()
optimizer = torch.optim.Adam(model.parameters())
loader_args = dict(batch_size=16, num_workers=8, pin_memory=False)
train_loader = DataLoader(train_set, shuffle=True, **loader_args)
for epoch in range(50):
    for images, masks in train_loader:
        loss = model(images.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) loader_args = dict(batch_size=batch_size, num_workers=8, pin_memory=False); DataLoader(ds, **loader_args)
#[test]
fn pinning_turned_off_in_an_unpacked_dict_is_written_off() {
    assert_eq!(lines_of(&run(SPLAT_FALSE), "EA102"), vec![7]);
    // an option's value is the user's switch
    let option = SPLAT_FALSE.replace("pin_memory=False", "pin_memory=args.pin");
    assert!(lines_of(&run(&option), "EA102").is_empty());
}

/// A seq2seq training step whose greedy decode stops at the end-of-sentence token.
const DECODE_STOP: &str = "import torch

encoder = EncoderRNN(n_words, 256).cuda()
decoder = AttnDecoderRNN(256, n_words).cuda()
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(decoder.parameters()), lr=0.01)
for it in range(75000):
    input_tensor, target_tensor = pairs[it]
    hidden = encoder(input_tensor.cuda())
    decoder_input = torch.tensor([[SOS]], device='cuda')
    loss = 0
    for di in range(target_length):
        out, hidden = decoder(decoder_input, hidden)
        topv, topi = out.topk(1)
        decoder_input = topi.squeeze().detach()
        loss += criterion(out, target_tensor[di])
        if decoder_input.item() == EOS:
            break
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) decoder_input = topi.squeeze().detach(); ...; if decoder_input.item() == EOS_token: break
#[test]
fn the_stop_test_of_a_greedy_decode_is_the_decode() {
    assert!(lines_of(&run(DECODE_STOP), "EA301").is_empty());
    // a loss read in the same test is a read that could wait
    let loss = DECODE_STOP.replace("if decoder_input.item() == EOS:", "if loss.item() > 100:");
    assert_eq!(lines_of(&run(&loss), "EA301"), vec![16]);
}

/// A dataset script extracting the frames of every video in each class folder.
const CLASS_FOLDERS: &str = "import os
import cv2


def extract_frames(folder):
    c = 0
    for folders in os.listdir(folder):
        folder_path = os.path.join(folder, folders)
        for files in os.listdir(folder_path):
            cap = cv2.VideoCapture(os.path.join(folder_path, files))
            success, image = cap.read()
            while success:
                cv2.imwrite(str(c) + '.jpg', image)
                success, image = cap.read()
                c += 1


extract_frames('videos')
";

// Ex) for folders in os.listdir(folder): ... for files in tqdm(os.listdir(folder_path)):
#[test]
fn a_loop_over_class_folders_heads_the_nest_of_per_file_loops() {
    assert_eq!(lines_of(&run(CLASS_FOLDERS), "EA602"), vec![7]);
    // an os.walk over directories gives way to its loop over files
    let walk = CLASS_FOLDERS
        .replace("    for folders in os.listdir(folder):\n        folder_path = os.path.join(folder, folders)\n", "    for folder_path, dirs, filenames in os.walk(folder):\n")
        .replace("for files in os.listdir(folder_path):", "for files in filenames:");
    assert_eq!(lines_of(&run(&walk), "EA602"), vec![8]);
}

/// A conversion script writing each file's arrays with `np.savez_compressed`.
const SAVEZ: &str = "import os
import gzip
import pickle
import numpy as np


def main(filename):
    data = pickle.load(gzip.open(os.path.join('pkl', filename)))
    np.savez_compressed(os.path.join('data', filename + '.npz'), data=np.asarray(data))


if __name__ == '__main__':
    for filename in os.listdir('pkl'):
        main(filename)
";

// Ex) np.savez_compressed(os.path.join('data', outfile), labels=labels, data=data)
#[test]
fn a_helper_saving_compressed_arrays_writes_its_own_output() {
    assert_eq!(lines_of(&run(SAVEZ), "EA602"), vec![13]);
}

/// A click command whose GPU switch is an option off by default.
const CLICK_CUDA: &str = "import click
import torch


@click.command()
@click.option('--cuda', help='whether to use CUDA.', type=bool, default=False)
@click.option('--epochs', type=int, default=100)
def main(cuda, epochs):
    model = Net()
    if cuda:
        model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            if cuda:
                x = x.cuda()
            loss = model(x).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(loss.item())


if __name__ == '__main__':
    main()
";

// Ex) @click.option('--cuda', help='whether to use CUDA (default False).', type=bool, default=False)
#[test]
fn a_click_option_reads_its_default() {
    let out = run(CLICK_CUDA);
    assert!(lines_of(&out, "EA203").is_empty());
    assert!(lines_of(&out, "EA301").is_empty());
    let on = CLICK_CUDA.replace("type=bool, default=False", "type=bool, default=True");
    let out = run(&on);
    assert_eq!(lines_of(&out, "EA203"), vec![11]);
    assert_eq!(lines_of(&out, "EA301"), vec![21]);
}

/// A GAN trainer logging images on one batch of each epoch, a count before the last.
const ONE_BATCH: &str = "import torch

n_iter = len(train_loader)
generator = Generator().cuda()
optimizer = torch.optim.Adam(generator.parameters())
for epoch in range(100):
    for i, (lr_imgs, hr_imgs) in enumerate(train_loader):
        sr_imgs = generator(lr_imgs.cuda())
        loss = (sr_imgs - hr_imgs.cuda()).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i == (n_iter - 2):
            writer.add_image('sr', make_grid(sr_imgs[:4].cpu()), epoch)
";

// Ex) if i==(n_iter-2): writer.add_image('SRGAN/epoch_'+str(epoch)+'_1', make_grid(lr_imgs[:4,:3,:,:].cpu(), ...))
#[test]
fn a_branch_on_one_count_of_the_loop_runs_once() {
    assert!(lines_of(&run(ONE_BATCH), "EA301").is_empty());
    // a count the loop itself binds is no fixed iteration
    let moving = ONE_BATCH.replace("if i == (n_iter - 2):", "if i == (epoch - 2):");
    assert_eq!(lines_of(&run(&moving), "EA301"), vec![14]);
}

/// A BYOL trainer placing a ResNet, then the wrapper that trains it.
const WRAPPED_RESNET: &str = "import torch
import torchvision
from models import byol

model = torchvision.models.resnet50(pretrained=True).cuda()
learner = byol.BYOL(model, image_size=128, hidden_layer='avgpool').cuda()
optimizer = torch.optim.SGD(learner.parameters(), lr=0.2)
for e in range(100):
    for images, label in train_loader:
        loss = learner(images.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = torchvision.models.resnet50(pretrained=True).cuda(); learner = byol.BYOL(model, ...).cuda()
#[test]
fn cudnn_benchmark_is_anchored_on_the_convolutional_network() {
    let out = run(WRAPPED_RESNET);
    assert_eq!(lines_of(&out, "EA204"), vec![5]);
    assert_eq!(lines_of(&out, "EA203"), vec![6]);
    // a ResNet the file does not place itself: the trained wrapper's placement stays the anchor
    let unplaced = WRAPPED_RESNET.replace(
        "resnet50(pretrained=True).cuda()",
        "resnet50(pretrained=True)",
    );
    assert_eq!(lines_of(&run(&unplaced), "EA204"), vec![6]);
}

/// A detection script that imports its model object from a module of the repository.
const IMPORTED_MODEL: &str = "import torch
from faster_rcnn.faster_rcnn import model

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
model.to(device=device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def train():
    model.train()
    for image, targets in trainset:
        loss = sum(model(image.to(device), targets).values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def evaluate():
    model.eval()
    for image, targets in valset:
        prediction = model(image.to(device))


for epoch in range(30):
    train()
    evaluate()
";

// Ex) from faster_rcnn.faster_rcnn import model ... model.eval(); for image, targets in valset: prediction = model(image)
#[test]
fn an_imported_model_object_runs_the_model() {
    assert_eq!(lines_of(&run(IMPORTED_MODEL), "EA401"), vec![20]);
    // an imported function named like a model builds one; calling it runs nothing
    let function = IMPORTED_MODEL
        .replace("model.to(device=device)\n", "")
        .replace(
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n",
            "optimizer = None\n",
        )
        .replace("    model.train()\n", "")
        .replace("    model.eval()\n", "");
    assert!(lines_of(&run(&function), "EA401").is_empty());
}

/// A distillation script whose student's optimizer comes from a helper of another module.
const BUILT_FOR_STUDENT: &str = "import torch
from utils import build_optimizer

teacher = Teacher().cuda()
model = Student().cuda()
optimizer = build_optimizer(model, cfg)
for epoch in range(100):
    for x, y in loader:
        loss = model(x.cuda()).sum() + teacher(x.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) teacher = Teacher().cuda(); model = Student().cuda(); optimizer = build_optimizer(model, cfg)
#[test]
fn the_model_a_built_optimizer_trains_is_the_anchor() {
    assert_eq!(lines_of(&run(BUILT_FOR_STUDENT), "EA203"), vec![5]);
}
