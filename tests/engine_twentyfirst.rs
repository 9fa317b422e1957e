//! The twenty-first accuracy round: shapes from the blind waves g491– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// Loaders kept in a dict by phase; a nested function trains and validates one phase at a
/// time, and the test loader is read once after training.
const PHASE_FUNCTION: &str = "import torch
from torch import nn, optim
from torch.utils.data import DataLoader
from torchvision import models


def main(train_dataset, val_dataset, test_dataset, device):
    dataloaders = {
        'train': DataLoader(train_dataset, batch_size=32, shuffle=True, num_workers=4, pin_memory=True),
        'val': DataLoader(val_dataset, batch_size=32, shuffle=False, num_workers=4, pin_memory=True),
        'test': DataLoader(test_dataset, batch_size=32, shuffle=False, num_workers=4, pin_memory=True),
    }
    model = models.resnet50(weights=None).to(device)
    criterion = nn.BCEWithLogitsLoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)

    def run_epoch(phase):
        model.train() if phase == 'train' else model.eval()
        for inputs, labels in dataloaders[phase]:
            inputs = inputs.to(device)
            labels = labels.to(device).float()
            optimizer.zero_grad()
            with torch.set_grad_enabled(phase == 'train'):
                loss = criterion(model(inputs).squeeze(), labels)
                if phase == 'train':
                    loss.backward()
                    optimizer.step()

    for epoch in range(10):
        run_epoch('train')
        run_epoch('val')

    model.eval()
    preds = []
    with torch.no_grad():
        for inputs, labels in dataloaders['test']:
            inputs = inputs.to(device)
            preds.append(model(inputs))
    return preds
";

// Ex) run_epoch('train'); run_epoch('val') every epoch, dataloaders['test'] read once
#[test]
fn a_phase_passed_to_a_function_reads_only_the_loaders_it_names() {
    let report = run(PHASE_FUNCTION);
    assert_eq!(lines_of(&report, "EA103"), vec![9, 10]);
    // a phase the calls never pass is not read per epoch
    let any_phase = PHASE_FUNCTION.replace("run_epoch('val')", "run_epoch(phase_name)");
    assert_eq!(lines_of(&run(&any_phase), "EA103"), vec![9, 10, 11]);
}

// Ex) for inputs, labels in dataloaders['test']: inputs.to(device), every loader pinned
#[test]
fn an_entry_of_a_dict_of_pinned_loaders_gives_pinned_batches() {
    assert_eq!(lines_of(&run(PHASE_FUNCTION), "EA303"), vec![20, 21, 37]);
    let unpinned = PHASE_FUNCTION.replace(
        "shuffle=False, num_workers=4, pin_memory=True),\n    }",
        "shuffle=False, num_workers=4),\n    }",
    );
    assert_eq!(lines_of(&run(&unpinned), "EA303"), vec![20, 21]);
}

/// Result files listed with a filter, each opened through a path built from its name.
const RESULTS_PER_FILE: &str = "import os
import json


def main(folder):
    subjects = sorted([f.split('_result.json')[0] for f in os.listdir(folder) if '_result.json' in f])
    results = {}
    for sub in subjects:
        path = os.path.join(folder, sub + '_result.json')
        with open(path) as fh:
            rows = [json.loads(line) for line in fh]
        results[sub] = sum(r['correct'] for r in rows) / len(rows)
    return results


if __name__ == '__main__':
    print(main('results'))
";

// Ex) for sub in subjects: path = os.path.join(folder, sub + ...); open(path)
#[test]
fn a_file_opened_through_a_path_built_from_the_entry_is_per_file_work() {
    assert_eq!(lines_of(&run(RESULTS_PER_FILE), "EA602"), vec![8]);
    // the same file opened on every pass is not work per entry
    let same = RESULTS_PER_FILE.replace("with open(path) as fh", "with open('all.jsonl') as fh");
    assert!(lines_of(&run(&same), "EA602").is_empty());
}

/// Scripts copied into a folder: each is read and written back as it is.
const COPY_PER_FILE: &str = "import os


def install(src, dst):
    for root, dirs, files in os.walk(src):
        for f in files:
            srcfile = os.path.join(root, f)
            with open(srcfile, 'rb') as f:
                data = f.read()
            with open(os.path.join(dst, os.path.basename(srcfile)), 'wb') as out:
                out.write(data)


