//! The twenty-eighth accuracy round: shapes from the blind waves of the twenty-eighth session
//! (g736 onward) that the engine read wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A sliding-window segmentation script: for each image, row and column loops run the model
/// on every crop, with autograd on.
const SLIDING_WINDOW: &str = "import os
import numpy as np
import torch
from PIL import Image


def get_predict(img, model, device):
    img = torch.from_numpy(img).unsqueeze(0).float().to(device)
    return torch.argmax(model(img), 1).byte().cpu().numpy()


def main(model_path, image_path):
    model = torch.load(model_path).to(torch.device('cuda'))
    model.eval()
    for file in os.listdir(image_path):
        image = np.array(Image.open(os.path.join(image_path, file)))
        out = np.zeros(image.shape[:2], np.uint8)
        for y in range(0, image.shape[0] - 1024, 512):
            for x in range(0, image.shape[1] - 1024, 512):
                out[y:y + 1024, x:x + 1024] = get_predict(image[y:y + 1024, x:x + 1024], model, 'cuda')
            out[y:y + 1024, -1024:] = get_predict(image[y:y + 1024, -1024:], model, 'cuda')
        for x in range(0, image.shape[1] - 1024, 512):
            out[-1024:, x:x + 1024] = get_predict(image[-1024:, x:x + 1024], model, 'cuda')
        out[-1024:, -1024:] = get_predict(image[-1024:, -1024:], model, 'cuda')
        Image.fromarray(out).save(file + '_pred.png')


if __name__ == '__main__':
    main('model.pth', 'images')
";

// Ex) for file in files: ... for y in range(...): for x in range(...): get_predict(crop, model)
#[test]
fn a_nest_of_evaluation_loops_is_reported_once_on_the_outermost() {
    let findings = run(SLIDING_WINDOW);
    assert_eq!(lines_of(&findings, "EA401"), vec![15]);
    // each loop of the nest on its own, as before, when nothing encloses them: the row loop
    // (with its right-edge crop) holds the column loop
    let (start, end) = (
        SLIDING_WINDOW.find("    for file in").unwrap(),
        SLIDING_WINDOW.find("        Image.fromarray").unwrap(),
    );
    let rows: String = SLIDING_WINDOW[start..end]
        .lines()
        .filter(|l| {
            !l.starts_with("    for file")
                && !l.trim_start().starts_with("image =")
                && !l.trim_start().starts_with("out = ")
        })
        .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
        .collect();
    let flat = SLIDING_WINDOW.replace(&SLIDING_WINDOW[start..end], &format!("    image = np.array(Image.open(image_path))\n    out = np.zeros(image.shape[:2], np.uint8)\n{rows}"));
    let flat_lines = lines_of(&run(&flat), "EA401");
    assert_eq!(flat_lines, vec![17, 21], "{flat}");
}

/// A LoRA trainer class whose `train()` sets the model up (placing it) through a method of its
/// own, then hands it to a Hugging Face Trainer.
const TRAINER_SETUP_METHOD: &str = "import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


class LoraTrainer:
    def __init__(self, config):
        self.config = config
        self.device = torch.device('cuda')

    def setup_model(self):
        base = AutoModelForCausalLM.from_pretrained(self.config['model_name'])
        self.model = get_peft_model(base, LoraConfig(r=8))
        self.model.to(self.device)

    def train(self, dataset):
        self.setup_model()
        args = TrainingArguments(output_dir='out', num_train_epochs=3, fp16=True)
        trainer = Trainer(model=self.model, args=args, train_dataset=dataset)
        trainer.train()


if __name__ == '__main__':
    LoraTrainer({'model_name': 'gpt2'}).train(load_data())
";

// Ex) def train(self): self.setup_model() ... TrainingArguments(...)
#[test]
fn a_trainer_script_placing_its_model_in_a_setup_method_is_anchored_at_the_move() {
    assert_eq!(lines_of(&run(TRAINER_SETUP_METHOD), "EA203"), vec![14]);
    // a move in a method called after the arguments is not the training model's
    let after = TRAINER_SETUP_METHOD.replace(
        "        self.setup_model()\n        args = TrainingArguments(output_dir='out', num_train_epochs=3, fp16=True)\n",
        "        args = TrainingArguments(output_dir='out', num_train_epochs=3, fp16=True)\n        self.setup_model()\n",
    );
    assert_eq!(lines_of(&run(&after), "EA203"), vec![17]);
}

/// A conversion script whose input folder is a single-dash option with no default.
const SINGLE_DASH_OPTION: &str = "import argparse
import os
import numpy as np
import cv2

parser = argparse.ArgumentParser()
parser.add_argument('-data_root', type=str, default=None, help='data root')
args = parser.parse_args()

