//! The twenty-third accuracy round: shapes from the blind waves g565– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// An unfinished fine-tuning script: loaders built, a pretrained torchvision model loaded at
/// module level, the training loop not yet written.
const UNFINISHED: &str = "import torch
from torchvision import datasets, models, transforms

train_on_gpu = torch.cuda.is_available()
train_data = datasets.ImageFolder('data/train', transform=transforms.ToTensor())
valid_data = datasets.ImageFolder('data/valid', transform=transforms.ToTensor())
train_loader = torch.utils.data.DataLoader(train_data, batch_size=32, num_workers=0)
valid_loader = torch.utils.data.DataLoader(valid_data, batch_size=32, num_workers=0)

model = models.vgg16(pretrained=True)
for param in model.features.parameters():
    param.requires_grad = False
";

// Ex) model = models.vgg16(pretrained=True)  (no loop reads train_loader yet)
#[test]
fn unread_loaders_of_a_script_loading_a_pretrained_model_are_not_reported() {
    let out = run(UNFINISHED);
    assert!(lines_of(&out, "EA101").is_empty());
    assert!(lines_of(&out, "EA102").is_empty());
    // the same file without the model may be a module imported for its loaders
    let module = UNFINISHED.replace(
        "model = models.vgg16(pretrained=True)\nfor param in model.features.parameters():\n    param.requires_grad = False\n",
        "",
    );
    assert_eq!(lines_of(&run(&module), "EA101"), vec![7, 8]);
}

/// The transfer-learning tutorial's `visualize_model`, printing each batch's outputs: it
/// returns once it has shown `num_images` images, a batch or two.
const VISUALIZE: &str = "import torch
import torchvision

device = torch.device('cuda')
model = torchvision.models.resnet18().to(device)
loader = torch.utils.data.DataLoader(val_set, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)


def visualize_model(model, num_images=6):
    images_so_far = 0
    with torch.no_grad():
        for i, (inputs, labels) in enumerate(loader):
            inputs = inputs.to(device)
            outputs = model(inputs)
            print(outputs)
            for j in range(inputs.size()[0]):
                images_so_far += 1
                show(inputs.cpu().data[j])
                if images_so_far == num_images:
                    return


visualize_model(model)
";

// Ex) if images_so_far == num_images: model.train(mode=was_training); return
#[test]
fn a_loop_returning_once_a_few_images_are_shown_is_no_hot_loop() {
    assert!(lines_of(&run(VISUALIZE), "EA504").is_empty());
    // shown until the loader runs out, it prints every batch
    let all = VISUALIZE.replace("num_images=6", "num_images=100000");
    assert_eq!(lines_of(&run(&all), "EA504"), vec![15]);
}

/// A benchmark harness: its loop runs `num_loops` times, an option unpacked beside another
/// that defaults to one, and each iteration is wrapped in tqdm.
const ONE_LOOP: &str = "import argparse
import torch
from tqdm import tqdm


def run_basic(x, model, num_loops):
    device = torch.device('cuda:0')
    model.to(device)
    optimizer = torch.optim.Adam(params=model.parameters(), lr=0.01)
    loss_sum = 0
    for _ in tqdm(range(num_loops)):
        optimizer.zero_grad()
        loss = model(x.to(device)).sum()
        loss.backward()
        loss_sum += loss.item()
        optimizer.step()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--run_type', type=str, default='basic')
    parser.add_argument('--num_loops', type=int, default=1)
    args = parser.parse_args()
    run, num_loops = args.run_type, args.num_loops
    x, model = load_init()
    run_basic(x, model, num_loops)
";