if __name__ == '__main__':
    install('scripts', 'bin')
";

// Ex) with open(srcfile, 'rb') as f: data = f.read() ... out.write(data)
#[test]
fn a_file_read_and_written_back_through_a_built_path_is_a_copy() {
    assert!(lines_of(&run(COPY_PER_FILE), "EA602").is_empty());
    // its content parsed, the loop does per-file work
    let parsed = COPY_PER_FILE
        .replace("import os\n", "import os\nimport json\n")
        .replace("data = f.read()", "data = json.dumps(json.load(f))");
    assert_eq!(lines_of(&run(&parsed), "EA602"), vec![7]);
}

// Ex) test_data.py: import unittest ... for p in VALID_FILES: json.loads(p.read_bytes())
#[test]
fn a_unit_test_module_reading_its_fixtures_is_not_a_pipeline() {
    let fixtures = "import json
import unittest
from pathlib import Path

DATA_DIR = Path(__file__).parent / 'data'
VALID_FILES = tuple((DATA_DIR / 'valid').glob('**/*.toml'))
expected = []
for p in VALID_FILES:
    json_path = p.with_suffix('.json')
    expected.append(json.loads(json_path.read_bytes().decode()))


class TestData(unittest.TestCase):
    def test_valid(self):
        self.assertTrue(expected)
";
    let named = |name: &str| {
        efficiency_audit::analysis::analyze_file(
            name,
            fixtures.as_bytes(),
            &efficiency_audit::config::Rules::default(),
        )
    };
    assert!(lines_of(&named("test/test_data.py"), "EA602").is_empty());
    // the same loop in a data script is reported
    assert_eq!(lines_of(&named("prepare_data.py"), "EA602"), vec![8]);
}

/// A trainer class whose CUDA switch is a constructor parameter, given an opt-in flag.
const TRAINER_CUDA_SWITCH: &str = "import argparse
import torch
import torch.nn as nn
import torch.optim as optim
import torchvision
from model import Resnet


class Trainer:
    def __init__(self, num_workers=2, cuda=False, epochs=5):
        self.num_workers = num_workers
        self.epochs = epochs
        self.device = ('cuda' if torch.cuda.is_available() else 'cpu') if cuda else 'cpu'
        self.model = Resnet().to(self.device)
        self.optimizer = optim.SGD(self.model.parameters(), lr=0.1)

    def load_data(self):
        trainset = torchvision.datasets.CIFAR10(root='./data', train=True, download=True)
        self.trainloader = torch.utils.data.DataLoader(
            trainset, batch_size=128, shuffle=True, num_workers=self.num_workers)
        testset = torchvision.datasets.CIFAR10(root='./data', train=False, download=True)
        self.testloader = torch.utils.data.DataLoader(
            testset, batch_size=100, shuffle=False, num_workers=self.num_workers)

    def train(self):
        criterion = nn.CrossEntropyLoss()
        for epoch in range(self.epochs):
            for inputs, targets in self.trainloader:
                inputs, targets = inputs.to(self.device), targets.to(self.device)
                self.optimizer.zero_grad()
                loss = criterion(self.model(inputs), targets)
                loss.backward()
                self.optimizer.step()
                print(loss.item())


parser = argparse.ArgumentParser()
parser.add_argument('--workers', default=0, type=int)
parser.add_argument('--cuda', action='store_true')
args = parser.parse_args()
trainer = Trainer(num_workers=args.workers, cuda=args.cuda)
trainer.load_data()
trainer.train()
";

// Ex) Trainer(cuda=args.cuda) with `--cuda` store_true: def __init__(self, cuda=False)
#[test]
fn a_constructor_parameter_given_an_opt_in_flag_keeps_the_work_on_the_cpu() {
    let report = run(TRAINER_CUDA_SWITCH);
    let ids = common::ids_of(&report);
    assert!(
        !ids.iter()
            .any(|i| ["EA102", "EA201", "EA203", "EA204", "EA301"].contains(&i.as_str())),
        "{ids:?}"
    );
    // the training loader loads in the main process; the test loader is never read
    assert_eq!(lines_of(&report, "EA101"), vec![19]);
    // the flag on as shipped: the GPU rules apply
    let on = TRAINER_CUDA_SWITCH.replace(
        "parser.add_argument('--cuda', action='store_true')",
        "parser.add_argument('--cuda', default=True)",
    );
    assert_eq!(lines_of(&run(&on), "EA201"), vec![28]);
}

