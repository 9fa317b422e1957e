//! The twenty-seventh accuracy round: shapes from the blind wave g696–g703 that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// An MNIST test script that unpickles a whole model and runs it over the test set with
/// autograd on.
const UNPICKLED_MODEL: &str = "import torch
import torchvision.datasets as dataset
import torchvision.transforms as transforms
import torch.utils.data as data_utils

test_data = dataset.MNIST(root='mnist', train=False, transform=transforms.ToTensor())
test_loader = data_utils.DataLoader(dataset=test_data, batch_size=64, shuffle=True)

cnn = torch.load('model/mnist_model.pkl')
cnn = cnn.cuda()
accuracy = 0
for i, (images, labels) in enumerate(test_loader):
    images = images.cuda()
    labels = labels.cuda()
    outputs = cnn(images)
    _, pred = outputs.max(1)
    accuracy += (pred == labels).sum()
print(accuracy)
";

// Ex) cnn = torch.load(path) ... for images, labels in test_loader: outputs = cnn(images)
#[test]
fn a_whole_model_unpickled_and_called_is_a_model() {
    let findings = run(UNPICKLED_MODEL);
    assert_eq!(lines_of(&findings, "EA401"), vec![12]);
    // its name says nothing of its layers: no convolutional network to autotune
    assert!(lines_of(&findings, "EA204").is_empty());
    // a tensor loaded and multiplied, never called, is no model
    let tensor =
        UNPICKLED_MODEL.replace("outputs = cnn(images)", "outputs = images.flatten(1) @ cnn");
    assert!(lines_of(&run(&tensor), "EA401").is_empty());
}

/// A denoiser trainer whose step loop stops after two batches: a smoke test left in.
const SMOKE_TEST: &str = "import torch
from torch.utils.data import DataLoader

model = Denoiser().cuda()
optimizer = torch.optim.Adam(model.parameters())
loader = DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)