if args.data_root is not None:
    files = [os.path.join(args.data_root, f) for f in os.listdir(args.data_root)]
    for f in files:
        x = np.load(f)['segs'].astype(np.uint8) * 255
        cv2.imwrite(f.replace('npz', 'png'), x)
";

// Ex) parser.add_argument('-data_root', default=None) ... if args.data_root is not None:
#[test]
fn a_single_dash_option_names_its_argument() {
    assert!(lines_of(&run(SINGLE_DASH_OPTION), "EA602").is_empty());
    // with a default, the loop runs as shipped
    let set = SINGLE_DASH_OPTION.replace("default=None", "default='data'");
    assert_eq!(lines_of(&run(&set), "EA602"), vec![12]);
}

/// Fast neural style: an imported `TransformerNet` (residual convolutions) trained against a
/// frozen VGG16's Gram matrices.
const STYLE_TRANSFER: &str = "import torch
from torch.optim import Adam
from torch.utils.data import DataLoader
from torchvision import datasets
from models import TransformerNet, VGG16
from utils import gram_matrix, train_transform

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
dataloader = DataLoader(datasets.ImageFolder('data', train_transform(256)), batch_size=16,
                        num_workers=4, pin_memory=True, persistent_workers=True)
transformer = TransformerNet().to(device)
vgg = VGG16(requires_grad=False).to(device)
optimizer = Adam(transformer.parameters(), 1e-3)
gram_style = [gram_matrix(y) for y in vgg(style_image.to(device))]
for epoch in range(2):
    for images, _ in dataloader:
        images = images.to(device, non_blocking=True)
        optimizer.zero_grad()
        features = vgg(transformer(images))
        style_loss = sum(((gram_matrix(f) - g) ** 2).mean() for f, g in zip(features, gram_style))
        style_loss.backward()
        optimizer.step()
";

// Ex) from models import TransformerNet, VGG16 ... transformer = TransformerNet().to(device)
#[test]
fn fast_neural_styles_transformer_net_is_no_attention_model() {
    assert!(lines_of(&run(STYLE_TRANSFER), "EA202").is_empty());
    // outside a style-transfer script the name still names a transformer
    let other = STYLE_TRANSFER
        .replace("gram_matrix", "pairwise")
        .replace("gram_style", "targets")
        .replace("style_loss", "loss")
        .replace("style_image", "reference");
    assert_eq!(lines_of(&run(&other), "EA202"), vec![11]);
}

/// A forecasting script whose optimizer class is looked up by name in `torch.optim`; a
/// checkpoint loader earlier in the file places its own copy of the model.
const OPTIMIZER_BY_NAME: &str = "import torch
from torch import nn, optim
from torch.utils.data import DataLoader
from model import GRUForecast

device = torch.device('cuda')


def load_model_if_exists(path, params):
    if not path.exists():
        return None
    model = GRUForecast(hidden_size=params['hidden_size']).to(device)
    model.load_state_dict(torch.load(path)['model_state'])
    return model


def train_final(data, params, path):
    model = load_model_if_exists(path, params)
    if model is not None:
        return model
    loader = DataLoader(data, batch_size=params['batch_size'], num_workers=4, pin_memory=True,
                        persistent_workers=True)
    model = GRUForecast(hidden_size=params['hidden_size']).to(device)
    optimizer = getattr(optim, params['optimizer'])(model.parameters(), lr=params['lr'])
    for epoch in range(100):
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


if __name__ == '__main__':
    train_final(load_data(), {'hidden_size': 64, 'batch_size': 64, 'optimizer': 'Adam', 'lr': 1e-3}, ckpt)
";

// Ex) optimizer = getattr(optim, best_params['optimizer'])(model.parameters(), lr=lr)
#[test]
fn an_optimizer_looked_up_by_name_trains_its_model() {
    assert_eq!(lines_of(&run(OPTIMIZER_BY_NAME), "EA203"), vec![23]);
    // a `getattr` on another module builds no optimizer: the first placement stays the anchor
    let other = OPTIMIZER_BY_NAME.replace("getattr(optim,", "getattr(schedules,");
    assert_eq!(lines_of(&run(&other), "EA203"), vec![12]);
}

/// A language-model launcher: it builds a transformer and its optimizer, then hands both to a
/// runner object of the repository's own code.
const RUNNER_OBJECT: &str = "import argparse
import torch as tc
from model import PreactivationTranformer
from runner import Runner


def create_model(n_vocab, device):
    return PreactivationTranformer(n_vocab=n_vocab, n_emb=200, n_heads=4, n_layers=12).to(device)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--mode', choices=['train', 'generate'], default='train')
    args = parser.parse_args()
    device = 'cuda' if tc.cuda.is_available() else 'cpu'
    model = create_model(30000, device)
    optimizer = tc.optim.AdamW(model.parameters(), lr=2.5e-4)
    runner = Runner(batch_size=128, max_tokens=100)
    if args.mode == 'train':
        runner.train(max_steps=19500, model=model, optimizer=optimizer, device=device)
