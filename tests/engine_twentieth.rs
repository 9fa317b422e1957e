//! The twentieth accuracy round: shapes from the blind waves g454– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, ids_of, rule_lines as lines_of};

/// A Lightning 1.x launcher whose GPU count is a command-line option.
const LIGHTNING_GPUS: &str = "from argparse import ArgumentParser
from pytorch_lightning import Trainer
from gans.applications import GAN


def main(hparams):
    model = GAN(hparams)
    trainer = Trainer(max_epochs=hparams.max_epochs, gpus=hparams.gpus)
    trainer.fit(model)


if __name__ == '__main__':
    parser = ArgumentParser()
    parser.add_argument('--gpus', type=int, nargs='+', default=0)
    parser.add_argument('--max-epochs', type=int, default=10)
    hparams = parser.parse_args()
    main(hparams)
";

// Ex) Trainer(gpus=hparams.gpus) with `--gpus` defaulting to 0: Lightning 1.x trains on the CPU
#[test]
fn a_lightning_trainer_given_no_gpus_as_shipped_runs_on_the_cpu() {
    let ids = ids_of(&run(LIGHTNING_GPUS));
    assert!(!ids.iter().any(|i| i == "EA201" || i == "EA203"), "{ids:?}");
    let literal = LIGHTNING_GPUS.replace("gpus=hparams.gpus", "gpus=0");
    assert!(!ids_of(&run(&literal)).iter().any(|i| i == "EA201"));
    // one GPU as shipped: the GPU rules apply
    let one = LIGHTNING_GPUS.replace("default=0)", "default=1)");
    assert_eq!(lines_of(&run(&one), "EA201"), vec![8]);
}

/// A module of one training function whose device parameter defaults to the CPU.
const CPU_DEFAULT_DEVICE: &str = "import torch
import torchvision
from torch.utils.data import DataLoader
from ResNet.resnet import *