def train(loader):
    model.train()
    for i, (inputs, targets) in enumerate(loader):
        if i > 1:
            break
        inputs = inputs.cuda(non_blocking=True)
        loss = ((model(inputs) - inputs) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


for epoch in range(90):
    train(loader)
";

// Ex) for i, (inputs, targets) in enumerate(loader): if i > 1: break ... loss.backward()
#[test]
fn a_training_loop_that_breaks_off_after_two_batches_is_a_smoke_test() {
    let findings = run(SMOKE_TEST);
    assert!(lines_of(&findings, "EA201").is_empty());
    assert!(lines_of(&findings, "EA203").is_empty());
    // without the break it trains
    let full = SMOKE_TEST.replace("        if i > 1:\n            break\n", "");
    let findings = run(&full);
    assert_eq!(lines_of(&findings, "EA201"), vec![11]);
    assert_eq!(lines_of(&findings, "EA203"), vec![4]);
}

/// A Keras evaluation that predicts one sample at a time and prints each prediction.
const KERAS_PREDICT: &str = "import numpy as np
from classifier import create_model, read_data


def evaluate(model, eval_set, eval_labels):
    count = 0
    for data, label in zip(eval_set, eval_labels):
        count += 1
        data = np.expand_dims(data, 0)
        predict = model.predict(data)
        predict = predict[0]
        print('sample {} predict label:{} real label:{}'.format(count, predict, label))


if __name__ == '__main__':
    eval_set, eval_labels = read_data('valid.tfrecords')
    model = create_model()
    model.load_weights('weight.h5')
    evaluate(model, eval_set, eval_labels)
";

// Ex) predict = model.predict(data) ... print(..., predict, ...) in a file without PyTorch
#[test]
fn a_keras_prediction_is_on_the_host_already() {
    assert!(lines_of(&run(KERAS_PREDICT), "EA504").is_empty());
    // a PyTorch model's own predict() may return a tensor on the device: still reported
    let torch = format!(
        "import torch\nmodel = Net().cuda()\n{}",
        KERAS_PREDICT
            .replace("    model = create_model()\n", "")
            .replace("    model.load_weights('weight.h5')\n", "")
    );
    assert_eq!(lines_of(&run(&torch), "EA504"), vec![14]);
}

/// A fine-tuning module that gives a VGG handed in a new head, then trains it on CUDA.
const NEW_HEAD: &str = "import torch
import torch.nn as nn
from models.vgg import *


def initialize_model(model, learning_rate, num_classes, device):
    if isinstance(model, VGG):
        num_ftrs = model.classifier[6].in_features
        model.classifier[6] = nn.Linear(num_ftrs, num_classes)
    model = model.to(device)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    return model, criterion, optimizer


def train(train_loader, model, criterion, optimizer, device):
    model.train()
    for images, label in train_loader:
        images = images.to(device)
        label = label.to(device)
        loss = criterion(model(images), label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model.classifier[6] = nn.Linear(num_ftrs, num_classes) on a model the file does not build
#[test]
fn a_new_head_says_nothing_of_the_network_it_is_given_to() {
    assert!(lines_of(&run(NEW_HEAD), "EA202").is_empty());
    // a network of Linear layers the file builds itself is still matmul work
    let own = NEW_HEAD.replace(
        "def initialize_model(model,",
        "class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4096, 4096)\n\n\ndef initialize_model(model,",
    );
    assert_eq!(lines_of(&run(&own), "EA202"), vec![16]);
}

/// A drug–target predictor: a protein-language-model featurizer placed first, then the
/// co-embedding model its batch loop runs.
const FEATURIZER_THEN_MODEL: &str = "import torch
from torch.utils.data import DataLoader
from conplex.featurizer import ProtBertFeaturizer, MorganFeaturizer
from conplex.model import SimpleCoembedding

device = torch.device('cuda:0')
target_featurizer = ProtBertFeaturizer(save_dir='cache').to(device)
drug_featurizer = MorganFeaturizer(save_dir='cache').to(device)
model = SimpleCoembedding(drug_featurizer.shape, target_featurizer.shape, 1024)
model.load_state_dict(torch.load('model.pt', map_location=device))
model = model.eval()
model = model.to(device)
pairs = [(drug_featurizer(r['smiles']), target_featurizer(r['sequence'])) for _, r in rows]
dloader = DataLoader(pairs, batch_size=32, shuffle=False)
preds = []
with torch.set_grad_enabled(False):
    for b in dloader:
        preds.append(model(b[0], b[1]).detach().cpu().numpy())
";

// Ex) target_featurizer = ProtBertFeaturizer(...).to(device) ... model = model.to(device); for b in dloader: model(b[0], b[1])
#[test]
fn inference_is_anchored_on_the_model_its_loop_runs() {
    assert_eq!(lines_of(&run(FEATURIZER_THEN_MODEL), "EA202"), vec![12]);
}

/// A graph classifier whose one epoch helper trains or evaluates by a `train` flag.
const EPOCH_BY_FLAG: &str = "import torch
from torch_geometric.loader import DataLoader

device = torch.device('cuda')
model = GPSModel(channels=64, attn_type='multihead').to(device)
optimizer = torch.optim.Adam(model.parameters())


def run_epoch(loader, model, criterion, optimizer=None, train=True):
    if train:
        model.train()
    else:
        model.eval()
    epoch_loss = 0.0
    for batch in loader:
        batch = batch.to(device)
        if train:
            optimizer.zero_grad()
        out = model(batch)
        loss = criterion(out, batch.y)
        if train:
            loss.backward()
            optimizer.step()
        epoch_loss += loss.detach()
    return epoch_loss


for epoch in range(100):
    train_loss = run_epoch(train_loader, model, criterion, optimizer, train=True)
    val_loss = run_epoch(val_loader, model, criterion, train=False)
";

// Ex) def run_epoch(..., train=True): ... if train: loss.backward() ... run_epoch(val_loader, ..., train=False)
#[test]
fn an_epoch_helper_that_evaluates_by_a_flag_keeps_autograd_on() {
    assert_eq!(lines_of(&run(EPOCH_BY_FLAG), "EA401"), vec![15]);
    // the evaluation call under no_grad: nothing to report
    let guarded = EPOCH_BY_FLAG.replace(
        "    val_loss = run_epoch(val_loader, model, criterion, train=False)",
        "    with torch.no_grad():\n        val_loss = run_epoch(val_loader, model, criterion, train=False)",
    );
    assert!(lines_of(&run(&guarded), "EA401").is_empty());
    // never called with the flag off: a training helper only
    let train_only = EPOCH_BY_FLAG.replace(
        "    val_loss = run_epoch(val_loader, model, criterion, train=False)\n",
        "",
    );
    assert!(lines_of(&run(&train_only), "EA401").is_empty());
}

/// A tree-species trainer whose device falls back to Apple's backend, then the CPU, and whose
/// loaders pin memory on that device's test.
const NESTED_DEVICE_CHOICE: &str = "import torch
from torch.utils.data import DataLoader

DEVICE: torch.device = torch.device(
    \"cuda\" if torch.cuda.is_available() else \"mps\" if torch.backends.mps.is_available() else \"cpu\"
)


def main():
    use_pin_memory = (DEVICE.type == \"cuda\")
    train_loader = DataLoader(train_dataset, batch_size=32, shuffle=True, num_workers=4, pin_memory=use_pin_memory, persistent_workers=True)
    model = build_model(num_classes=13).to(DEVICE)
    optimizer = torch.optim.AdamW(model.parameters())
    for images, labels in train_loader:
        images, labels = images.to(DEVICE), labels.to(DEVICE)
        loss = criterion(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


main()
";

// Ex) DEVICE = torch.device("cuda" if cuda else "mps" if mps else "cpu"); pin_memory=(DEVICE.type == "cuda")
#[test]
fn a_nested_device_choice_takes_its_first_branch_on_the_gpu_runner() {
    assert_eq!(lines_of(&run(NESTED_DEVICE_CHOICE), "EA303"), vec![15]);
}

/// The transfer-learning tutorial's shape: loaders built by phase in a dict comprehension,
/// handed to a training function that iterates `dataloaders[phase]` every epoch.
const LOADER_DICT_HANDED: &str = "import torch
import torch.nn as nn
import torch.optim as optim
from torchvision import models


def train_model(model, dataloaders, criterion, optimizer, num_epochs=25):
    for epoch in range(num_epochs):
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train()
            else:
                model.eval()
            for inputs, labels in dataloaders[phase]:
                inputs = inputs.to(device)
                labels = labels.to(device)
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    loss = criterion(model(inputs), labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
    return model


device = torch.device('cuda:0')
model = models.resnet50(pretrained=True).to(device)
image_datasets = {x: CASME2('data', x) for x in ['train', 'val']}
dataloaders_dict = {
    x: torch.utils.data.DataLoader(image_datasets[x], batch_size=100, shuffle=True, num_workers=4, pin_memory=True) for x in
    ['train', 'val']}
optimizer_ft = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
model = train_model(model, dataloaders_dict, nn.CrossEntropyLoss(), optimizer_ft)
";

// Ex) dataloaders_dict = {x: DataLoader(...) for x in ['train', 'val']}; train_model(model, dataloaders_dict, ...)
#[test]
fn a_dict_of_loaders_handed_to_an_epoch_loop_restarts_its_workers() {
    assert_eq!(lines_of(&run(LOADER_DICT_HANDED), "EA103"), vec![30]);
    // handed to no function that iterates it: nothing restarts
    let kept = LOADER_DICT_HANDED.replace(
        "train_model(model, dataloaders_dict,",
        "train_model(model, other_loaders,",
    );
    assert!(lines_of(&run(&kept), "EA103").is_empty());
}

/// A char-LSTM trainer that validates every few steps inside its step loop, after
/// `net.eval()`, with autograd on.
const VALIDATION_IN_STEP: &str = "import torch

net = CharRNN(chars, n_hidden=512, n_layers=2).cuda()
opt = torch.optim.Adam(net.parameters(), lr=0.001)
counter = 0
for e in range(20):
    h = net.init_hidden(64)
    for x, y in get_batches(data, 64, 100):
        counter += 1
        inputs, targets = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
        net.zero_grad()
        output, h = net(inputs, h)
        loss = criterion(output, targets.view(-1).long())
        loss.backward()
        opt.step()
        if counter % 50 == 0:
            net.eval()
            for xv, yv in get_batches(val_data, 64, 100):
                inputs, targets = torch.from_numpy(xv).cuda(), torch.from_numpy(yv).cuda()
                output, val_h = net(inputs, val_h)
                val_losses.append(criterion(output, targets.view(-1).long()))
            net.train()
";

// Ex) if counter % print_every == 0: net.eval(); for inputs, label in get_batches(val_data, ...): net(inputs, val_h)
#[test]
fn a_validation_pass_inside_the_step_loop_after_eval_keeps_autograd_on() {
    assert_eq!(lines_of(&run(VALIDATION_IN_STEP), "EA401"), vec![18]);
    // an inner loop of the training step itself (no eval() before it) is training
    let inner = VALIDATION_IN_STEP.replace("            net.eval()\n", "");
    assert!(lines_of(&run(&inner), "EA401").is_empty());
}

/// A SAM-Med2D adapter fine-tune at batch size 2.
const SAM_FINE_TUNE: &str = "import argparse
import torch
from torch.utils.data import DataLoader
from segment_anything import sam_model_registry

parser = argparse.ArgumentParser()
parser.add_argument('--batch_size', type=int, default=2)
parser.add_argument('--model_type', type=str, default='vit_b')
args = parser.parse_args()

model = sam_model_registry[args.model_type](args).to('cuda')
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True, num_workers=4)
for batch in train_loader:
    loss = model(batch['image'].to('cuda')).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) model = sam_model_registry[args.model_type](args).to(args.device); DataLoader(..., batch_size=2)
#[test]
fn a_segment_anything_fine_tune_is_a_large_pretrained_model() {
    assert!(lines_of(&run(SAM_FINE_TUNE), "EA702").is_empty());
    let own = SAM_FINE_TUNE.replace("sam_model_registry[args.model_type](args)", "SegNet(args)");
    assert_eq!(lines_of(&run(&own), "EA702"), vec![13]);
}

/// A TensorFlow 1 graph autoencoder: one `sess.run` of the training op per epoch, printed
/// every time.
const TF_SESSION: &str = "import tensorflow as tf

optimizer = tf.train.AdamOptimizer(learning_rate=0.01)
train_op = optimizer.minimize(cost)
sess = tf.Session()
sess.run(tf.global_variables_initializer())
for epoch in range(200):
    _, avg_cost = sess.run([train_op, cost], feed_dict=feed_dict)
    print('Epoch:', epoch + 1, 'train_loss=', avg_cost)
";

// Ex) _, avg_cost = sess.run([opt.opt_op, opt.cost], feed_dict=feed_dict); print(...)
#[test]
fn a_tensorflow_session_running_its_training_op_is_a_training_step() {
    let findings = run(TF_SESSION);
    assert_eq!(lines_of(&findings, "EA504"), vec![9]);
    // nothing of CUDA is named: no GPU rule
    assert!(lines_of(&findings, "EA201").is_empty());
    // a session that only evaluates trains nothing
    let eval = TF_SESSION.replace("sess.run([train_op, cost]", "sess.run([accuracy, cost]");
    assert!(lines_of(&run(&eval), "EA504").is_empty());
}

/// Adversarial evaluation: each test batch runs a PGD attack (a gradient loop on the input)
/// and reads its losses back.
const ATTACK_PER_BATCH: &str = "import torch

model = PreActResNet18().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def attack_pgd(model, X, y, epsilon, alpha, attack_iters):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.requires_grad = True
    for _ in range(attack_iters):
        loss = torch.nn.functional.cross_entropy(model(X + delta), y)
        loss.backward()
        delta.data = (delta + alpha * delta.grad.sign()).clamp(-epsilon, epsilon)
        delta.grad.zero_()
    return delta.detach()


for epoch in range(200):
    model.eval()
    test_loss = 0
    for i, (X, y) in enumerate(test_batches):
        X, y = X.cuda(), y.cuda()
        delta = attack_pgd(model, X, y, 8 / 255, 2 / 255, 10)
        output = model(X + delta)
        loss = torch.nn.functional.cross_entropy(output, y)
        test_loss += loss.item() * y.size(0)
";

// Ex) delta = attack_pgd(model, X, y, ...) ... test_robust_loss += robust_loss.item() * y.size(0)
#[test]
fn a_loop_calling_an_attack_is_still_a_step_loop() {
    assert_eq!(lines_of(&run(ATTACK_PER_BATCH), "EA301"), vec![26]);
    // a helper named for training that runs its own loop makes the caller an epoch loop
    let pass = ATTACK_PER_BATCH.replace("attack_pgd", "train_steps");
    assert!(lines_of(&run(&pass), "EA301").is_empty());
}

/// Convolutional networks known by family or by the blocks they are built from.
const CONV_BY_FAMILY: &str = "import torch
import torchvision

device = torch.device('cuda')
net = SSD(num_classes).to(device)
optimizer = torch.optim.SGD(net.parameters(), lr=0.001)
for images, targets in train_loader:
    loss = criterion(net(images.to(device)), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) net = SSD(num_classes).to(device); hopenet.Hopenet(torchvision.models.resnet.Bottleneck, [3, 4, 6, 3], 66); FlowMatching(..., encoder="resnet")
#[test]
fn convolutional_networks_by_family_block_or_backbone_name() {
    assert_eq!(lines_of(&run(CONV_BY_FAMILY), "EA204"), vec![5]);
    let pnas = CONV_BY_FAMILY.replace(
        "SSD(num_classes)",
        "pretrainedmodels.__dict__['pnasnet5large'](num_classes=6, pretrained=None)",
    );
    assert_eq!(lines_of(&run(&pnas), "EA204"), vec![5]);
    let block = CONV_BY_FAMILY.replace(
        "SSD(num_classes)",
        "hopenet.Hopenet(torchvision.models.resnet.Bottleneck, [3, 4, 6, 3], 66)",
    );
    assert_eq!(lines_of(&run(&block), "EA204"), vec![5]);
    let backbone = CONV_BY_FAMILY.replace(
        "SSD(num_classes)",
        "FlowMatching(action_dim=7, encoder='resnet')",
    );
    assert_eq!(lines_of(&run(&backbone), "EA204"), vec![5]);
    // a transformer backbone by name is no convolutional network
    let vit = CONV_BY_FAMILY.replace(
        "SSD(num_classes)",
        "FlowMatching(action_dim=7, encoder='vit')",
    );
    assert!(lines_of(&run(&vit), "EA204").is_empty());
}

/// A Hugging Face Trainer script that moves the model to the GPU itself before configuring
/// the trainer.
const TRAINER_AFTER_MOVE: &str = "import torch
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased', num_labels=2)
model.to(device)

args = TrainingArguments(
    output_dir='out',
    per_device_train_batch_size=16,
    dataloader_num_workers=4,
)
trainer = Trainer(model=model, args=args, train_dataset=train_ds)
trainer.train()
";

// Ex) model.to(device) ... args = TrainingArguments(...); Trainer(model=model, args=args).train()
#[test]
fn a_trainer_script_that_moves_its_model_is_anchored_at_the_move() {
    assert_eq!(lines_of(&run(TRAINER_AFTER_MOVE), "EA203"), vec![6]);
    // a model the loader places (`device_map`) leaves the anchor at the configuration
    let mapped = TRAINER_AFTER_MOVE
        .replace("num_labels=2)", "num_labels=2, device_map='auto')")
        .replace("model.to(device)\n", "");
    assert_eq!(lines_of(&run(&mapped), "EA203"), vec![7]);
}

/// A DistilBERT fine-tune whose dataset tokenizes each text in `__getitem__`.
const TOKENIZE_PER_ITEM: &str = "import torch
from torch.utils.data import DataLoader, Dataset
from transformers import DistilBertTokenizer, DistilBertForSequenceClassification


class BertDataset(Dataset):
    def __init__(self, texts, labels, tokenizer, max_len=100):
        self.texts = texts
        self.labels = labels
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, idx):
        encoding = self.tokenizer.encode_plus(
            self.texts[idx], max_length=self.max_len, padding='max_length', truncation=True, return_tensors='pt'
        )
        return {'input_ids': encoding['input_ids'].flatten(), 'labels': torch.tensor(self.labels[idx])}


tokenizer = DistilBertTokenizer.from_pretrained('distilbert-base-uncased')
model = DistilBertForSequenceClassification.from_pretrained('distilbert-base-uncased').to('cuda')
train_loader = DataLoader(BertDataset(X_train, y_train, tokenizer), batch_size=16, shuffle=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for batch in train_loader:
    loss = model(input_ids=batch['input_ids'].to('cuda'), labels=batch['labels'].to('cuda')).loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) def __getitem__(self, idx): encoding = self.tokenizer.encode_plus(self.texts[idx], ...)
#[test]
fn a_dataset_that_tokenizes_each_item_needs_workers() {
    assert_eq!(lines_of(&run(TOKENIZE_PER_ITEM), "EA101"), vec![25]);
    // ids tokenized ahead of time: a batch is a few row lookups
    let ahead = TOKENIZE_PER_ITEM.replace(
        "        encoding = self.tokenizer.encode_plus(
            self.texts[idx], max_length=self.max_len, padding='max_length', truncation=True, return_tensors='pt'
        )
",
        "        encoding = self.texts[idx]\n",
    );
    assert!(lines_of(&run(&ahead), "EA101").is_empty());
    // the same dataset handed to a Hugging Face Trainer without dataloader_num_workers
    let trainer = TOKENIZE_PER_ITEM
        .split("train_loader = ")
        .next()
        .unwrap()
        .to_string()
        + "from transformers import Trainer, TrainingArguments
args = TrainingArguments(output_dir='out', per_device_train_batch_size=16)
trainer = Trainer(model=model, args=args, train_dataset=BertDataset(X_train, y_train, tokenizer))
trainer.train()
";
    assert_eq!(lines_of(&run(&trainer), "EA101"), vec![26]);
}

/// A bird-song pipeline: each audio file of a folder rendered as a spectrogram figure, and each
/// row of a table of file names converted with a progress bar.
const AUDIO_TO_FIGURES: &str = "import os
import librosa
import matplotlib.pyplot as plt
import pandas as pd
from tqdm import tqdm

for filename in os.listdir('./dataset_audio/'):
    y, sr = librosa.load(f'./dataset_audio/{filename}', mono=True, duration=5)
    plt.specgram(y, NFFT=2048, Fs=2, Fc=0, noverlap=128)
    plt.savefig(f'img_data/{filename[:-3]}.png')
    plt.clf()

df = pd.read_csv('audio/audio.csv')
for i in tqdm(range(len(df))):
    target = 'audio/{}'.format(df.file_name[i])
    folder = df.label[i]
    y, sr = librosa.load(target)
";

// Ex) for filename in os.listdir(d): y, sr = librosa.load(...); plt.savefig(...) / for i in tqdm(range(len(df))): df.file_name[i]
#[test]
fn a_figure_saved_per_file_and_a_column_read_by_row_under_a_progress_bar() {
    let findings = run(AUDIO_TO_FIGURES);
    assert!(lines_of(&findings, "EA602").contains(&7));
    assert_eq!(lines_of(&findings, "EA601"), vec![14]);
    // a figure shown, not saved, writes nothing per file
    let shown =
        AUDIO_TO_FIGURES.replace("plt.savefig(f'img_data/{filename[:-3]}.png')", "plt.show()");
    assert!(!lines_of(&run(&shown), "EA602").contains(&7));
    // the loop reads no column by its row: nothing row by row
    let no_rows = AUDIO_TO_FIGURES
        .replace("df.file_name[i]", "i")
        .replace("df.label[i]", "i");
    assert!(lines_of(&run(&no_rows), "EA601").is_empty());
}

/// A CIFAR trainer that binds a loader at module level, never reads it (the training function
/// builds its own each epoch), and runs `train(...)` at module level.
const UNREAD_MODULE_LOADER: &str = "import torch
import torchvision

trainset = torchvision.datasets.CIFAR10(root='./data', train=True, download=True)
trainloader = torch.utils.data.DataLoader(trainset, batch_size=64, shuffle=True)
net = GhostResNet56().cuda()
optimizer = torch.optim.Adam(net.parameters(), lr=0.0001)


def train(resume):
    for epoch in range(10):
        for inputs, labels in torch.utils.data.DataLoader(trainset, batch_size=5000, num_workers=4, pin_memory=True, persistent_workers=True):
            loss = torch.nn.functional.cross_entropy(net(inputs.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


train(resume=False)
";

// Ex) trainloader = DataLoader(trainset, ...) (never read) ... train(resume=False) at module level
#[test]
fn a_script_that_calls_its_own_function_does_not_export_its_loaders() {
    let findings = run(UNREAD_MODULE_LOADER);
    assert!(!lines_of(&findings, "EA101").contains(&5));
    assert!(!lines_of(&findings, "EA102").contains(&5));
    // without the call, a module of definitions: its loader may be read by an importer
    let module = UNREAD_MODULE_LOADER.replace("\ntrain(resume=False)\n", "\n");
    assert!(lines_of(&run(&module), "EA101").contains(&5));
}

/// A teaching seq2seq trained on random tensors at module level; its decoder input follows the
/// input's own device.
const FOLLOWS_OWN_DEVICE: &str = "import torch
import torch.nn as nn


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder, target_len):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.target_len = target_len

    def forward(self, input_seq):
        _, hidden = self.encoder(input_seq)
        decoder_input = torch.zeros(input_seq.size(0), 1, 10).to(input_seq.device)
        return self.decoder(decoder_input, hidden)


model = Seq2Seq(nn.GRU(5, 10, batch_first=True), nn.GRU(10, 10, batch_first=True), 7)
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
input_seq = torch.randn(3, 7, 5)
for epoch in range(100):
    optimizer.zero_grad()
    output, _ = model(input_seq)
    loss = output.pow(2).mean()
    loss.backward()
    optimizer.step()
";

// Ex) decoder_input = torch.zeros(...).to(input_seq.device) in a script that places nothing on a device
#[test]
fn a_script_that_places_nothing_copies_nothing_to_a_gpu() {
    assert!(lines_of(&run(FOLLOWS_OWN_DEVICE), "EA304").is_empty());
    // the model moved to the GPU: the constructor is copied every forward
    let placed = FOLLOWS_OWN_DEVICE.replace(
        "input_seq = torch.randn(3, 7, 5)",
        "input_seq = torch.randn(3, 7, 5).to('cuda')",
    );
    assert_eq!(lines_of(&run(&placed), "EA304"), vec![14]);
    // a module of definitions (no loop of its own): an importer may run it on the GPU
    let module = FOLLOWS_OWN_DEVICE
        .split("\n\nmodel = ")
        .next()
        .unwrap()
        .to_string()
        + "\n";
    assert_eq!(lines_of(&run(&module), "EA304"), vec![14]);
}

/// A seq2seq trainer whose model object of another module takes one gradient step per batch,
/// printing shapes every step.
const TRAIN_STEP_METHOD: &str = "from tqdm import tqdm
from seq2seq_attention.model import Seq2Seq_With_Attention


def train(train_loader, epochs):
    model = Seq2Seq_With_Attention(lr=1e-3)
    model.send_to_device()
    for epoch in range(epochs):
        epoch_loss = 0
        for n_batch, train_batch in enumerate(tqdm(train_loader)):
            print(train_batch.src[0].shape)
            epoch_loss += model.train_step(train_batch.src, train_batch.trg)
    return model
";

// Ex) epoch_loss += model.train_step(src, trg) with print(batch.src[0].shape) before it
#[test]
fn a_train_step_method_of_another_module_is_a_training_step() {
    assert_eq!(lines_of(&run(TRAIN_STEP_METHOD), "EA504"), vec![11]);
    // an evaluation method: the loop infers, and a shape printed is its report
    let eval = TRAIN_STEP_METHOD.replace("model.train_step(", "model.eval_step(");
    assert!(lines_of(&run(&eval), "EA504").is_empty());
}

/// A DCGAN script whose training function is handed the two networks and places them itself,
/// and whose sampling command builds its own generator copy.
const PLACED_WHERE_TRAINED: &str = "import torch
import torch.optim as optim


def run_training(D, G, d_optimizer, g_optimizer, dataloader, n_epochs):
    D.cuda()
    G.cuda()
    for epoch in range(n_epochs):
        for real_images, _ in dataloader:
            real_images = real_images.cuda()
            d_loss = D(real_images).mean() - D(G(torch.randn(64, 100, device='cuda'))).mean()
            d_optimizer.zero_grad()
            d_loss.backward()
            d_optimizer.step()


def train(args):
    D, G = Discriminator(), Generator()
    d_optimizer = optim.Adam(D.parameters(), lr=0.0002)
    g_optimizer = optim.Adam(G.parameters(), lr=0.0002)
    run_training(D, G, d_optimizer, g_optimizer, loader, 100)


def generate(args):
    G = Generator()
    G.load_state_dict(torch.load('g.pth'))
    G.cuda()
    return G(torch.randn(16, 100, device='cuda'))


train(None)
generate(None)
";

// Ex) def run_training(D, G, ...): D.cuda(); G.cuda(); for epoch ... ; def generate(args): G = Generator(); G.cuda()
#[test]
fn the_placement_in_the_training_function_is_the_trained_models() {
    assert_eq!(lines_of(&run(PLACED_WHERE_TRAINED), "EA203"), vec![6]);
}

/// A super-resolution trainer whose test loader is read two calls deep from the epoch loop.
const READ_TWO_CALLS_DEEP: &str = "import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
train_loader = DataLoader(train_set, num_workers=8, batch_size=16, shuffle=True, pin_memory=True, persistent_workers=True)
test_loader = DataLoader(test_set, num_workers=8, batch_size=16, shuffle=False, pin_memory=True)
model = SRNet().to(device)
optimizer = torch.optim.Adam(model.parameters())


def train(epoch):
    for lr, hr in train_loader:
        loss = (model(lr.to(device, non_blocking=True)) - hr.to(device, non_blocking=True)).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def output_img(dir_name):
    with torch.no_grad():
        for lr, name in test_loader:
            save(model(lr.to(device, non_blocking=True)).cpu(), dir_name, name)


def test_and_save(epoch):
    output_img('out/%d' % epoch)


for epoch in range(1, 100):
    train(epoch)
    test_and_save(epoch)
";

// Ex) for epoch ...: test_and_save(epoch) → output_img(dir) → for batch in test_data_loader:
#[test]
fn a_loader_read_a_few_calls_deep_from_the_epoch_loop_restarts_each_epoch() {
    assert_eq!(lines_of(&run(READ_TWO_CALLS_DEEP), "EA103"), vec![6]);
    // read once after training: nothing restarts
    let once = READ_TWO_CALLS_DEEP.replace("    test_and_save(epoch)\n", "") + "test_and_save(0)\n";
    assert!(lines_of(&run(&once), "EA103").is_empty());
}

/// A super-resolution trainer whose network comes from another module and whose He
/// initialisation tests for convolution layers.
const CONV_BY_INIT: &str = "import torch
import torch.nn as nn
from models import CARN


def weights_init(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight)


net = CARN(scale=2)
net.apply(weights_init)
net = net.cuda()
optimizer = torch.optim.Adam(net.parameters())
for lr, hr in train_loader:
    loss = (net(lr.cuda()) - hr.cuda()).abs().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) def weights_init(m): if isinstance(m, nn.Conv2d): ... net.apply(weights_init)
#[test]
fn an_initialiser_applied_to_convolutions_shows_a_convolutional_network() {
    assert_eq!(lines_of(&run(CONV_BY_INIT), "EA204"), vec![13]);
    // an initialiser nothing applies says nothing of the network
    let unapplied = CONV_BY_INIT.replace("net.apply(weights_init)\n", "");
    assert!(lines_of(&run(&unapplied), "EA204").is_empty());
    // the loop form over the model's modules
    let modules = CONV_BY_INIT.replace(
        "net.apply(weights_init)\n",
        "for m in net.modules():\n    if isinstance(m, nn.Conv2d):\n        m.weight.data.normal_(0, 0.05)\n",
    );
    assert_eq!(lines_of(&run(&modules), "EA204"), vec![15]);
}

/// A SegFormer trainer whose loaders are built by a function handed the pin switch, a test of
/// the device made by the caller.
const PIN_SWITCH_HANDED_IN: &str = "import torch
from torch.utils.data import DataLoader


def make_dataloaders(pin_memory: bool):
    train_loader = DataLoader(train_ds, batch_size=16, shuffle=True, num_workers=4, pin_memory=pin_memory, persistent_workers=True)
    return train_loader


def main():
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    pin_memory = (device.type == 'cuda')
    train_loader = make_dataloaders(pin_memory)
    model = build_segformer().to(device)
    optimizer = torch.optim.AdamW(model.parameters())
    for epoch in range(10):
        for batch in train_loader:
            pixel_values = batch['pixel_values'].to(device)
            loss = model(pixel_values).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


main()
";

// Ex) def make_dataloaders(pin_memory): DataLoader(..., pin_memory=pin_memory) ... make_dataloaders(device.type == "cuda")
#[test]
fn a_pin_switch_handed_in_as_a_device_test_pins_on_the_gpu_runner() {
    assert_eq!(lines_of(&run(PIN_SWITCH_HANDED_IN), "EA303"), vec![18]);
    // handed a switch the engine cannot read: unknown stays unknown
    let unknown = PIN_SWITCH_HANDED_IN.replace(
        "    pin_memory = (device.type == 'cuda')\n",
        "    pin_memory = os.environ.get('PIN') == '1'\n",
    );
    assert!(lines_of(&run(&unknown), "EA303").is_empty());
}

/// A GPT sampler that appends each sampled token to the sequence and stops at the end token.
const SAMPLED_DECODE: &str = "import torch
import torch.nn.functional as F

model = GPT(config).cuda()
model.eval()
with torch.no_grad():
    for prompt in prompts:
        tokens = torch.tensor([encode(prompt)], device='cuda')
        for _ in range(200):
            logits, _ = model(tokens)
            probs = F.softmax(logits[:, -1, :], dim=-1)
            next_token = torch.multinomial(probs, num_samples=1)
            tokens = torch.cat([tokens, next_token], dim=1)
            if next_token.item() == eot_token:
                break
";

// Ex) next_token = torch.multinomial(probs, 1); tokens = torch.cat([tokens, next_token], dim=1); if next_token.item() == eot: break
#[test]
fn the_stop_test_of_a_sampled_decode_is_the_decode_itself() {
    assert!(!lines_of(&run(SAMPLED_DECODE), "EA301").contains(&14));
    // a read of something the decode does not feed back is a sync
    let other = SAMPLED_DECODE.replace(
        "if next_token.item() == eot_token:",
        "if probs.max().item() < 0.01:",
    );
    assert!(lines_of(&run(&other), "EA301").contains(&14));
}

/// A duplicate finder over imutils' image listing.
const IMUTILS_LISTING: &str = "import sys
import cv2
from imutils import paths

hashes = {}
for imagePath in list(paths.list_images(sys.argv[1])):
    image = cv2.imread(imagePath)
    hashes.setdefault(image.sum(), []).append(imagePath)
";

// Ex) imagePaths = list(paths.list_images(sys.argv[1])); for imagePath in imagePaths: cv2.imread(imagePath)
#[test]
fn imutils_image_listing_is_a_directory_listing() {
    assert_eq!(lines_of(&run(IMUTILS_LISTING), "EA602"), vec![6]);
    // a list of paths held in memory, not a listing, with no per-file name: not a file loop
    let listed = IMUTILS_LISTING.replace("list(paths.list_images(sys.argv[1]))", "sys.argv[1:]");
    assert!(lines_of(&run(&listed), "EA602").is_empty());
}

/// An Ignite trainer run for many epochs over a loader with workers, and an evaluator run at
/// the end of each epoch.
const IGNITE_EPOCHS: &str = "import torch
from torch.utils.data import DataLoader
from ignite.engine import Events, create_supervised_trainer, create_supervised_evaluator

EPOCHS = 250
model = VGG16().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=4, pin_memory=True)
val_loader = DataLoader(val_set, batch_size=128, num_workers=4, pin_memory=True)
trainer = create_supervised_trainer(model, optimizer, criterion, device='cuda', amp_mode='amp')
evaluator = create_supervised_evaluator(model, device='cuda')


@trainer.on(Events.EPOCH_COMPLETED)
def log_epoch(engine):
    evaluator.run(val_loader)


trainer.run(train_loader, EPOCHS)
";

// Ex) trainer.run(train_loader, EPOCHS); @trainer.on(Events.EPOCH_COMPLETED) def log_epoch(engine): evaluator.run(val_loader)
#[test]
fn an_ignite_engine_reads_its_loaders_every_epoch() {
    assert_eq!(lines_of(&run(IGNITE_EPOCHS), "EA103"), vec![8, 9]);
    // one epoch: nothing restarts (the evaluator's handler runs once too)
    let once = IGNITE_EPOCHS.replace("EPOCHS = 250", "EPOCHS = 1");
    assert!(lines_of(&run(&once), "EA103").is_empty());
}