";

// Ex) runner = Runner(...) ... runner.train(model=model, optimizer=optimizer)
#[test]
fn an_imported_runner_handed_the_optimizer_trains_in_another_module() {
    let findings = run(RUNNER_OBJECT);
    // its precision settings are the runner's module's; the model it hands over is still
    // not compiled
    assert!(lines_of(&findings, "EA202").is_empty());
    assert_eq!(lines_of(&findings, "EA203"), vec![16]);
    // an object of unknown origin (a helper's result) is not known to train anything
    let unknown = RUNNER_OBJECT.replace("Runner(batch_size", "make_runner(batch_size");
    assert!(lines_of(&run(&unknown), "EA203").is_empty());
}

/// A notebook exported as a script: the same small network class is built twice with other
/// sizes, one experiment after the other.
const BUILT_TWICE: &str = "import torch

device = torch.device('cuda')


class Net(torch.nn.Module):
    def __init__(self, hidden, layers, inputs, outputs=1):
        super().__init__()
        self.input_layer = torch.nn.Linear(inputs, hidden)
        self.hidden_layer = torch.nn.Linear(hidden, hidden)
        self.output_layer = torch.nn.Linear(hidden, outputs)
        self.activation = torch.nn.Tanh()

    def forward(self, x):
        x = self.activation(self.input_layer(x))
        x = self.activation(self.hidden_layer(x))
        return self.output_layer(x)


x = torch.linspace(0, 1, 100, device=device).unsqueeze(1)
u_nn = Net(hidden=16, layers=2, inputs=1).to(device)
print(u_nn(x))

u_nn = Net(hidden=32, layers=1, inputs=1).to(device)
optimizer = torch.optim.Adam(u_nn.parameters())
for i in range(5000):
    optimizer.zero_grad()
    loss = ((u_nn(x) - torch.sin(x)) ** 2).mean()
    loss.backward()
    optimizer.step()
";

// Ex) u_nn = Net(hidden=16, ...) ... u_nn = Net(hidden=32, ...): the larger build is the size
#[test]
fn a_class_built_twice_with_other_sizes_is_sized_by_the_larger() {
    assert!(lines_of(&run(BUILT_TWICE), "EA202").is_empty());
    // a second build too large for the exemption is reported
    let large = BUILT_TWICE.replace("Net(hidden=32,", "Net(hidden=4096,");
    assert!(!lines_of(&run(&large), "EA202").is_empty());
}

/// A U-Net step that copies its masks to the device, then "copies" them again inside autocast.
const MOVED_TWICE: &str = "import torch
from torch.utils.data import DataLoader

DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'
loader = DataLoader(train_ds, batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True)
model = UNet().to(DEVICE)
optimizer = torch.optim.Adam(model.parameters())
scaler = torch.amp.GradScaler()
for epoch in range(10):
    for data, targets in loader:
        data = data.to(device=DEVICE, non_blocking=True)
        targets = targets.unsqueeze(1).to(device=DEVICE)
        with torch.autocast(device_type=DEVICE, dtype=torch.float16):
            targets = targets.to(device=DEVICE).squeeze(1)
            loss = torch.nn.functional.cross_entropy(model(data), targets)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
";

// Ex) targets = targets.unsqueeze(1).to(device=DEVICE) ... targets = targets.to(device=DEVICE)
#[test]
fn a_batch_copied_again_copies_nothing() {
    assert_eq!(lines_of(&run(MOVED_TWICE), "EA303"), vec![12]);
}

/// PyTorch 2.6's tutorials pick the device with `torch.accelerator`: CUDA on the GPU runner.
const ACCELERATOR_DEVICE: &str = "import torch
from torch import nn
from torch.utils.data import DataLoader