def train_cifar10(batch_size=50, num_epoch=100, device=\"cpu\"):
    ds = torchvision.datasets.CIFAR10(root='./data', train=True, download=True)
    loader = DataLoader(ds, batch_size=batch_size, shuffle=True, num_workers=2)
    device = torch.device(device)
    model = ResNet50().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    for epoch in range(num_epoch):
        for image, label in loader:
            x = image.to(device)
            y = label.to(device)
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
";

// Ex) def train(..., device="cpu"): ... model.to(device)
#[test]
fn a_device_parameter_defaulting_to_the_cpu_places_nothing_on_the_gpu() {
    let ids = ids_of(&run(CPU_DEFAULT_DEVICE));
    assert!(
        !ids.iter()
            .any(|i| ["EA102", "EA201", "EA203", "EA204"].contains(&i.as_str())),
        "{ids:?}"
    );
    // workers restarted every epoch waste the CPU wherever the model runs
    assert_eq!(lines_of(&run(CPU_DEFAULT_DEVICE), "EA103"), vec![9]);
    // (the same for Apple's GPU, `device="mps"`)
    let mps = CPU_DEFAULT_DEVICE.replace("device=\"cpu\"", "device=\"mps\"");
    assert!(lines_of(&run(&mps), "EA201").is_empty());
    // a device handed in without a default is a GPU's
    let handed = CPU_DEFAULT_DEVICE.replace("device=\"cpu\"", "device=None");
    assert_eq!(lines_of(&run(&handed), "EA201"), vec![14]);
    // (a parameter of another name defaulting to "cpu" says nothing of the device)
    let other =
        CPU_DEFAULT_DEVICE.replace("device=\"cpu\"):", "device=None, map_location=\"cpu\"):");
    assert_eq!(lines_of(&run(&other), "EA201"), vec![14]);
}

/// The Udacity image-classifier training script: options parsed by a helper module.
const GPU_FLAG_ELSEWHERE: &str = "import torch
from torch import nn, optim
from torchvision import datasets, transforms
from torch.utils.data import DataLoader
from get_input_args import get_input_args
from build_network import build_network


def main():
    in_arg = get_input_args()
    data = datasets.ImageFolder(in_arg.data_dir, transform=transforms.ToTensor())
    loader = DataLoader(data, batch_size=64, shuffle=True)
    model = build_network(in_arg.arch, in_arg.hidden_units)
    optimizer = optim.Adam(model.classifier.parameters(), lr=in_arg.learning_rate)
    device = torch.device(\"cuda\" if in_arg.gpu and torch.cuda.is_available() else \"cpu\")
    model.to(device)
    for epoch in range(in_arg.epochs):
        for inputs, labels in loader:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = nn.functional.nll_loss(model(inputs), labels)
            loss.backward()
            optimizer.step()
            print(loss.item())


if __name__ == '__main__':
    main()
";

// Ex) torch.device("cuda" if in_arg.gpu and torch.cuda.is_available() else "cpu"), `--gpu`
// declared elsewhere
#[test]
fn a_gpu_flag_parsed_in_another_module_is_off_as_shipped() {
    let ids = ids_of(&run(GPU_FLAG_ELSEWHERE));
    assert!(
        !ids.iter()
            .any(|i| ["EA102", "EA201", "EA203", "EA301"].contains(&i.as_str())),
        "{ids:?}"
    );
    // the CUDA choice without the flag is the GPU's
    let always = GPU_FLAG_ELSEWHERE.replace("in_arg.gpu and ", "");
    assert_eq!(lines_of(&run(&always), "EA301"), vec![24]);
    // (a flag the file sets itself is read as set)
    let set = GPU_FLAG_ELSEWHERE.replace(
        "    in_arg = get_input_args()\n",
        "    in_arg = get_input_args()\n    in_arg.gpu = True\n",
    );
    assert_eq!(lines_of(&run(&set), "EA301"), vec![25]);
}

/// An evaluation loop printing what it computed from the model's output.
const PRINTS_PREDICTIONS: &str = "import torch
from train import VGG16
from train import testLoader

if __name__ == '__main__':
    vgg16 = VGG16(n_classes=3)
    vgg16.load_state_dict(torch.load('cnn.pkl'))
    vgg16.cuda()
    vgg16.eval()
    correct = 0
    total = 0
    for images, labels in testLoader:
        images = images.cuda()
        _, outputs = vgg16(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted.cpu() == labels).sum()
        print(predicted, labels, correct, total)
        print('avg acc: %f' % (100 * correct / total))
";

// Ex) _, predicted = torch.max(outputs.data, 1) ... print(predicted, labels)
#[test]
fn an_inference_loop_printing_values_computed_from_the_output_logs_every_step() {
    let a = run(PRINTS_PREDICTIONS);
    // (not the running total's line: the loop's report)
    assert_eq!(lines_of(&a, "EA504"), vec![18]);
    // `VGG16(...)` later moved with `.cuda()` is a model: its loop runs with autograd on
    assert_eq!(lines_of(&a, "EA401"), vec![12]);
    assert_eq!(lines_of(&a, "EA204"), vec![8]);
    // a line of counters only is the loop's report
    let counters = PRINTS_PREDICTIONS.replace(
        "print(predicted, labels, correct, total)",
        "print(labels, correct, total)",
    );
    assert!(lines_of(&run(&counters), "EA504").is_empty());
}

// Ex) DATA = CONSTANTS(...) is no module: an acronym class must be placed to be a model
#[test]
fn an_acronym_class_never_placed_is_no_model() {
    let unplaced = PRINTS_PREDICTIONS.replace("    vgg16.cuda()\n", "");
    assert!(lines_of(&run(&unplaced), "EA204").is_empty());
}

/// Point-cloud training with PyTorch Geometric's dense loader.
const DENSE_LOADER: &str = "import torch
from torch_geometric.data import DenseDataLoader
from dataset import BigredDataset
from model import DenseDeepGCN

train_dataset = BigredDataset(root='data', is_train=True)
train_loader = DenseDataLoader(train_dataset, batch_size=16, shuffle=True, num_workers=4)
model = DenseDeepGCN().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(100):
    for data in train_loader:
        data = data.cuda()
        optimizer.zero_grad()
        loss = model(data).mean()
        loss.backward()
        optimizer.step()
";

// Ex) DenseDataLoader(train_dataset, batch_size=16, num_workers=4)
#[test]
fn pytorch_geometrics_dense_loader_is_a_data_loader() {
    let a = run(DENSE_LOADER);
    assert_eq!(lines_of(&a, "EA102"), vec![7]);
    assert_eq!(lines_of(&a, "EA103"), vec![7]);
}

/// The transfer-learning tutorial's loaders, kept in a dict read by phase.
const PHASE_DICT: &str = "import torch
from torch.utils.data import DataLoader
from torchvision import models

train_loader = DataLoader(train_data, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
val_loader = DataLoader(val_data, batch_size=32, num_workers=4, pin_memory=True)
dataloaders = {'train': train_loader, 'val': val_loader}
model = models.resnet18(weights='DEFAULT').cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(25):
    for phase in ['train', 'val']:
        model.train(phase == 'train')
        for inputs, labels in dataloaders[phase]:
            inputs = inputs.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            with torch.set_grad_enabled(phase == 'train'):
                loss = torch.nn.functional.cross_entropy(model(inputs), labels)
            if phase == 'train':
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
";

// Ex) dataloaders = {'train': train_loader, 'val': val_loader} ... for x in dataloaders[phase]
#[test]
fn loaders_in_a_dict_read_by_phase_each_epoch_restart_their_workers() {
    assert_eq!(lines_of(&run(PHASE_DICT), "EA103"), vec![5, 6]);
    // a phase list without 'val' never reads the validation loader
    let train_only =
        PHASE_DICT.replace("for phase in ['train', 'val']:", "for phase in ['train']:");
    assert_eq!(lines_of(&run(&train_only), "EA103"), vec![5]);
    // loaders stored into the dict by key
    let by_key = "import torch
from torch.utils.data import DataLoader
from unet import UNet

loaders = {}
for phase in ['train', 'val']:
    loaders[phase] = DataLoader(datasets[phase], batch_size=8, shuffle=True, num_workers=8)
model = UNet().cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(50):
    for phase in ['train', 'val']:
        for x, y in loaders[phase]:
            x = x.cuda()
            loss = model(x).mean()
            if phase == 'train':
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
";
    assert_eq!(lines_of(&run(by_key), "EA103"), vec![7]);
}

/// A dataset that copies items out of arrays loaded in `__init__`.
const COPIED_ITEMS: &str = "import numpy as np
import torch
from torch.utils.data import Dataset, DataLoader


class AudioSet(Dataset):
    def __init__(self, audio_path, label_path):
        self.audio = np.load(audio_path, mmap_mode='r')
        self.labels = np.load(label_path, mmap_mode='r')

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        audio = self.audio[idx].copy()
        label = self.labels[idx].copy()
        return torch.FloatTensor(audio), torch.tensor(label, dtype=torch.long)


loader = DataLoader(AudioSet('a.npy', 'l.npy'), batch_size=32, shuffle=True, num_workers=0, pin_memory=True)
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 7)).cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
";

// Ex) def __getitem__(self, idx): audio = self.audio[idx].copy()
#[test]
fn items_copied_out_of_arrays_in_memory_need_no_workers() {
    assert!(lines_of(&run(COPIED_ITEMS), "EA101").is_empty());
    // an item decoded per call keeps its finding
    let decoded = COPIED_ITEMS.replace(
        "audio = self.audio[idx].copy()",
        "audio = np.load(f'clip_{idx}.npy')",
    );
    assert_eq!(lines_of(&run(&decoded), "EA101"), vec![20]);
}

/// The transfer-learning tutorial's fixed feature extractor, then a test loop with autograd on.
const FROZEN_WITH_NEW_HEAD: &str = "import torch
import torch.nn as nn
import torchvision

device = torch.device('cuda:0')
model_conv = torchvision.models.resnet50(pretrained=True)
for param in model_conv.parameters():
    param.requires_grad = False
num_ftrs = model_conv.fc.in_features
model_conv.fc = nn.Linear(num_ftrs, 4)
model_conv = model_conv.to(device)
optimizer_conv = torch.optim.SGD(model_conv.fc.parameters(), lr=0.001, momentum=0.9)


def test_model(test_loader):
    correct = 0
    for images, labels in test_loader:
        images = images.to(device)
        outputs = model_conv(images)
        correct += (outputs.argmax(1) == labels.to(device)).sum()
    return correct


test_model(test_loader)
";

// Ex) for p in model.parameters(): p.requires_grad = False ... model.fc = nn.Linear(n, 4)
#[test]
fn a_frozen_backbone_given_a_new_head_still_records_a_graph() {
    assert_eq!(lines_of(&run(FROZEN_WITH_NEW_HEAD), "EA401"), vec![17]);
    // frozen through and through: nothing for `no_grad` to save
    let frozen = FROZEN_WITH_NEW_HEAD.replace("model_conv.fc = nn.Linear(num_ftrs, 4)\n", "");
    assert!(lines_of(&run(&frozen), "EA401").is_empty());
}

/// A TorchScript model run tile by tile.
const SCRIPTED_MODEL: &str = "import sys
import torch
from constants import DEVICE

segmenter = torch.jit.load('models/best_model.pt', map_location=DEVICE)
masks = []
for tile in tiles:
    x = torch.from_numpy(tile).to(DEVICE).unsqueeze(0)
    pred = segmenter(x)
    masks.append(pred.squeeze().cpu().numpy())
";

// Ex) segmenter = torch.jit.load(path, map_location=DEVICE) ... pred = segmenter(x)
#[test]
fn a_torchscript_module_is_a_model() {
    let a = run(SCRIPTED_MODEL);
    assert_eq!(lines_of(&a, "EA401"), vec![7]);
    assert_eq!(lines_of(&a, "EA301"), vec![10]);
}

/// PyTorch's multi-GPU tutorial: one linear layer as the model.
const ONE_LAYER_MODEL: &str = "import torch
from torch.utils.data import DataLoader
from datautils import MyTrainDataset

device = torch.device('cuda')
model = torch.nn.Linear(20, 1)
model = model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
loader = DataLoader(MyTrainDataset(2048), batch_size=32, num_workers=2, pin_memory=True, persistent_workers=True)
for epoch in range(10):
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
";

// Ex) model = torch.nn.Linear(20, 1)
#[test]
fn a_single_small_layer_as_the_model_is_a_small_model() {
    let ids = ids_of(&run(ONE_LAYER_MODEL));
    assert!(!ids.iter().any(|i| i == "EA201" || i == "EA202"), "{ids:?}");
    // a large layer is no small model
    let large = ONE_LAYER_MODEL.replace("Linear(20, 1)", "Linear(8192, 8192)");
    assert_eq!(lines_of(&run(&large), "EA201"), vec![11]);
    // nor is a zoo model whose head a layer replaces
    let head = ONE_LAYER_MODEL.replace(
        "model = torch.nn.Linear(20, 1)\n",
        "import torchvision\nmodel = torchvision.models.resnet50()\nmodel.fc = torch.nn.Linear(2048, 1)\n",
    );
    assert_eq!(lines_of(&run(&head), "EA201"), vec![13]);
}

/// A training loader that never sets its batch size.
const DEFAULT_BATCH: &str = "import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms, models

model = models.resnet18()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
loader = DataLoader(
    datasets.FakeData(size=1000, transform=transforms.ToTensor()),
    num_workers=1,
    pin_memory=True
)
model.to('cuda')
for data, target in loader:
    data = data.to('cuda', non_blocking=True)
    target = target.to('cuda', non_blocking=True)
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(data), target)
    loss.backward()
    optimizer.step()
