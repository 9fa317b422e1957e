//! The twenty-fourth accuracy round: shapes from the blind waves g604– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// An MNIST CNN that trains, then shows the predictions on one batch of the test loader read
/// through `enumerate`.
const ONE_BATCH: &str = "import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms, models

device = torch.device('cuda')
test_data = datasets.MNIST('./data', train=False, transform=transforms.ToTensor())
test_loader = DataLoader(test_data, batch_size=64, shuffle=False)
train_data = datasets.MNIST('./data', train=True, transform=transforms.ToTensor())
train_loader = DataLoader(train_data, batch_size=64, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)

model = models.resnet18(num_classes=10).to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for images, labels in train_loader:
        images, labels = images.to(device), labels.to(device)
        loss = nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

examples = enumerate(test_loader)
_, (example_data, example_targets) = next(examples)
with torch.no_grad():
    output = model(example_data.to(device))
";

// Ex) examples = enumerate(test_loader); _, (x, y) = next(examples)
#[test]
fn a_loader_read_once_through_an_enumerate_iterator_is_not_reported() {
    let out = run(ONE_BATCH);
    assert!(lines_of(&out, "EA101").is_empty());
    assert!(lines_of(&out, "EA102").is_empty());
    // read in a loop, it loads every batch
    let looped = ONE_BATCH.replace(
        "examples = enumerate(test_loader)\n_, (example_data, example_targets) = next(examples)\n",
        "for _, (example_data, example_targets) in enumerate(test_loader):\n    pass\n",
    );
    let out = run(&looped);
    assert_eq!(lines_of(&out, "EA101"), vec![8]);
    assert_eq!(lines_of(&out, "EA102"), vec![8]);
}

/// A counting helper whose one other call sits in a function nothing calls.
const HELPER: &str = "import torch
import torchvision

device = torch.device('cuda')
model = torchvision.models.resnet18().to(device)
optimizer = torch.optim.Adam(model.parameters())
loader = torch.utils.data.DataLoader(train_set, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)


def get_num_correct(preds, labels):
    return preds.argmax(dim=1).eq(labels).sum().item()


def accuracy(preds, labels):
    return get_num_correct(preds, labels) / len(labels)