device = (
    torch.accelerator.current_accelerator().type
    if torch.accelerator.is_available()
    else \"cpu\"
)
print(f\"Using {device} device\")
train_loader = DataLoader(train_ds, batch_size=64, shuffle=True)
model = UNet(in_channels=3, out_channels=3).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(20):
    model.train()
    for images, masks in train_loader:
        images, masks = images.to(device), masks.to(device)
        loss = nn.functional.cross_entropy(model(images), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
#[test]
fn the_machines_accelerator_is_cuda_on_the_runner() {
    let findings = run(ACCELERATOR_DEVICE);
    assert_eq!(lines_of(&findings, "EA102"), vec![11]);
    assert_eq!(lines_of(&findings, "EA203"), vec![12]);
    assert_eq!(lines_of(&findings, "EA201"), vec![16]);
    // a device written out as the CPU stays there
    let cpu = ACCELERATOR_DEVICE.replace(
        "torch.accelerator.current_accelerator().type\n    if torch.accelerator.is_available()\n    else \"cpu\"",
        "\"cpu\"",
    );
    assert!(lines_of(&run(&cpu), "EA203").is_empty());
}

/// A k-fold trainer: each fold builds its loaders through a helper (handed half the machine's
/// cores) and trains them for several epochs through functions handed the loaders.
const FOLD_LOADERS: &str = "import multiprocessing
import torch


def get_loaders(dataset, train_idx, valid_idx, batch_size, num_workers):
    train_loader = torch.utils.data.DataLoader(torch.utils.data.Subset(dataset, train_idx), batch_size=batch_size, num_workers=num_workers, pin_memory=True, shuffle=True)
    val_loader = torch.utils.data.DataLoader(torch.utils.data.Subset(dataset, valid_idx), batch_size=batch_size, num_workers=num_workers, pin_memory=True)
    return train_loader, val_loader


def train_epoch(loader, model, optimizer):
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(dataset, folds):
    for fold, (train_idx, valid_idx) in enumerate(folds):
        model = Net().cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        train_loader, val_loader = get_loaders(dataset, train_idx, valid_idx, 64, multiprocessing.cpu_count() // 2)
        for epoch in range(30):
            train_epoch(train_loader, model, optimizer)


if __name__ == '__main__':
    main(load_dataset(), load_folds())
";

// Ex) for fold in ...: train_loader, val_loader = get_loaders(..., cpu_count() // 2); for epoch in ...: train(train_loader, ...)
#[test]
fn a_folds_loaders_built_by_a_helper_restart_every_epoch() {
    assert_eq!(lines_of(&run(FOLD_LOADERS), "EA103"), vec![6]);
    // without a worker the helper is handed, nothing restarts
    let none = FOLD_LOADERS.replace("multiprocessing.cpu_count() // 2", "0");
    assert!(lines_of(&run(&none), "EA103").is_empty());
}

/// BYOL pre-training whose only placement sits under a multi-GPU switch that is off: the
/// backbone and its wrapper are built and never moved in this configuration.
const PLACED_ONLY_WHEN_OFF: &str = "import torch
import torchvision

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
n_gpu = 1
train_loader = torch.utils.data.DataLoader(ds, batch_size=256, num_workers=8, pin_memory=True, persistent_workers=True)
resnet = torchvision.models.resnet50(pretrained=False)
model = BYOL(resnet, image_size=224, hidden_layer='avgpool')
if n_gpu > 1:
    model = torch.nn.DataParallel(model)
    model = model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
for epoch in range(100):
    for (x_i, x_j), _ in train_loader:
        x_i = x_i.to(device, non_blocking=True)
        x_j = x_j.to(device, non_blocking=True)
        loss = model(x_i, x_j)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) if n_gpu > 1: model = model.to(device) with n_gpu = 1: anchored where the network is built
#[test]
fn a_placement_under_a_switch_that_is_off_is_no_anchor() {
    assert_eq!(lines_of(&run(PLACED_ONLY_WHEN_OFF), "EA204"), vec![7]);
    // with the switch on, the placement is the anchor
    let on = PLACED_ONLY_WHEN_OFF.replace("n_gpu = 1", "n_gpu = 2");
    assert_eq!(lines_of(&run(&on), "EA204"), vec![11]);
}

/// A minimal Lightning runner: the module and data module come from the repository's own files,
/// and a bare `pytorch_lightning.Trainer` fits it.
const BARE_LIGHTNING_TRAINER: &str = "import os

import pytorch_lightning as pl

from data_loader_mnist import MNISTDataModule
from mnist import LitModel


def model_train():
    data_module = MNISTDataModule(data_dir=os.path.join(os.getcwd(), 'mnist_data'))
    trainer = pl.Trainer(max_epochs=10)
    model = LitModel()
    trainer.fit(model, datamodule=data_module)
    trainer.save_checkpoint('best.ckpt')


if __name__ == '__main__':
    model_train()
";

// Ex) trainer = pl.Trainer(max_epochs=10); trainer.fit(model, datamodule=dm)
#[test]
fn a_bare_pytorch_lightning_trainer_is_lightning_2s_on_the_gpu() {
    let findings = run(BARE_LIGHTNING_TRAINER);
    assert_eq!(lines_of(&findings, "EA201"), vec![11]);
    assert_eq!(lines_of(&findings, "EA203"), vec![12]);
    // a file written for Lightning 1.x (an API 2.x removed) trains on the CPU unless told
    let old = BARE_LIGHTNING_TRAINER.replace(
        "pl.Trainer(max_epochs=10)",
        "pl.Trainer(max_epochs=10, progress_bar_refresh_rate=20)",
    );
    assert!(lines_of(&run(&old), "EA203").is_empty());
}

/// A U^2-Net trained with Lightning, its trainer and module built and returned by a helper.
const RETURNED_MODULE: &str = "import argparse
import torch
import pytorch_lightning as pl
from model import U2NetPL


def load_model(args):
    u2net = U2NetPL(pretrained=args.pretrained_path, lr=args.lr)
    trainer = pl.Trainer(devices=torch.cuda.device_count(), strategy='ddp', accelerator='gpu',
                         max_epochs=args.max_epoch)
    return trainer, u2net


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--max_epoch', type=int, default=100)
    parser.add_argument('--lr', type=float, default=1e-4)
    parser.add_argument('--pretrained_path', type=str, default='')
    args = parser.parse_args()
    trainer, model = load_model(args)
    trainer.fit(model, train_loader(args), val_loader(args))
";

// Ex) trainer, model = load_model(args) ... def load_model(args): u2net = U2NetPL(...); return trainer, u2net
#[test]
fn a_module_a_helper_builds_and_returns_is_anchored_where_it_is_built() {
    let findings = run(RETURNED_MODULE);
    assert_eq!(lines_of(&findings, "EA203"), vec![8]);
    // U^2-Net is a convolutional network
    assert_eq!(lines_of(&findings, "EA204"), vec![8]);
}

/// A NER trainer whose device option defaults to the CPU; CUDA's generator is seeded only when
/// the option names a GPU, tested by its prefix.
const PREFIX_TESTED_DEVICE: &str = "import argparse
import random
import torch


def set_seed(opt, seed):
    random.seed(seed)
    torch.manual_seed(seed)
    if opt.device.startswith(\"cuda\"):
        print(\"using GPU...\", torch.cuda.current_device())
        torch.cuda.manual_seed_all(seed)


def train(opt, model, batches):
    model.to(opt.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(100):
        for batch in batches:
            loss = model(*batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--device', type=str, default=\"cpu\", choices=['cpu', 'cuda:0', 'cuda:1'])
    opt = parser.parse_args()
    set_seed(opt, 42)
    train(opt, NNCRF(opt), load_batches())
";

// Ex) parser.add_argument('--device', default="cpu") ... if opt.device.startswith("cuda"): torch.cuda.manual_seed_all(seed)
#[test]
fn a_device_option_tested_by_its_prefix_keeps_its_default() {
    assert!(lines_of(&run(PREFIX_TESTED_DEVICE), "EA201").is_empty());
    // with a GPU as the default, the file trains on CUDA
    let gpu = PREFIX_TESTED_DEVICE.replace("default=\"cpu\"", "default=\"cuda:0\"");
    assert_eq!(lines_of(&run(&gpu), "EA201"), vec![18]);
}

/// A logistic regression that picks a CUDA device in an `if` / `else` and never moves anything
/// to it: the work stays on the CPU.
const UNUSED_DEVICE_BRANCH: &str = "import torch
import torch.nn as nn

if torch.cuda.is_available():
    print('CUDA is available! We can use GPU acceleration.')
    device = torch.device('cuda')
else:
    device = torch.device('cpu')

x_train = torch.randn(455, 30)
y_train = torch.randint(0, 2, (455, 1)).float()
model = nn.Sequential(nn.Linear(30, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1))
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(1000):
    loss = criterion(model(x_train), y_train)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
";

// Ex) if torch.cuda.is_available(): device = torch.device("cuda") ... and no `.to(device)`
#[test]
fn a_device_chosen_in_branches_and_never_used_places_nothing() {
    assert!(lines_of(&run(UNUSED_DEVICE_BRANCH), "EA201").is_empty());
    // moved there, the model trains on CUDA
    let moved = UNUSED_DEVICE_BRANCH
        .replace("nn.Linear(4096, 1))", "nn.Linear(4096, 1)).to(device)")
        .replace(
            "model(x_train), y_train",
            "model(x_train.to(device)), y_train.to(device)",
        );
    assert_eq!(lines_of(&run(&moved), "EA201"), vec![15]);
}

/// A translation script: a CSV column batched by a DataLoader, each batch decoded by a helper
/// with the model's `generate`, the result written back to a CSV.
const GENERATE_IN_HELPER: &str = "import pandas as pd
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained('facebook/nllb-200-distilled-1.3B')
model = AutoModelForSeq2SeqLM.from_pretrained('facebook/nllb-200-distilled-1.3B').to('cuda').eval()
df = pd.read_csv('./edos.csv')


def batch_translation(batch_texts):
    inputs = tokenizer(batch_texts, return_tensors='pt', padding=True, truncation=True).to('cuda')
    tokens = model.generate(**inputs, max_length=70)
    return tokenizer.batch_decode(tokens, skip_special_tokens=True)


class TextDataset(torch.utils.data.Dataset):
    def __init__(self, texts):
        self.texts = texts

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, idx):
        return self.texts[idx]


loader = DataLoader(TextDataset(df['text'].tolist()), batch_size=8, shuffle=False)
translated = []
for batch in loader:
    translated.extend(batch_translation(batch))
df['translated_text'] = translated
df.to_csv('./edos_translated.csv', index=False)
";

// Ex) for batch in loader: translated.extend(batch_translation(batch)) with model.generate inside
#[test]
fn a_loop_decoding_through_a_helper_runs_the_model() {
    assert_eq!(lines_of(&run(GENERATE_IN_HELPER), "EA202"), vec![7]);
}

/// Segment Anything over a folder: the model from its registry, moved to the GPU, wrapped in
/// the automatic mask generator that runs it on each decoded image.
const SAM_MASK_GENERATOR: &str = "import glob
import cv2
from matplotlib import pyplot as plt
from segment_anything import sam_model_registry, SamAutomaticMaskGenerator

sam = sam_model_registry['vit_b'](checkpoint='sam_vit_b.pth')
sam = sam.cuda()
mask_generator = SamAutomaticMaskGenerator(sam)
for fname in glob.glob('photos/*.jpg'):
    img = cv2.imread(fname)
    masks = mask_generator.generate(img)
    plt.imshow(img)
    plt.savefig(fname.replace('photos', 'photos_sam'))
    plt.close()
";

// Ex) mask_generator = SamAutomaticMaskGenerator(sam) ... for f in files: img = cv2.imread(f); mask_generator.generate(img)
#[test]
fn a_library_object_built_around_the_model_runs_it() {
    let findings = run(SAM_MASK_GENERATOR);
    assert_eq!(lines_of(&findings, "EA502"), vec![10]);
    assert_eq!(lines_of(&findings, "EA202"), vec![7]);
    // the loop drives the model: it is no plain per-file loop
    assert!(lines_of(&findings, "EA602").is_empty());
    // a logger handed the model runs nothing
    let logged = SAM_MASK_GENERATOR
        .replace("SamAutomaticMaskGenerator(sam)", "ModelLogger(sam)")
        .replace(
            "from segment_anything import sam_model_registry, SamAutomaticMaskGenerator",
            "from segment_anything import sam_model_registry\nfrom tools import ModelLogger",
        );
    assert!(lines_of(&run(&logged), "EA502").is_empty());
}

/// An I3D trainer whose phase loop switches the model with `train(True)` / `train(False)`.
const TRAIN_FALSE_PHASE: &str = "import torch
from torch.utils.data import DataLoader

i3d = InceptionI3d(400, in_channels=3).cuda()
optimizer = torch.optim.SGD(i3d.parameters(), lr=0.1)
criterion = torch.nn.CrossEntropyLoss()
dataloaders = {'train': DataLoader(train_ds, batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True),
               'val': DataLoader(val_ds, batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True)}
for epoch in range(50):
    for phase in ['train', 'val']:
        if phase == 'train':
            i3d.train(True)
        else:
            i3d.train(False)
        for data in dataloaders[phase]:
            inputs, labels = data
            inputs = inputs.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            loss = criterion(i3d(inputs), labels)
            if phase == 'train':
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
";

// Ex) for phase in ['train', 'val']: ... else: i3d.train(False) ... for data in dataloaders[phase]:
#[test]
fn train_false_switches_the_model_to_evaluation() {
    assert_eq!(lines_of(&run(TRAIN_FALSE_PHASE), "EA401"), vec![15]);
    // `train(True)` for both phases evaluates nothing
    let both = TRAIN_FALSE_PHASE.replace("i3d.train(False)", "i3d.train(True)");
    assert!(lines_of(&run(&both), "EA401").is_empty());
}

/// A Hydra entry point training a Lightning wrapper of a U-Net: the accelerator comes from the
/// run's configuration.
const HYDRA_LIGHTNING: &str = "import hydra
import pytorch_lightning as pl
from omegaconf import OmegaConf
from torch.utils.data import DataLoader
from models.unet import Unet
from wrappers import UnetTrainingWrapper


@hydra.main(config_path='configs', config_name='config-default', version_base='1.3.2')
def train(cfg: OmegaConf):
    train_dataloader = DataLoader(train_ds(cfg), batch_size=cfg.train.batch_size, num_workers=cfg.train.num_workers)
    unet = Unet(in_channels=cfg.unet.in_channels, out_channels=cfg.unet.out_channels)
    unet_wrapper = UnetTrainingWrapper(unet, lr=cfg.train.lr)
    trainer = pl.Trainer(max_epochs=cfg.train.num_epochs, accelerator=cfg.train.accelerator,
                         precision=cfg.train.precision, log_every_n_steps=cfg.logger.log_every_n_steps,
                         progress_bar_refresh_rate=20)
    trainer.fit(unet_wrapper, train_dataloaders=train_dataloader)


if __name__ == '__main__':
    train()
";

// Ex) @hydra.main(...) def train(cfg): ... pl.Trainer(accelerator=cfg.train.accelerator)
#[test]
fn a_hydra_configs_accelerator_is_the_runners_gpu() {
    let findings = run(HYDRA_LIGHTNING);
    assert_eq!(lines_of(&findings, "EA102"), vec![11]);
    assert_eq!(lines_of(&findings, "EA204"), vec![13]);
    // a plain function's parameter is not Hydra's configuration
    let plain = HYDRA_LIGHTNING.replace(
        "@hydra.main(config_path='configs', config_name='config-default', version_base='1.3.2')\n",
        "",
    );
    assert!(lines_of(&run(&plain), "EA102").is_empty());
}

/// A GAN script whose trainer object (of the repository's own code) runs one step per network:
/// `discriminator_trainstep` and `generator_trainstep`.
const GAN_TRAINSTEPS: &str = "import torch
from torch import nn
from gan_training.train import Trainer
from gan_training.config import build_models, build_optimizers, load_config

config = load_config('configs/celebA.yaml')
device = torch.device('cuda:0')
train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=64, num_workers=8, shuffle=True, pin_memory=True, persistent_workers=True)
generator, discriminator = build_models(config)
generator = generator.to(device)
discriminator = discriminator.to(device)
g_optimizer, d_optimizer = build_optimizers(generator, discriminator, config)
trainer = Trainer(generator, discriminator, g_optimizer, d_optimizer)
it = 0
while True:
    for x_real, y in train_loader:
        it += 1
        x_real, y = x_real.to(device, non_blocking=True), y.to(device, non_blocking=True)
        z = torch.randn(64, 256, device=device)
        dloss, reg = trainer.discriminator_trainstep(x_real, y, z)
        if (it + 1) % 2 == 0:
            gloss = trainer.generator_trainstep(y, z)
        print('it %4d d_loss = %.4f' % (it, dloss))
";

// Ex) dloss, reg = trainer.discriminator_trainstep(x_real, y, z)
#[test]
fn a_gan_trainers_per_network_train_steps_train() {
    let findings = run(GAN_TRAINSTEPS);
    assert_eq!(lines_of(&findings, "EA201"), vec![16]);
    assert_eq!(lines_of(&findings, "EA504"), vec![23]);
    // a method named for something else trains nothing
    let other = GAN_TRAINSTEPS
        .replace("discriminator_trainstep", "discriminator_summary")
        .replace("generator_trainstep", "generator_summary");
    assert!(lines_of(&run(&other), "EA201").is_empty());
}

/// A K-FAC CIFAR script: the network comes from the repository's factory, named by an option
/// that defaults to a VGG.
const NETWORK_FACTORY: &str = "import argparse
import torch
from utils.network_utils import get_network

parser = argparse.ArgumentParser()
parser.add_argument('--network', default='vgg16_bn', type=str)
parser.add_argument('--device', default='cuda', type=str)
args = parser.parse_args()
net = get_network(args.network, depth=19, num_classes=10)
net = net.to(args.device)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
trainloader = torch.utils.data.DataLoader(trainset, batch_size=128, num_workers=4, pin_memory=True, persistent_workers=True)
for epoch in range(200):
    for inputs, targets in trainloader:
        inputs, targets = inputs.to(args.device, non_blocking=True), targets.to(args.device, non_blocking=True)
        loss = torch.nn.functional.cross_entropy(net(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) net = get_network(args.network, ...) with `--network` defaulting to 'vgg16_bn'
#[test]
fn a_network_factory_named_a_convolutional_family_builds_one() {
    assert_eq!(lines_of(&run(NETWORK_FACTORY), "EA204"), vec![10]);
    // a factory handed a transformer's name builds no convolutional network
    let vit = NETWORK_FACTORY.replace("'vgg16_bn'", "'vit_b_16'");
    assert!(lines_of(&run(&vit), "EA204").is_empty());
}

/// The DCGAN tutorial's initialiser: it tests each module's class name for `Conv` and is applied
/// to a generator whose layers live in another file.
const CLASSNAME_INIT: &str = "import torch
import torch.nn as nn
from models import Generator, Discriminator


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)


device = torch.device('cuda:0')
netG = Generator(ngpu=1).to(device)
netG.apply(weights_init)
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4)
loader = torch.utils.data.DataLoader(ds, batch_size=128, num_workers=2, pin_memory=True, persistent_workers=True)
for epoch in range(5):
    for data, _ in loader:
        noise = torch.randn(128, 100, 1, 1, device=device)
        loss = netG(noise).mean()
        optimizerG.zero_grad()
        loss.backward()
        optimizerG.step()
";

// Ex) classname = m.__class__.__name__; if classname.find('Conv') != -1: ... netG.apply(weights_init)
#[test]
fn an_initialiser_testing_class_names_for_conv_shows_convolutions() {
    assert_eq!(lines_of(&run(CLASSNAME_INIT), "EA204"), vec![15]);
    // an initialiser of linear layers only shows none
    let linear = CLASSNAME_INIT.replace("classname.find('Conv')", "classname.find('Linear')");
    assert!(lines_of(&run(&linear), "EA204").is_empty());
}

/// A temporal convolutional network trained on price windows.
const TEMPORAL_CONV: &str = "import torch
from model import TCN

device = torch.device('cuda')
loader = torch.utils.data.DataLoader(windows, batch_size=256, num_workers=4, pin_memory=True, persistent_workers=True)
net = TCN(hidden_dim=64, num_levels=4).to(device)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
for epoch in range(50):
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        loss = torch.nn.functional.mse_loss(net(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) net = TCN(hidden_dim=64, num_levels=4).to(device)
#[test]
fn a_temporal_convolutional_network_is_convolutional() {
    let findings = run(TEMPORAL_CONV);
    assert_eq!(lines_of(&findings, "EA204"), vec![6]);
    // its matmuls are cuDNN's convolutions: no TF32 finding
    assert!(lines_of(&findings, "EA202").is_empty());
}

/// A pix2pix-style trainer of the repository's own code: each batch is set as input and
/// `optimize_parameters()` runs the forward, backward and step.
const OPTIMIZE_PARAMETERS: &str = "import torch
from trainer import TrainerDDP

model = TrainerDDP(opt, 0)
model.model.cuda(0)
train_loader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
for epoch in range(opt.epoch):
    model.train()
    for i, (img, label) in enumerate(train_loader):
        model.set_input((img, label))
        model.forward()
        loss = model.get_loss()
        model.optimize_parameters()
";

// Ex) model.set_input(batch); model.optimize_parameters()
#[test]
fn optimize_parameters_is_a_training_step() {
    let findings = run(OPTIMIZE_PARAMETERS);
    assert_eq!(lines_of(&findings, "EA201"), vec![9]);
    // a training loop, not an evaluation one
    assert!(lines_of(&findings, "EA401").is_empty());
}

/// A speech-commands script: its accuracy helper runs the model over a loader with autograd on.
const ACCURACY_HELPER: &str = "import torch

use_cuda = torch.cuda.is_available()
model = VGG1d().cuda()
optimizer = torch.optim.Adam(model.parameters())


def train(model, dataloader):
    model.train()
    for data, target in dataloader:
        loss = torch.nn.functional.cross_entropy(model(data.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def cal_accuracy(model, dataloader):
    correct = 0
    for data, target in dataloader:
        if use_cuda:
            data, target = data.cuda(), target.cuda()
        pred = model(data).argmax(1)
        correct += pred.eq(target).sum()
    return int(correct) / len(dataloader.dataset)


if __name__ == '__main__':
    for epoch in range(10):
        train(model, train_loader)
    model.eval()
    print(cal_accuracy(model, test_loader))
";

// Ex) def cal_accuracy(model, dataloader): for data, target in dataloader: model(data)
#[test]
fn an_accuracy_helper_is_an_evaluation() {
    assert_eq!(lines_of(&run(ACCURACY_HELPER), "EA401"), vec![19]);
    // under no_grad, nothing to report
    let guarded = ACCURACY_HELPER.replace(
        "    print(cal_accuracy(model, test_loader))",
        "    with torch.no_grad():\n        print(cal_accuracy(model, test_loader))",
    );
    assert!(lines_of(&run(&guarded), "EA401").is_empty());
}

/// A BirdCLEF inference model: a timm backbone named by the configuration, and a linear head.
const OPAQUE_BACKBONE: &str = "import timm
import torch
import torch.nn as nn


class BirdModel(nn.Module):
    def __init__(self, config, num_classes):
        super().__init__()
        self.backbone = timm.create_model(config.model_name, pretrained=False, in_chans=1)
        self.classifier = nn.Linear(self.backbone.num_features, num_classes)

    def forward(self, x):
        return self.classifier(self.backbone(x))


def predict(config, loader, num_classes):
    model = BirdModel(config, num_classes).to('cuda')
    model.eval()
    outputs = []
    with torch.no_grad():
        for x in loader:
            outputs.append(model(x.to('cuda', non_blocking=True)))
    return outputs


if __name__ == '__main__':
    predict(load_config(), load_loader(), 206)
";

// Ex) self.backbone = timm.create_model(config.model_name, ...); self.classifier = nn.Linear(d, n)
#[test]
fn a_linear_head_on_a_backbone_named_by_the_configuration_shows_no_matmul_network() {
    assert!(lines_of(&run(OPAQUE_BACKBONE), "EA202").is_empty());
    // a backbone named in the file is read by its name
    let vit = OPAQUE_BACKBONE.replace("config.model_name", "'vit_base_patch16_224'");
    assert_eq!(lines_of(&run(&vit), "EA202"), vec![17]);
}