/// A transformer classifier fed the IMDB word ids Keras padded ahead of time.
const KERAS_IDS: &str = "import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset
from keras.preprocessing import sequence
from keras.datasets import imdb

max_features, maxlen, batch_size = 20000, 200, 64
(x_train, y_train), (x_test, y_test) = imdb.load_data(num_words=max_features)
x_train = sequence.pad_sequences(x_train, maxlen=maxlen)
train_data = TensorDataset(torch.tensor(x_train, dtype=torch.long), torch.tensor(y_train, dtype=torch.long))
train_loader = DataLoader(train_data, batch_size=batch_size, shuffle=True)
device = torch.device('cuda')
model = nn.Sequential(nn.Embedding(max_features, 512), nn.Flatten(), nn.Linear(512 * maxlen, 2)).to(device)
optimizer = optim.Adam(model.parameters())
for epoch in range(5):
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
";

// Ex) x_train = sequence.pad_sequences(x_train, maxlen); DataLoader(TensorDataset(ids, y))
#[test]
fn word_ids_keras_padded_ahead_of_time_are_token_batches() {
    assert!(lines_of(&run(KERAS_IDS), "EA102").is_empty());
    // the same loader over images is pinned for its copies
    let images = KERAS_IDS
        .replace(
            "from keras.datasets import imdb\n",
            "from keras.datasets import cifar10\n",
        )
        .replace(
            "imdb.load_data(num_words=max_features)",
            "cifar10.load_data()",
        )
        .replace(
            "x_train = sequence.pad_sequences(x_train, maxlen=maxlen)\n",
            "",
        );
    assert_eq!(lines_of(&run(&images), "EA102"), vec![11]);
}

/// A step timed on whichever accelerator the script found, the syncs in two branches.
const TIMED_BRANCHES: &str = "import time
import torch
from model import GPT

device = 'cuda'
model = GPT().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(5000):
    t0 = time.time()
    x, y = torch.randint(0, 50257, (8, 1024), device=device), torch.randint(0, 50257, (8, 1024), device=device)
    with torch.autocast(device_type='cuda', dtype=torch.bfloat16):
        logits, loss = model(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if device == 'cuda':
        torch.cuda.synchronize()
    elif device == 'mps':
        torch.mps.synchronize()
    t1 = time.time()
    if step % 100 == 0:
        print(f'step {step} {(t1 - t0) * 1000:.1f} ms')
";

// Ex) if device == 'cuda': torch.cuda.synchronize() / elif ...: torch.mps.synchronize(); t1 = time.time()
#[test]
fn a_sync_timing_the_step_in_one_branch_of_a_device_test_is_measurement() {
    assert!(lines_of(&run(TIMED_BRANCHES), "EA302").is_empty());
    // without the clock read after it, the sync stalls every step
    let untimed = TIMED_BRANCHES
        .replace("    t1 = time.time()\n", "")
        .replace("(t1 - t0)", "(0)");
    assert_eq!(lines_of(&run(&untimed), "EA302"), vec![17]);
}

/// A small MLP sized by module-level constants, trained on CUDA.
const CONSTANT_SIZES: &str = "import torch
import torch.nn.functional as F
from torch import nn
from torch.optim import SGD

INPUT_SIZE, HIDDEN_SIZE, OUTPUT_SIZE = 1, 64, 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(INPUT_SIZE, HIDDEN_SIZE)
        self.fc2 = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)
        self.out = nn.Linear(HIDDEN_SIZE, OUTPUT_SIZE)

    def forward(self, x):
        return self.out(F.relu(self.fc2(F.relu(self.fc1(x)))))


model = Model().cuda()
opt = SGD(model.parameters(), lr=0.1)
for step in range(1000):
    x = torch.randn(10, 1, device='cuda')
    loss = F.mse_loss(model(x), torch.sin(x))
    opt.zero_grad()
    loss.backward()
    opt.step()
";