for epoch in range(10):
    total_correct = 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        preds = model(images)
        loss = torch.nn.functional.cross_entropy(preds, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_correct += get_num_correct(preds, labels)
";

// Ex) def accuracy(preds, labels): return get_num_correct(preds, labels) / len(labels)  (unused)
#[test]
fn a_helper_call_in_an_uncalled_function_does_not_stop_the_helper_being_per_step() {
    assert_eq!(lines_of(&run(HELPER), "EA301"), vec![11]);
    // `accuracy` called once after training: the helper is not per step
    let called = format!("{HELPER}print(accuracy(model(x), y))\n");
    assert!(lines_of(&run(&called), "EA301").is_empty());
}

/// An LSTM text classifier over a corpus of word ids, sized by its vocabulary.
const WORD_IDS: &str = "import torch
from torch.utils.data import DataLoader
import utils.DataProcessing as DP
import utils.LSTMClassifier as LSTMC

corpus = DP.Corpus('data', filenames)
model = LSTMC.LSTMClassifier(embedding_dim=100, hidden_dim=50, vocab_size=len(corpus.dictionary), label_size=8)
model = model.cuda()
train_set = DP.TxtDatasetProcessing('data', 'train_txt', 32, corpus)
train_loader = DataLoader(train_set, batch_size=5, shuffle=True, num_workers=4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(50):
    for inputs, labels in train_loader:
        inputs, labels = inputs.cuda(), labels.cuda()
        loss = torch.nn.functional.cross_entropy(model(inputs.t()), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) LSTMClassifier(..., vocab_size=len(corpus.dictionary))
#[test]
fn a_model_sized_by_its_vocabulary_is_fed_token_ids() {
    assert!(lines_of(&run(WORD_IDS), "EA102").is_empty());
    // the same loop over images is a stream of copies worth pinning
    let images = WORD_IDS.replace("for inputs, labels in", "for images, labels in");
    let images = images.replace(
        "inputs, labels = inputs.cuda()",
        "inputs, labels = images.cuda()",
    );
    assert_eq!(lines_of(&run(&images), "EA102"), vec![10]);
}

/// MiDaS depth estimation on webcam frames.
const MIDAS: &str = "import cv2
import torch

model_type = \"DPT_Hybrid\"
midas = torch.hub.load(\"intel-isl/MiDaS\", model_type)
device = torch.device(\"cuda\")
midas.to(device)
midas.eval()
transform = torch.hub.load(\"intel-isl/MiDaS\", \"transforms\").dpt_transform
cap = cv2.VideoCapture(0)
while cap.isOpened():
    ret, frame = cap.read()
    with torch.no_grad():
        prediction = midas(transform(frame).to(device))
    cv2.imshow('depth', prediction.squeeze().cpu().numpy())
";

// Ex) midas = torch.hub.load("intel-isl/MiDaS", "DPT_Hybrid")
#[test]
fn midas_dense_prediction_transformers_run_matmuls() {
    assert_eq!(lines_of(&run(MIDAS), "EA202"), vec![7]);
}

/// A siamese network trained by Ignite's supervised trainer.
const IGNITE: &str = "import torch
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer, create_supervised_evaluator
from siamese_models import SiameseNet

train_loader = DataLoader(train_dataset, batch_size=512, shuffle=True, num_workers=4)
model = SiameseNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
trainer = create_supervised_trainer(model, optimizer, loss, device=\"cuda\")
evaluator = create_supervised_evaluator(model, device=\"cuda\")
trainer.run(train_loader, max_epochs=100)
";

// Ex) trainer = create_supervised_trainer(model, optimizer, loss, device="cuda")
#[test]
fn an_ignite_trainer_without_amp_mode_trains_in_fp32_on_pageable_batches() {
    let out = run(IGNITE);
    assert_eq!(lines_of(&out, "EA201"), vec![9]);
    assert_eq!(lines_of(&out, "EA102"), vec![6]);
    let amp = IGNITE.replace(
        "loss, device=\"cuda\")",
        "loss, device=\"cuda\", amp_mode=\"amp\")",
    );
    assert!(lines_of(&run(&amp), "EA201").is_empty());
}

/// An Ignite script with its own step functions: the evaluator's `run` is called each epoch
/// before the trainer's in the text.
const ENGINES: &str = "import torch
from ignite.engine import Engine, Events
from transformers import BertForSequenceClassification

model = BertForSequenceClassification.from_pretrained('bert-base-uncased').cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)

def train_step(engine, batch):
    optimizer.zero_grad()
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    return loss

trainer = Engine(train_step)

def test_step(engine, batch):
    with torch.no_grad():
        return model(**batch).logits

evaluator = Engine(test_step)

@trainer.on(Events.EPOCH_COMPLETED)
def log_results(trainer):
    evaluator.run(val_loader)

trainer.run(train_loader, max_epochs=3)
";

// Ex) trainer = Engine(train_step) ... evaluator.run(val_loader) ... trainer.run(train_loader)
#[test]
fn an_ignite_engine_stepping_the_optimizer_is_the_one_reported_without_amp() {
    assert_eq!(lines_of(&run(ENGINES), "EA201"), vec![15]);
}

/// A fine-tuning script whose loaders are built and returned by a function of the file, pinned
/// and given workers by tests of the device.
const RETURNED: &str = "import torch
from torchvision import datasets, models


def get_data_loaders(data_dir):
    ds_tr = datasets.ImageFolder(data_dir + '/train')
    ds_te = datasets.ImageFolder(data_dir + '/test')
    gpu = torch.cuda.is_available()
    w = 4 if gpu else 2
    return torch.utils.data.DataLoader(ds_tr, batch_size=64, num_workers=w, pin_memory=gpu), torch.utils.data.DataLoader(ds_te, batch_size=64, num_workers=w, pin_memory=gpu), ds_tr.classes


def main():
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    tr_l, te_l, classes = get_data_loaders('data')
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=64, num_workers=4, pin_memory=torch.cuda.is_available(), persistent_workers=True)
    model = models.resnet18(num_classes=len(classes)).to(device)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(15):
        for x, y in tr_l:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        for x, y in test_loader:
            x = x.to(device)
            print(model(x).argmax(1))


main()
";

// Ex) return DataLoader(ds_tr, ..., pin_memory=gpu), ... then tr_l, te_l, classes = get_data_loaders(...)
#[test]
fn loaders_returned_as_built_and_pinned_by_a_device_test() {
    let out = run(RETURNED);
    // the training loader, iterated every epoch under the name its caller binds
    assert_eq!(lines_of(&out, "EA103"), vec![10]);
    // `pin_memory=gpu` and `pin_memory=torch.cuda.is_available()` pin on the GPU runner:
    // their copies can overlap
    assert_eq!(lines_of(&out, "EA303"), vec![22, 27]);
    assert!(lines_of(&out, "EA102").is_empty());
    // pinned only where asked for
    let unpinned = RETURNED.replace(
        "pin_memory=torch.cuda.is_available()",
        "pin_memory=args.pin",
    );
    assert_eq!(lines_of(&run(&unpinned), "EA303"), vec![22]);
}

/// Perplexity of the repository's own causal language model.
const OWN_LM: &str = "import torch
from torch.utils.data import DataLoader
from model.model import VibyConfig, VibyForCausalLM

device = 'cuda'
model = VibyForCausalLM(VibyConfig()).to(device)
model.eval()
loader = DataLoader(dataset, batch_size=8, num_workers=4, pin_memory=True)
total = 0.0
with torch.no_grad():
    for x, y in loader:
        out = model(x.to(device, non_blocking=True), labels=y.to(device, non_blocking=True))
        total += out.loss
print(total / len(loader))
";

// Ex) model = VibyForCausalLM(config).to(device)
#[test]
fn a_class_named_for_a_language_model_head_is_a_transformer() {
    assert_eq!(lines_of(&run(OWN_LM), "EA202"), vec![6]);
    // a name that says nothing of its layers may be either
    let plain = OWN_LM.replace("VibyForCausalLM", "VibyModel");
    assert!(lines_of(&run(&plain), "EA202").is_empty());
}

/// A Faster R-CNN of the repository's own code trained on VOC.
const RCNN: &str = "import torch
from model.faster_rcnn import FasterRCNN

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
model = FasterRCNN(model_config, num_classes=21)
model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
for epoch in range(20):
    for im, target in loader:
        loss = model(im.to(device), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = FasterRCNN(model_config, num_classes=21)
#[test]
fn detectors_and_restoration_networks_are_convolutional_families() {
    assert_eq!(lines_of(&run(RCNN), "EA204"), vec![6]);
    let nafnet = RCNN
        .replace("FasterRCNN", "NAFNet")
        .replace("faster_rcnn", "nafnet");
    assert_eq!(lines_of(&run(&nafnet), "EA204"), vec![6]);
    // a name that says nothing of its layers may be either
    let other = RCNN
        .replace("FasterRCNN", "Detector")
        .replace("faster_rcnn", "detector");
    assert!(lines_of(&run(&other), "EA204").is_empty());
}

/// A tutorial step that builds bag-of-words loaders for a model it has not written yet, and
/// prints what it has built.
const PRINTS: &str = "import torch
from torch.utils.data import DataLoader
from torchvision import datasets

train_set = datasets.ImageFolder('data/train')
print(f'{len(train_set)} images')
model = torch.nn.Linear(10, 2).cuda()
train_loader = DataLoader(train_set, batch_size=16, shuffle=True)
";

// Ex) print(f"Vocab size {vocab_size}") ... train_loader = DataLoader(...)  (never read)
#[test]
fn an_unread_loader_of_a_file_that_prints_at_module_level_is_not_reported() {
    assert!(lines_of(&run(PRINTS), "EA101").is_empty());
    // without the print it may be a module imported for its loaders
    let module = PRINTS.replace("print(f'{len(train_set)} images')\n", "");
    assert_eq!(lines_of(&run(&module), "EA101"), vec![7]);
}

/// The network-slimming training script: a constructor of the repository's `models` package
/// looked up by the `--arch` option.
const ARCH_DICT: &str = "import argparse
import torch
import models

parser = argparse.ArgumentParser()
parser.add_argument('--arch', default='vgg', type=str)
parser.add_argument('--depth', default=16, type=int)
args = parser.parse_args()
model = models.__dict__[args.arch](depth=args.depth)
model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(160):
    for x, y in train_loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = models.__dict__[args.arch](dataset=args.dataset, depth=args.depth)
#[test]
fn a_constructor_looked_up_by_its_option_in_a_module_dict_names_its_family() {
    assert_eq!(lines_of(&run(ARCH_DICT), "EA204"), vec![10]);
    let vit = ARCH_DICT.replace("default='vgg'", "default='vit_small'");
    assert!(lines_of(&run(&vit), "EA204").is_empty());
}

/// A reward model trained with TRL's `RewardTrainer`, configured by `RewardConfig`.
const REWARD: &str = "from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer
from trl import RewardConfig, RewardTrainer

tokenizer = AutoTokenizer.from_pretrained('Qwen/Qwen2.5-0.5B-Instruct')
model = AutoModelForSequenceClassification.from_pretrained('Qwen/Qwen2.5-0.5B-Instruct', num_labels=1)
dataset = load_dataset('trl-lib/ultrafeedback_binarized', split='train')
training_args = RewardConfig(output_dir='Qwen2.5-0.5B-Reward', per_device_train_batch_size=2)
trainer = RewardTrainer(args=training_args, model=model, processing_class=tokenizer, train_dataset=dataset)
trainer.train()
";

// Ex) training_args = RewardConfig(output_dir=...) ... RewardTrainer(args=training_args, ...).train()
#[test]
fn trl_configurations_are_training_arguments() {
    let out = run(REWARD);
    assert_eq!(lines_of(&out, "EA201"), vec![8]);
    assert_eq!(lines_of(&out, "EA203"), vec![8]);
    let bf16 = REWARD.replace("batch_size=2)", "batch_size=2, bf16=True)");
    assert!(lines_of(&run(&bf16), "EA201").is_empty());
}

/// A Keras model predicting a contour mask for each image of a glob, saved as a PNG.
const PREDICT: &str = "import glob
import os
import sys
import cv2
import numpy as np
from keras.models import load_model
from keras.preprocessing.image import load_img, img_to_array

model = load_model(sys.argv[1])
for f in glob.glob(sys.argv[2]):
    img = img_to_array(load_img(f))
    pred = model.predict(np.array([img]))[0] * 255
    name, ext = os.path.splitext(os.path.basename(f))
    cv2.imwrite(f'out/{name}_predict.png', pred)
";

// Ex) for f in glob.glob(pattern): pred = model.predict(np.array([img]))[0]
#[test]
fn a_loop_predicting_with_a_model_per_file_is_a_step_of_inference() {
    assert!(lines_of(&run(PREDICT), "EA602").is_empty());
    // the same loop without the model is per-file work
    let plain = PREDICT.replace("model.predict(np.array([img]))[0]", "np.array([img])[0]");
    assert_eq!(lines_of(&run(&plain), "EA602"), vec![10]);
}

/// A training epoch whose progress bar is optional.
const OPTIONAL_BAR: &str = "import torch
from tqdm import tqdm
import torchvision


def train_epoch(model, train_loader, optimizer, device, use_tqdm=True):
    iterator = tqdm(train_loader, desc='Training') if use_tqdm else train_loader
    for inputs, targets in iterator:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()


device = torch.device('cuda')
train_loader = torch.utils.data.DataLoader(train_set, batch_size=128, num_workers=8, pin_memory=True, persistent_workers=True)
model = torchvision.models.densenet121().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(100):
    train_epoch(model, train_loader, optimizer, device)
";

// Ex) iterator = tqdm(train_loader, desc="Training") if use_tqdm else train_loader
#[test]
fn a_progress_bar_chosen_by_a_conditional_iterates_the_loader() {
    assert_eq!(lines_of(&run(OPTIONAL_BAR), "EA303"), vec![9]);
}

/// DeepSpeed's CIFAR-10 tutorial: the network is built twice, and the second build is handed
/// to `deepspeed.initialize`.
const DEEPSPEED: &str = "import torch
import torch.nn as nn
import deepspeed


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3072, 4096)
        self.out = nn.Linear(4096, 10)

    def forward(self, x):
        return self.out(torch.relu(self.fc(x.flatten(1))))


net = Net()
criterion = nn.CrossEntropyLoss()
args = add_argument()
net = Net()
parameters = filter(lambda p: p.requires_grad, net.parameters())
model_engine, optimizer, trainloader, _ = deepspeed.initialize(
    args=args, model=net, model_parameters=parameters, training_data=trainset)
for epoch in range(2):
    for inputs, labels in trainloader:
        outputs = model_engine(inputs.to(model_engine.local_rank))
        loss = criterion(outputs, labels.to(model_engine.local_rank))
        model_engine.backward(loss)
        model_engine.step()
";

// Ex) net = Net() ... net = Net(); deepspeed.initialize(args=args, model=net, ...)
#[test]
fn a_model_handed_to_deepspeed_is_anchored_at_its_last_build() {
    assert_eq!(lines_of(&run(DEEPSPEED), "EA203"), vec![19]);
}

/// A GTSRB classifier whose GPU switch is set by statements testing the device.
const USE_GPU: &str = "import torch
import torchvision

if torch.cuda.is_available():
    use_gpu = True
else:
    use_gpu = False
    print('Using CPU')
train_loader = torch.utils.data.DataLoader(train_data, batch_size=64, shuffle=True, num_workers=4, pin_memory=use_gpu, persistent_workers=True)
model = torchvision.models.resnet18(num_classes=43)
if use_gpu:
    model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for data, target in train_loader:
        if use_gpu:
            data = data.cuda()
            target = target.cuda()
        loss = torch.nn.functional.cross_entropy(model(data), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) if torch.cuda.is_available(): use_gpu = True  else: use_gpu = False ... pin_memory=use_gpu
#[test]
fn a_switch_set_in_the_branches_of_a_device_test_holds_its_cuda_value() {
    assert_eq!(lines_of(&run(USE_GPU), "EA303"), vec![17, 18]);
}

/// A Galaxy10 classifier whose loaders pin memory when the device they are handed is CUDA.
const HANDED_DEVICE: &str = "import torch
from torch.utils.data import DataLoader
from torchvision import datasets, models


def setup_device():
    if torch.cuda.is_available():
        return torch.device('cuda')
    return torch.device('cpu')


def load_data(train_dir, batch_size, device):
    train_dataset = datasets.ImageFolder(train_dir)
    return DataLoader(train_dataset, batch_size=batch_size, shuffle=True, num_workers=2, pin_memory=device.type == 'cuda', persistent_workers=True)


def main():
    device = setup_device()
    train_loader = load_data('data/train', 64, device)
    model = models.resnet18(num_classes=10).to(device)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(30):
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


main()
";

// Ex) DataLoader(..., pin_memory=device.type == 'cuda') with `device` handed in
#[test]
fn a_handed_device_of_a_cuda_file_is_the_gpu() {
    assert_eq!(lines_of(&run(HANDED_DEVICE), "EA303"), vec![24]);
}