// Ex) run, num_loops, use_ddp = args.run_type, args.num_loops, args.ddp
// Ex) for _ in tqdm(range(num_loops)):
#[test]
fn a_loop_over_tqdm_of_a_range_unpacked_to_one_runs_once() {
    let out = run(ONE_LOOP);
    assert!(lines_of(&out, "EA301").is_empty());
    assert!(lines_of(&out, "EA203").is_empty());
    // a thousand iterations, it is a hot loop again
    let many = ONE_LOOP.replace("default=1)", "default=1000)");
    assert_eq!(lines_of(&run(&many), "EA301"), vec![15]);
    // `trange(n)` is tqdm's range
    let trange = ONE_LOOP.replace("tqdm(range(num_loops))", "trange(num_loops)");
    assert!(lines_of(&run(&trange), "EA301").is_empty());
    // an unpacking the engine cannot pair (a call on the right) stays unknown: a hot loop
    let unknown = ONE_LOOP.replace(
        "run, num_loops = args.run_type, args.num_loops",
        "run, num_loops = pick(args)",
    );
    assert_eq!(lines_of(&run(&unknown), "EA301"), vec![15]);
}

/// A CIFAR-10 notebook export: a preview loader read once through the old iterator method in
/// parentheses, and a test loader whose one batch is the whole test set.
const PREVIEW: &str = "import torch
from torch.utils.data import DataLoader

n_image = 25
preview_loader = DataLoader(cifar10_data, batch_size=n_image, shuffle=True)
images, labels = (iter(preview_loader)).next()

train_loader = DataLoader(cifar10_train, batch_size=64, shuffle=True, num_workers=4, pin_memory=True)
test_loader = DataLoader(cifar10_test, batch_size=len(cifar10_test), shuffle=False)
net = Net().cuda()
optimizer = torch.optim.Adam(net.parameters())
for epoch in range(20):
    for x, t in train_loader:
        x, t = x.cuda(), t.cuda()
        loss = loss_fnc(net(x), t)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

correct = 0
with torch.no_grad():
    for i, (x, t) in enumerate(test_loader):
        x, t = x.cuda(), t.cuda()
        correct += (net(x).argmax(1) == t).sum().item()
";

// Ex) images, labels = (iter(cifar10_loader)).next()
// Ex) test_loader = DataLoader(cifar10_test, batch_size=len(cifar10_test), shuffle=False)
#[test]
fn a_parenthesised_next_and_a_whole_dataset_batch_are_read_once() {
    let out = run(PREVIEW);
    assert!(lines_of(&out, "EA101").is_empty());
    assert!(lines_of(&out, "EA301").is_empty());
    // a test loader of batches of 100 is read every batch
    let batches = PREVIEW.replace("batch_size=len(cifar10_test)", "batch_size=100");
    assert_eq!(lines_of(&run(&batches), "EA301"), vec![24]);
    // the preview loader read in a loop is read
    let looped = PREVIEW.replace(
        "images, labels = (iter(preview_loader)).next()",
        "for images, labels in preview_loader:\n    show(images)",
    );
    assert_eq!(lines_of(&run(&looped), "EA101"), vec![5]);
}

/// A pandas demonstration: `apply(axis=1)` over a frame of four rows, its data written out and
/// bound to a name first.
const FEW_ROWS: &str = "import pandas as pd

dict_for_data_frame = {
    'name': ['Phil', 'Paul', 'Grace', 'Emmy'],
    'points': [1, 2, 3, 4],
}
df = pd.DataFrame(dict_for_data_frame)


def func_to_apply(row):
    return row['points'] * 2


result = df.apply(func_to_apply, axis=1)
print(result)
";

// Ex) dict_for_data_frame = {"name": ["Phil", "Paul", "Grace", "Emmy"], ...}
// Ex) df = pd.DataFrame(dict_for_data_frame); result = df.apply(func_to_apply, axis=1)
#[test]
fn apply_over_a_frame_of_a_few_rows_bound_to_a_name_is_not_reported() {
    assert!(lines_of(&run(FEW_ROWS), "EA601").is_empty());
    // a frame read from a file is reported
    let read = FEW_ROWS.replace(
        "df = pd.DataFrame(dict_for_data_frame)",
        "df = pd.DataFrame(load_rows())",
    );
    assert_eq!(lines_of(&run(&read), "EA601"), vec![14]);
}