// Ex) INPUT_SIZE, HIDDEN_SIZE, OUTPUT_SIZE = 1, 64, 1 ... nn.Linear(INPUT_SIZE, HIDDEN_SIZE)
#[test]
fn layers_sized_by_module_constants_are_counted() {
    let ids = common::ids_of(&run(CONSTANT_SIZES));
    assert!(!ids.iter().any(|i| i == "EA201" || i == "EA202"), "{ids:?}");
    // one constant bound twice has no single value: the model is not counted
    let rebound = CONSTANT_SIZES.replace(
        "\n\nclass Model",
        "\nHIDDEN_SIZE = int(input())\n\nclass Model",
    );
    assert_eq!(lines_of(&run(&rebound), "EA201"), vec![23]);
    // and wide layers are not small
    let wide = CONSTANT_SIZES.replace("1, 64, 1", "1, 4096, 1");
    assert_eq!(lines_of(&run(&wide), "EA201"), vec![22]);
}

// Ex) Trainer(model=model, args=training_args, train_dataset=tokenized_datasets['train'])
#[test]
fn a_trainer_given_a_tokenized_dataset_feeds_token_batches() {
    let src = "from transformers import Trainer, TrainingArguments

training_args = TrainingArguments(output_dir='./results', learning_rate=2e-5, num_train_epochs=3)
trainer = Trainer(model=model, args=training_args, train_dataset=tokenized_datasets['train'])
trainer.train()
";
    assert!(lines_of(&run(src), "EA101").is_empty());
    let raw = src.replace("tokenized_datasets['train']", "datasets['train']");
    assert_eq!(lines_of(&run(&raw), "EA101"), vec![3]);
}

/// Images of two folders written out, flipped and saved one at a time.
const FOLDERS_WRITTEN_OUT: &str = "import os
import cv2

input_paths = ['data/train/images', 'data/train/labels']
output_paths = ['data/aug/images', 'data/aug/labels']

for input, output in zip(input_paths, output_paths):
    os.makedirs(output, exist_ok=True)
    for name in os.listdir(input):
        image = cv2.imread(os.path.join(input, name))
        cv2.imwrite(os.path.join(output, 'h' + name), cv2.flip(image, 1))
";

// Ex) for input, output in zip(input_paths, output_paths): for name in os.listdir(input): ...
#[test]
fn a_loop_over_folders_written_out_heads_the_nest_of_file_loops() {
    assert_eq!(lines_of(&run(FOLDERS_WRITTEN_OUT), "EA602"), vec![7]);
    // one folder, no outer loop: the file loop itself
    let one = "import os\nimport cv2\n\nfor name in os.listdir('data'):\n    image = cv2.imread(os.path.join('data', name))\n    cv2.imwrite(os.path.join('out', name), cv2.flip(image, 1))\n";
    assert_eq!(lines_of(&run(one), "EA602"), vec![4]);
}

// Ex) parser.add_argument('--decoder_attention_type', default=None) ... model = build_model(args)
#[test]
fn an_option_named_for_attention_shows_no_matmul_work() {
    let src = "import argparse
import torch
from models import build_model

parser = argparse.ArgumentParser()
parser.add_argument('--model', type=str, default='unet')
parser.add_argument('--decoder_attention_type', type=str, default=None, choices=['scse'])
args = parser.parse_args()
model = build_model(args.model, attention=args.decoder_attention_type).cuda()
optimizer = torch.optim.Adam(model.parameters())
for step in range(10000):
    x = torch.randn(4, 3, 256, 256, device='cuda')
    loss = model(x).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";
    assert!(lines_of(&run(src), "EA202").is_empty());
    // a transformer the file names is matmul work
    let named = src.replace("default='unet'", "default='vit_b_16'");
    assert_eq!(lines_of(&run(&named), "EA202"), vec![9]);
}

/// A CLIP-style model trained on images and their captions, a DistilBERT text tower inside.
const IMAGES_AND_CAPTIONS: &str = "import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from model import CLIP_DistilBert_ResNet
from dataset import load_datasets
from transformers import DistilBertTokenizer

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
tokenizer = DistilBertTokenizer.from_pretrained('distilbert-base-uncased')


def main():
    model = CLIP_DistilBert_ResNet(tokenizer).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train_dataset, val_dataset = load_datasets()
    train_loader = DataLoader(train_dataset, batch_size=64, shuffle=True)
    for epoch in range(10):
        for images, texts in train_loader:
            images = images.to(device)
            logits_per_image, logits_per_text = model(images, texts)
            labels = torch.arange(images.size(0), device=device)
            loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    main()
";

