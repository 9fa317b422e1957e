//! The seventh accuracy round: shapes from the blind wave g99–g105 that the engine read wrongly,
//! and the one reading of what an optimizer trains that the kinds and the rules now share.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A frozen teacher placed first, then the two halves of the student, whose parameters reach
/// the optimizer through a list built in two steps.
const PARAMS_IN_TWO_STEPS: &str = "import torch
from nets import Teacher, Encoder, Decoder

device = torch.device('cuda')
teacher = Teacher().to(device)
decoder = Decoder().to(device)
encoder = Encoder().to(device)
params = list(decoder.parameters())
params += list(encoder.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)
loader = torch.utils.data.DataLoader(range(10), batch_size=64, num_workers=4, pin_memory=True)

for x, y in loader:
    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    with torch.no_grad():
        target = teacher(x)
    with torch.autocast('cuda', dtype=torch.bfloat16):
        loss = ((decoder(encoder(x)) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) params = list(decoder.parameters()); params += list(encoder.parameters())
//     optimizer = Adam(params): both halves train; the first one placed is the model to compile
#[test]
fn an_augmented_parameter_list_trains_every_module_it_collects() {
    let a = run(PARAMS_IN_TWO_STEPS);
    // the decoder, placed before the encoder, is trained: the compile finding sits on it, not
    // on the frozen teacher above it
    assert_eq!(lines_of(&a, "EA203"), vec![6], "{:?}", a.findings);
    // a list of the encoder's parameters alone: the encoder is the trained model
    let one_step = PARAMS_IN_TWO_STEPS.replace(
        "params = list(decoder.parameters())\nparams += list(encoder.parameters())\n",
        "params = list(encoder.parameters())\n",
    );
    let a = run(&one_step);
    assert_eq!(lines_of(&a, "EA203"), vec![7], "{:?}", a.findings);
}

/// LSTNet's switch: `--gpu` defaults to None, and `args.cuda` is rebound to whether it is set.
const CUDA_FROM_GPU_FLAG: &str = "import argparse
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument('--gpu', type=int, default=None)
parser.add_argument('--cuda', type=str, default=True)
args = parser.parse_args()
args.cuda = args.gpu is not None
if args.cuda:
    torch.cuda.set_device(args.gpu)

model = nn.LSTM(1024, 1024)
if args.cuda:
    model.cuda()
optimizer = torch.optim.Adam(model.parameters())

def evaluate(loader):
    model.eval()
    for x in loader:
        out = model(x)

for epoch in range(10):
    for x, y in loader:
        loss = model(x)[0].sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    evaluate(val_loader)
";

// Ex) args.cuda = args.gpu is not None   (--gpu default None)
//     if args.cuda: model.cuda()
#[test]
fn a_switch_rebound_to_a_condition_that_is_false_as_shipped_keeps_the_file_off_cuda() {
    let a = run(CUDA_FROM_GPU_FLAG);
    // on the CPU as shipped: no GPU rule fires, not even the eval loop's autograd (EA401 is a
    // GPU rule)
    for rule in ["EA201", "EA202", "EA203", "EA401"] {
        assert_eq!(
            lines_of(&a, rule),
            Vec::<usize>::new(),
            "{rule}: {:?}",
            a.findings
        );
    }
    // with a GPU chosen by default the same file trains on CUDA
    let on_gpu = CUDA_FROM_GPU_FLAG.replace("type=int, default=None", "type=int, default=0");
    let a = run(&on_gpu);
    assert_eq!(lines_of(&a, "EA201"), vec![24], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA401"), vec![20], "{:?}", a.findings);
}

/// A Hugging Face Trainer script that turns fp16 on where CUDA is.
const FP16_WHERE_CUDA: &str = "import torch
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

model = AutoModelForSequenceClassification.from_pretrained('distilbert-base-uncased')
args = TrainingArguments(
    output_dir='out',
    per_device_train_batch_size=32,
    dataloader_num_workers=4,
    fp16=torch.cuda.is_available(),
)
trainer = Trainer(model=model, args=args, train_dataset=train_ds)
trainer.train()
";

// Ex) TrainingArguments(..., fp16=torch.cuda.is_available())
#[test]
fn fp16_set_to_whether_cuda_is_available_is_mixed_precision_on_cuda() {
    let a = run(FP16_WHERE_CUDA);
    assert_eq!(
        lines_of(&a, "EA201"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    assert_eq!(
        lines_of(&a, "EA202"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    let off = FP16_WHERE_CUDA.replace("fp16=torch.cuda.is_available()", "fp16=False");
    let a = run(&off);
    assert_eq!(lines_of(&a, "EA201"), vec![5], "{:?}", a.findings);
}

/// cleanrl's C51: deterministic cuDNN from a flag on by default, and a print at each episode's end.
const RL_DEFAULTS: &str = "import argparse
import random
import torch
import torch.nn as nn
import torch.optim as optim

parser = argparse.ArgumentParser()
parser.add_argument('--torch-deterministic', type=bool, default=True)
args = parser.parse_args()
torch.backends.cudnn.deterministic = args.torch_deterministic
device = torch.device('cuda')

class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.network = nn.Sequential(nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Flatten(), nn.Linear(3136, 512))

    def forward(self, x):
        return self.network(x)

q_network = QNetwork().to(device)
optimizer = optim.Adam(q_network.parameters(), lr=1e-4)
obs = env.reset()
for global_step in range(1000000):
    next_obs, reward, done, info = env.step(env.action_space.sample())
    if 'episode' in info.keys():
        print(f\"global_step={global_step}, episode_reward={info['episode']['r']}\")
    if done:
        print('episode done', global_step)
    loss = q_network(torch.as_tensor(obs, device=device)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(global_step)
    obs = next_obs
";

// Ex) torch.backends.cudnn.deterministic = args.torch_deterministic   (default=True)
//     if 'episode' in info.keys(): print(...)      if done: print(...)
#[test]
fn deterministic_cudnn_from_a_flag_on_by_default_and_prints_at_episode_end_are_left_alone() {
    let a = run(RL_DEFAULTS);
    assert_eq!(
        lines_of(&a, "EA204"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // only the print every step is reported, not the ones at the end of an episode
    assert_eq!(lines_of(&a, "EA504"), vec![34], "{:?}", a.findings);
    let off = RL_DEFAULTS.replace("type=bool, default=True", "type=bool, default=False");
    let a = run(&off);
    assert_eq!(lines_of(&a, "EA204"), vec![21], "{:?}", a.findings);
}

/// U-DiT: a pinned loader handed to `accelerator.prepare`, whose batches arrive on the device.
const PREPARED_LOADER: &str = "import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader

accelerator = Accelerator(mixed_precision='bf16')
device = accelerator.device
model = Net().to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
loader = DataLoader(dataset, batch_size=256, num_workers=8, pin_memory=True, persistent_workers=True)
model, opt, loader = accelerator.prepare(model, opt, loader)
for epoch in range(10):
    for x, y in loader:
        x = x.to(device)
        y = y.to(device)
        loss = model(x, y)
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
";

// Ex) model, opt, loader = accelerator.prepare(model, opt, loader)
//     for x, y in loader: x = x.to(device)     (already on the device: nothing to overlap)
#[test]
fn a_loader_prepared_by_accelerate_has_no_blocking_copy_to_report() {
    let a = run(PREPARED_LOADER);
    assert_eq!(
        lines_of(&a, "EA303"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    let plain = PREPARED_LOADER.replace(
        "model, opt, loader = accelerator.prepare(model, opt, loader)",
        "model, opt = accelerator.prepare(model, opt)",
    );
    let a = run(&plain);
    assert_eq!(lines_of(&a, "EA303"), vec![13, 14], "{:?}", a.findings);
}

/// VQGAN: the optimizer trains parts of `self.vqgan`; the discriminator, placed after it, has its
/// own optimizer. A layout change of a UNet before its placement is not the placement.
const PARTS_AND_LAYOUT: &str = "import torch
from vqgan import VQGAN
from discriminator import Discriminator

class TrainVQGAN:
    def __init__(self, args):
        self.vqgan = VQGAN(args).to(device=args.device)
        self.discriminator = Discriminator(args).to(device=args.device)
        self.opt_vq = torch.optim.Adam(
            list(self.vqgan.encoder.parameters()) + list(self.vqgan.decoder.parameters()), lr=1e-4)
        self.opt_disc = torch.optim.Adam(self.discriminator.parameters(), lr=1e-4)
        self.train(args)

    def train(self, args):
        for epoch in range(args.epochs):
            for imgs in args.loader:
                imgs = imgs.to(device=args.device)
                loss = self.vqgan(imgs).mean()
                self.opt_vq.zero_grad()
                loss.backward()
                self.opt_vq.step()

if __name__ == '__main__':
    args = parse()
    args.device = 'cuda'
    TrainVQGAN(args)
";

// Ex) self.vqgan = VQGAN(args).to(device)
//     Adam(list(self.vqgan.encoder.parameters()) + ...): the optimizer trains `self.vqgan`
#[test]
fn the_model_holding_the_parts_an_optimizer_trains_is_the_trained_model() {
    let a = run(PARTS_AND_LAYOUT);
    assert_eq!(lines_of(&a, "EA203"), vec![7], "{:?}", a.findings);
}

const RELAYOUT_THEN_PLACE: &str = "import torch
from unet import UNet

device = torch.device('cuda')
model = UNet(n_channels=3, n_classes=2)
model = model.to(memory_format=torch.channels_last)
print(model)
model.to(device=device)
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-5)
for epoch in range(5):
    for images, masks in loader:
        images = images.to(device=device, memory_format=torch.channels_last)
        loss = criterion(model(images), masks.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = model.to(memory_format=torch.channels_last) ... model.to(device=device)
#[test]
fn a_memory_format_change_is_not_where_the_model_is_placed() {
    let a = run(RELAYOUT_THEN_PLACE);
    assert_eq!(lines_of(&a, "EA203"), vec![8], "{:?}", a.findings);
}

/// The transfer-learning tutorial's shape: loaders in a dict handed to a training function that
/// iterates `enumerate(dataloaders[phase])` every epoch.
const LOADERS_IN_A_DICT: &str = "import torch
from torch.utils.data import DataLoader
from torchvision import datasets, models

def train_model(model, dataloaders, criterion, optimizer, num_epochs):
    for epoch in range(num_epochs):
        for phase in ['train', 'test']:
            for i, (inputs, labels) in enumerate(dataloaders[phase]):
                inputs = inputs.to(device, non_blocking=True)
                labels = labels.to(device, non_blocking=True)
                loss = criterion(model(inputs), labels)
                if phase == 'train':
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()

device = torch.device('cuda')
dataloaders = {
    'train': DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4, pin_memory=True),
    'test': DataLoader(test_set, batch_size=64, num_workers=4, pin_memory=True),
}
model = models.resnet18().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
train_model(model, dataloaders, torch.nn.CrossEntropyLoss(), optimizer, num_epochs=25)
";

// Ex) dataloaders = {'train': DataLoader(..., num_workers=4), ...}
//     for epoch ...: for phase ...: for i, (x, y) in enumerate(dataloaders[phase])
#[test]
fn loaders_of_a_dict_iterated_through_enumerate_every_epoch_restart_their_workers() {
    let a = run(LOADERS_IN_A_DICT);
    assert_eq!(lines_of(&a, "EA103"), vec![19, 20], "{:?}", a.findings);
}

/// Pytorch-UNet's training: the loader options in a `dict(...)` with `num_workers=os.cpu_count()`,
/// the batch read from a dict batch in one tuple assignment.
const UNET_TRAIN: &str = "import os
import torch
from torch.utils.data import DataLoader
from unet import UNet

def train_model(model, device, epochs=5, batch_size=16):
    loader_args = dict(batch_size=batch_size, num_workers=os.cpu_count(), pin_memory=True)
    train_loader = DataLoader(train_set, shuffle=True, **loader_args)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-5)
    for epoch in range(1, epochs + 1):
        model.train()
        for batch in train_loader:
            images, true_masks = batch['image'], batch['mask']
            images = images.to(device=device, dtype=torch.float32)
            true_masks = true_masks.to(device=device, dtype=torch.long)
            loss = criterion(model(images), true_masks)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

device = torch.device('cuda')
model = UNet(n_channels=3, n_classes=2).to(device)
train_model(model, device)
";

// Ex) loader_args = dict(num_workers=os.cpu_count(), pin_memory=True)
//     images, true_masks = batch['image'], batch['mask']; images.to(device=device)
#[test]
fn workers_from_cpu_count_in_a_splatted_dict_and_batch_parts_read_in_one_tuple() {
    let a = run(UNET_TRAIN);
    // at least one worker, restarted every epoch
    assert_eq!(lines_of(&a, "EA103"), vec![8], "{:?}", a.findings);
    // both parts of the pinned batch are copied without `non_blocking`
    assert_eq!(lines_of(&a, "EA303"), vec![14, 15], "{:?}", a.findings);
}

/// A folder predictor: a helper decodes one image and runs the model on it without autograd,
/// the loop over the folder calls it once per file.
const PREDICT_FOLDER: &str = "import os
import json
import torch
from PIL import Image
from model import WeatherCNN

device = 'cuda' if torch.cuda.is_available() else 'cpu'

def load_model(path):
    model = WeatherCNN(num_classes=5)
    model.load_state_dict(torch.load(path, map_location=device))
    model.to(device)
    model.eval()
    return model

def predict_image(path, model):
    image = Image.open(path).convert('RGB')
    x = transform(image).unsqueeze(0).to(device)
    with torch.no_grad():
        out = model(x)
    return out.argmax(1)

def predict_folder(folder, model):
    results = []
    for root, _, files in os.walk(folder):
        for name in files:
            results.append((name, predict_image(os.path.join(root, name), model)))
    with open('predictions.json', 'w') as f:
        json.dump([str(r) for r in results], f)

if __name__ == '__main__':
    predict_folder('images', load_model('best.pth'))
";

// Ex) for name in files: predict_image(path, model)
//     def predict_image(...): with torch.no_grad(): out = model(x)
#[test]
fn a_folder_loop_that_runs_the_model_through_a_helper_is_inference() {
    let a = run(PREDICT_FOLDER);
    assert_eq!(
        a.kind,
        efficiency_audit::analysis::model::CodeKind::Infer,
        "{:?}",
        a.findings
    );
    // inference of a convolutional network: cuDNN autotuning applies
    assert_eq!(lines_of(&a, "EA204"), vec![12], "{:?}", a.findings);
}

/// Loaders built and returned by a helper whose worker count is a parameter the caller leaves at
/// its default.
const LOADERS_FROM_A_HELPER: &str = "import torch
from torch.utils.data import DataLoader, random_split

def build_loaders(root, batch=8, workers=4):
    ds = SliceDataset(root)
    tr, va = random_split(ds, [len(ds) - 10, 10])
    tr_loader = DataLoader(tr, batch_size=batch, shuffle=True, num_workers=workers, pin_memory=True)
    va_loader = DataLoader(va, batch_size=batch, num_workers=workers, pin_memory=True)
    return tr_loader, va_loader

def train_one_epoch(model, loader, opt):
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()

def main():
    tr_loader, va_loader = build_loaders('data', batch=32)
    model = UNet2D(in_ch=1).cuda()
    opt = torch.optim.AdamW(model.parameters())
    for epoch in range(40):
        train_one_epoch(model, tr_loader, opt)
        evaluate(model, va_loader)

main()
";

// Ex) def build_loaders(root, workers=4): tr = DataLoader(..., num_workers=workers); return tr, va
//     tr_loader, va_loader = build_loaders('data')   ... per epoch: train_one_epoch(model, tr_loader)
#[test]
fn loaders_a_helper_returns_are_followed_to_the_epoch_loop_and_parameters_to_their_callers() {
    let a = run(LOADERS_FROM_A_HELPER);
    assert_eq!(lines_of(&a, "EA103"), vec![7, 8], "{:?}", a.findings);
    // a caller that asks for no workers: nothing to keep alive
    let none = LOADERS_FROM_A_HELPER.replace(
        "build_loaders('data', batch=32)",
        "build_loaders('data', batch=32, workers=0)",
    );
    let a = run(&none);
    assert_eq!(
        lines_of(&a, "EA103"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // two callers that disagree: unknown, silent
    let two =
        LOADERS_FROM_A_HELPER.replace("main()\n", "main()\nbuild_loaders('other', workers=0)\n");
    let a = run(&two);
    assert_eq!(
        lines_of(&a, "EA103"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
}

/// Labels read on the host, before the batch is moved, through a chain of tensor methods.
const LABELS_READ_BEFORE_THE_MOVE: &str = "import torch

def train(model, loader, optimizer, criterion):
    y_true = []
    for epoch in range(10):
        for i, (inputs, labels) in enumerate(loader):
            y_true += labels.numpy().tolist()
            n_pos = labels.float().sum().item()
            inputs, labels = inputs.cuda(), labels.cuda()
            loss = criterion(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

model = Net().cuda()
train(model, torch.utils.data.DataLoader(ds, batch_size=64, num_workers=4), torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())
";

// Ex) for inputs, labels in loader: y_true += labels.numpy().tolist()   (before labels.cuda())
#[test]
fn a_batch_read_through_tensor_methods_before_its_move_is_not_a_sync() {
    let a = run(LABELS_READ_BEFORE_THE_MOVE);
    assert_eq!(
        lines_of(&a, "EA301"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // read after the move: the GPU copy is waited for
    let after = LABELS_READ_BEFORE_THE_MOVE.replace(
        "            y_true += labels.numpy().tolist()\n            n_pos = labels.float().sum().item()\n            inputs, labels = inputs.cuda(), labels.cuda()\n",
        "            inputs, labels = inputs.cuda(), labels.cuda()\n            n_pos = labels.float().sum().item()\n",
    );
    let a = run(&after);
    assert_eq!(lines_of(&a, "EA301"), vec![8], "{:?}", a.findings);
}