/// A transfer-learning lesson that predicts on three random test images after training.
const SAMPLE: &str = "import random
from pathlib import Path
import torch
import torchvision
from PIL import Image

device = 'cuda' if torch.cuda.is_available() else 'cpu'


def pred_and_plot_image(model, image_path, device=device):
    img = Image.open(image_path)
    model.to(device)
    model.eval()
    with torch.inference_mode():
        pred = model(to_tensor(img).unsqueeze(0).to(device))
    show(img, pred)


model = torchvision.models.efficientnet_b0().to(device)
num_images_to_plot = 3
test_image_path_list = list(Path('test').glob('*/*.jpg'))
test_image_path_sample = random.sample(population=test_image_path_list, k=num_images_to_plot)
for image_path in test_image_path_sample:
    pred_and_plot_image(model=model, image_path=image_path)
";

// Ex) test_image_path_sample = random.sample(population=test_image_path_list, k=num_images_to_plot)
#[test]
fn a_loop_over_a_random_sample_of_three_paths_runs_three_times() {
    assert!(lines_of(&run(SAMPLE), "EA502").is_empty());
    // over every test image, each is decoded in the loop that drives the model
    let all = SAMPLE.replace(
        "for image_path in test_image_path_sample:",
        "for image_path in test_image_path_list:",
    );
    assert_eq!(lines_of(&run(&all), "EA502"), vec![11]);
}

/// A comparison of a torchvision model run by PyTorch on the CPU with its ONNX export run by
/// ONNX Runtime on the GPU through I/O binding.
const ONNX: &str = "import numpy as np
import onnxruntime
import torch
import torchvision.models as models

img = np.zeros((1, 3, 224, 224), dtype=np.float32)
torch_model = models.resnet18(pretrained=True)
torch_model.eval()
with torch.no_grad():
    result_torch = torch_model(torch.from_numpy(img))

session = onnxruntime.InferenceSession('resnet18.onnx', providers=['CUDAExecutionProvider'])
io_binding = session.io_binding()
x = onnxruntime.OrtValue.ortvalue_from_numpy(img, 'cuda', 0)
y = onnxruntime.OrtValue.ortvalue_from_shape_and_type([1, 1000], np.float32, 'cuda', 0)
session.run_with_iobinding(io_binding)
";

// Ex) X_ortvalue = onnxruntime.OrtValue.ortvalue_from_numpy(img, 'cuda', 0)
#[test]
fn onnx_runtime_buffers_on_cuda_do_not_put_the_torch_model_there() {
    assert!(lines_of(&run(ONNX), "EA204").is_empty());
    // the PyTorch model moved to the GPU is a convolutional network on CUDA
    let moved = ONNX.replace(
        "torch_model.eval()",
        "torch_model = torch_model.to('cuda').eval()",
    );
    assert_eq!(lines_of(&run(&moved), "EA204"), vec![8]);
}

/// The Udacity flower classifier: a setup function defaulting its device to `'cuda'`, called
/// with the device the `--gpu` flag chooses, off by default.
const FLOWERS: &str = "import argparse
import torch
from torchvision import datasets, models


def nn_setup(arch='vgg16', lr=0.001, device='cuda'):
    model = models.vgg16(pretrained=True)
    model.to(device)
    optimizer = torch.optim.Adam(model.classifier.parameters(), lr=lr)
    return model, optimizer


def train(model, loader, optimizer, device):
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--gpu', action='store_true')
    args = parser.parse_args()
    loader = torch.utils.data.DataLoader(datasets.ImageFolder('flowers/train'), batch_size=64, num_workers=4)
    device = torch.device('cuda' if torch.cuda.is_available() and args.gpu else 'cpu')
    model, optimizer = nn_setup(arch='vgg16', device=device)
    train(model, loader, optimizer, device)
";