// Ex) for images, texts in train_loader: ... CLIP_DistilBert_ResNet(...)
#[test]
fn a_loader_of_images_and_captions_is_not_token_batches() {
    let report = run(IMAGES_AND_CAPTIONS);
    assert_eq!(lines_of(&report, "EA101"), vec![16]);
    assert_eq!(lines_of(&report, "EA102"), vec![16]);
    // a text classifier's batches of ids are
    let text = IMAGES_AND_CAPTIONS
        .replace("CLIP_DistilBert_ResNet", "DistilBertClassifier")
        .replace("for images, texts in", "for ids, texts in")
        .replace("images = images.to(device)", "ids = ids.to(device)")
        .replace("model(images, texts)", "model(ids, texts)")
        .replace("images.size(0)", "ids.size(0)");
    assert!(lines_of(&run(&text), "EA101").is_empty());
    assert!(lines_of(&run(&text), "EA102").is_empty());
}

/// build-nanogpt's device choice by statements, and a step with a CPU fallback.
const CHAINED_DEVICE: &str = "import torch
from model import GPT

device = 'cpu'
if torch.cuda.is_available():
    device = 'cuda'
elif hasattr(torch.backends, 'mps') and torch.backends.mps.is_available():
    device = 'mps'
model = GPT().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(5000):
    x, y = torch.randint(0, 50257, (8, 1024)), torch.randint(0, 50257, (8, 1024))
    x, y = x.to(device), y.to(device)
    if device == 'cuda':
        with torch.autocast(device_type='cuda', dtype=torch.bfloat16):
            logits, loss = model(x, y)
        total = loss.item()
    else:
        logits, loss = model(x, y)
        total = loss.item()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
";

// Ex) device = 'cpu'; if torch.cuda.is_available(): device = 'cuda' ... if device == 'cuda': ... else: loss.item()
#[test]
fn the_cpu_fallback_of_a_device_chosen_by_statements_does_not_run_on_cuda() {
    assert_eq!(lines_of(&run(CHAINED_DEVICE), "EA301"), vec![17]);
    // a choice the engine cannot decide leaves both branches live
    let undecided = CHAINED_DEVICE.replace("if torch.cuda.is_available():", "if use_gpu():");
    assert_eq!(lines_of(&run(&undecided), "EA301"), vec![17, 20]);
}

// Ex) from dataloader import * ... loader = DataLoader(opt)
#[test]
fn a_data_loader_class_star_imported_from_the_repository_is_not_torchs() {
    let src = "import torch
import models
from dataloader import *


def train(opt):
    loader = DataLoader(opt)
    model = models.setup(opt).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(opt.epochs):
        for data in loader:
            loss = model(data['fc_feats'].cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
";
    let ids = common::ids_of(&run(src));
    assert!(!ids.iter().any(|i| i == "EA101" || i == "EA102"), "{ids:?}");
    // torch's loader, imported by name, is torch's
    let torch = src.replace(
        "from dataloader import *\n",
        "from dataloader import *\nfrom torch.utils.data import DataLoader\n",
    );
    assert_eq!(lines_of(&run(&torch), "EA101"), vec![8]);
}

/// Calibration images stacked into one array, file by file.
const STACKED_PER_FILE: &str = "import os
import numpy as np
from PIL import Image

tmp = None
for f in os.listdir('work'):
    img = Image.open(os.path.join('work', f)).resize((256, 256))
    nparray = np.array(img).astype(np.float32)[np.newaxis]
    if tmp is not None:
        tmp = np.vstack((tmp, nparray))
    else:
        tmp = nparray.copy()
np.save('calibration.npy', tmp)
";

// Ex) if tmp is not None: tmp = np.vstack((tmp, x)) else: tmp = x.copy()
#[test]
fn an_accumulator_stacked_per_file_is_a_collection_not_carried_state() {
    assert_eq!(lines_of(&run(STACKED_PER_FILE), "EA602"), vec![6]);
    // a frame compared with the one before it carries state: the iterations depend
    let chained = STACKED_PER_FILE
        .replace(
            "tmp = np.vstack((tmp, nparray))",
            "diffs.append(nparray - tmp)\n        tmp = nparray",
        )
        .replace("tmp = None\n", "tmp = None\ndiffs = []\n")
        .replace(
            "np.save('calibration.npy', tmp)",
            "np.save('diffs.npy', np.stack(diffs))",
        );
    assert!(lines_of(&run(&chained), "EA602").is_empty());
}