";

// Ex) DataLoader(dataset, num_workers=1, pin_memory=True): batches of one sample
#[test]
fn a_training_loader_without_a_batch_size_feeds_one_sample_a_step() {
    let a = run(DEFAULT_BATCH);
    assert_eq!(lines_of(&a, "EA702"), vec![7]);
    // a batch sampler decides the size
    let sampled = DEFAULT_BATCH.replace(
        "    num_workers=1,\n",
        "    batch_sampler=sampler,\n    num_workers=1,\n",
    );
    assert!(lines_of(&run(&sampled), "EA702").is_empty());
    let given = DEFAULT_BATCH.replace(
        "    num_workers=1,\n",
        "    batch_size=256,\n    num_workers=1,\n",
    );
    assert!(lines_of(&run(&given), "EA702").is_empty());
}

/// A cleanrl-style PPO agent sized by its environment's own attributes.
const ENV_SIZED_AGENT: &str = "import torch
import torch.nn as nn
from env import CustomEnv


def layer_init(layer, std=1.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    return layer


class Agent(nn.Module):
    def __init__(self, env):
        super().__init__()
        action_length = env.action_length
        state_length = env.observation_length
        self.actor = nn.Sequential(
            layer_init(nn.Linear(state_length, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, action_length), std=0.01),
        )
        self.critic = nn.Sequential(
            layer_init(nn.Linear(state_length, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )


env = CustomEnv()
device = torch.device('cuda')
agent = Agent(env).to(device)
optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4)
for update in range(1000):
    obs = torch.randn(128, 8, device=device)
    loss = agent.critic(obs).pow(2).mean() + agent.actor(obs).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) state_length = env.observation_length ... nn.Linear(state_length, 64)
#[test]
fn an_agent_sized_by_its_environment_is_a_small_model() {
    let ids = ids_of(&run(ENV_SIZED_AGENT));
    assert!(!ids.iter().any(|i| i == "EA201" || i == "EA202"), "{ids:?}");
    // a width the file does not bound keeps the findings
    let wide = ENV_SIZED_AGENT
        .replace(
            "state_length = env.observation_length",
            "width = env.embedding_width",
        )
        .replace("nn.Linear(state_length, 64)", "nn.Linear(width, 64)");
    assert!(ids_of(&run(&wide)).iter().any(|i| i == "EA201"));
}

/// A Kaggle script: training handed to a helper module, then prediction over a folder.
const DELEGATED_THEN_PREDICT: &str = "import os
import cv2
import numpy as np
import pandas
import torch
from Models import Inception_Model
from Utils import *

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
convnet = Inception_Model(299, 299, num_classes=10)
convnet_optimizer = torch.optim.Adam(convnet.parameters(), lr=0.001)
convnet = convnet.to(device)
train_loop(convnet, torch.nn.CrossEntropyLoss(), convnet_optimizer, train_dataloader, device, 10)


def predict_images_in_folder(folder, model):
    model.eval()
    predictions = []
    for filename in os.listdir(folder):
        img = cv2.imread(os.path.join(folder, filename))
        with torch.no_grad():
            pred = model(torch.Tensor(np.array([img])).to(device))
            predictions.append((filename, pred.cpu().numpy()))
    return predictions


result = predict_images_in_folder('test', convnet)
result_df = pandas.DataFrame(result, columns=['img', 'pred'])
result_df.to_csv('submission.csv', index=False)
";

// Ex) train_loop(model, criterion, optimizer, loader, device, epochs) ... for f in os.listdir(...)
#[test]
fn a_file_that_hands_its_training_to_a_helper_trains_whatever_it_predicts_after() {
    let a = run(DELEGATED_THEN_PREDICT);
    assert_eq!(a.kind, efficiency_audit::analysis::model::CodeKind::Train);
    assert_eq!(lines_of(&a, "EA203"), vec![12]);
}