// Ex) def nn_setup(arch='vgg16', hidden_units=2048, output_units=102, lr=0.001, device='cuda'):
// Ex) model, criterion, optimizer = nn_setup(arch=args.arch, ..., device=device)
#[test]
fn a_cuda_default_every_call_overrides_puts_nothing_on_the_gpu() {
    let out = run(FLOWERS);
    assert!(lines_of(&out, "EA201").is_empty());
    assert!(lines_of(&out, "EA301").is_empty());
    // called once without the device, the default applies
    let default = FLOWERS.replace(
        "model, optimizer = nn_setup(arch='vgg16', device=device)",
        "model, optimizer = nn_setup(arch='vgg16')",
    );
    assert_eq!(lines_of(&run(&default), "EA301"), vec![20]);
}

/// Its twin: the device chosen by `(args.GPU == True) & torch.cuda.is_available()`.
const BITWISE_AND: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--GPU', type=bool, default=False)
args = parser.parse_args()
if (args.GPU == True) & torch.cuda.is_available():
    device = 'cuda'
else:
    device = 'cpu'
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).to(device)
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) if (args.GPU == True) & torch.cuda.is_available(): device = "cuda"
#[test]
fn a_bitwise_and_of_tests_is_a_switch_off_as_shipped() {
    assert!(lines_of(&run(BITWISE_AND), "EA201").is_empty());
    // on by default, the file trains on the GPU
    let on = BITWISE_AND.replace("default=False", "default=True");
    assert_eq!(lines_of(&run(&on), "EA201"), vec![13]);
}

/// A GAN loop that alternates its discriminator and generator steps on counters it counts down
/// each step, both bound in one unpacking.
const COUNTDOWN: &str = "import torch

model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(200):
    d_left, g_left = 2, 1
    for x in train_loader:
        if d_left > 0:
            loss = model(x.cuda()).mean()
            d_left -= 1
        elif g_left > 0:
            loss = model(x.cuda()).sum()
            print(loss.item())
            g_left -= 1
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) d_steps_left, g_steps_left = 2, 1 ... if d_steps_left > 0: ... d_steps_left -= 1 elif g_steps_left > 0:
#[test]
fn a_counter_changed_in_place_in_the_loop_has_no_one_value() {
    assert_eq!(lines_of(&run(COUNTDOWN), "EA301"), vec![13]);
    // bound one by one, the same
    let single = COUNTDOWN.replace("d_left, g_left = 2, 1", "d_left = 2\n    g_left = 1");
    assert_eq!(lines_of(&run(&single), "EA301"), vec![14]);
}

/// A PyTorch Geometric GCN sized by its graphs' node-feature width, read from the first graph.
const GCN: &str = "import torch
import torch.nn as nn
from torch_geometric.nn import GCNConv
from torch_geometric.loader import DataLoader


class GCNModel(nn.Module):
    def __init__(self, input_dim, hidden_dim=64):
        super().__init__()
        self.conv1 = GCNConv(input_dim, hidden_dim)
        self.conv2 = GCNConv(hidden_dim, hidden_dim)
        self.linear = nn.Linear(hidden_dim, 1)

    def forward(self, x, edge_index):
        return self.linear(self.conv2(self.conv1(x, edge_index).relu(), edge_index))


device = torch.device('cuda')
loader = DataLoader(train_dataset, batch_size=8, shuffle=True)
input_dim = train_dataset[0].x.shape[1]
model = GCNModel(input_dim=input_dim).to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(100):
    for batch in loader:
        batch = batch.to(device)
        loss = (model(batch.x, batch.edge_index).squeeze() - batch.y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) input_dim = train_dataset[0].x.shape[1]; model = GCNModel(input_dim=input_dim, hidden_dim=hidden_dim)
#[test]
fn a_gcn_sized_by_its_graphs_feature_width_is_a_small_model() {
    let out = run(GCN);
    assert!(lines_of(&out, "EA201").is_empty());
    assert!(lines_of(&out, "EA202").is_empty());
    // a width the file does not bound leaves the size unknown
    let unknown = GCN.replace("train_dataset[0].x.shape[1]", "load_width()");
    assert_eq!(lines_of(&run(&unknown), "EA201"), vec![24]);
}

/// An SRGAN trained by iterations: a counter stepped by one in the batch loop announces the
/// second phase when it reaches the first phase's length.
const PHASES: &str = "import torch

iterations_phase1 = 3000
model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters())
iteration = 0
while iteration < 6000:
    for x in train_loader:
        iteration += 1
        loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if iteration == iterations_phase1:
            print('Phase 2: reducing learning rate', loss.item())
";

// Ex) iteration += 1 ... if iteration == iterations_phase1: print("Phase 2: reducing learning rate")
#[test]
fn a_counter_equal_to_a_count_the_loop_keeps_runs_once() {
    let out = run(PHASES);
    assert!(lines_of(&out, "EA504").is_empty());
    assert!(lines_of(&out, "EA301").is_empty());
    // a counter the loop sets otherwise is no step count
    let set = PHASES.replace("iteration += 1", "iteration = pick(iteration)");
    assert_eq!(lines_of(&run(&set), "EA504"), vec![15]);
}

/// A CIFAR-10 trainer that moves its model to a config module's device, copies embeddings back
/// with `.to('cpu')`, and shows moving averages of its losses from a deque.
const COPY_BACK: &str = "from collections import deque
import torch
import config

model = ResNet18()
model.to(config.device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    losses = deque()
    for x, y in pbar:
        x = x.to(config.device)
        y = y.to(config.device)
        optimizer.zero_grad()
        loss = loss_func(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        pbar.set_postfix({'loss': torch.Tensor(losses).mean().item()})

embeddings = model.features(x)
saved = embeddings.to('cpu')
";

// Ex) x.append(embeddings.to('cpu'))  (a copy back)
// Ex) pbar.set_postfix({'loss': torch.Tensor(losses).mean().item()})  with losses = deque()
#[test]
fn a_result_copied_back_to_the_cpu_does_not_place_the_work_there() {
    let out = run(COPY_BACK);
    assert_eq!(lines_of(&out, "EA301"), vec![17]);
    assert_eq!(lines_of(&out, "EA201"), vec![10]);
    // the model moved to the CPU does place it there
    let cpu = COPY_BACK.replace("saved = embeddings.to('cpu')", "model.to('cpu')");
    assert!(lines_of(&run(&cpu), "EA201").is_empty());
    // a tensor of a list the file does not show may hold device values
    let unknown = COPY_BACK.replace("    losses = deque()\n", "    losses = tracker.values\n");
    assert_eq!(lines_of(&run(&unknown), "EA301"), vec![17, 18]);
}

/// PyTorch's ImageNet example: the model placed by a chain of branches, one of them for
/// Apple's MPS backend.
const IMAGENET: &str = "import argparse
import torch
import torchvision.models as models

parser = argparse.ArgumentParser()
parser.add_argument('--gpu', default=None, type=int)
parser.add_argument('-a', '--arch', default='resnet18')
args = parser.parse_args()
model = models.__dict__[args.arch]()
if not torch.cuda.is_available() and not torch.backends.mps.is_available():
    print('using CPU, this will be slow')
elif args.gpu is not None and torch.cuda.is_available():
    torch.cuda.set_device(args.gpu)
    model = model.cuda(args.gpu)
elif torch.backends.mps.is_available():
    device = torch.device('mps')
    model = model.to(device)
else:
    model = torch.nn.DataParallel(model).cuda()
optimizer = torch.optim.SGD(model.parameters(), 0.1)
for epoch in range(90):
    for images, target in train_loader:
        loss = criterion(model(images.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) elif torch.backends.mps.is_available(): device = torch.device("mps"); model = model.to(device)
#[test]
fn the_mps_branch_never_runs_on_the_gpu_runner() {
    assert_eq!(lines_of(&run(IMAGENET), "EA203"), vec![19]);
}
