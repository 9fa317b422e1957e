//! The thirteenth accuracy round: shapes from the blind wave g235– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// The diffusers DreamBooth shape: the U-Net is trained and handed to `accelerator.prepare`,
/// the frozen text encoder is moved by the file itself; the optimizer class is chosen by a
/// switch (`bnb.optim.AdamW8bit` or `torch.optim.AdamW`).
const DREAMBOOTH: &str = "import argparse
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel
from transformers import CLIPTextModel

def main(args):
    accelerator = Accelerator()
    text_encoder = CLIPTextModel.from_pretrained(args.base, subfolder='text_encoder')
    unet = UNet2DConditionModel.from_pretrained(args.base, subfolder='unet')
    if args.use_8bit_adam:
        import bitsandbytes as bnb
        optimizer_class = bnb.optim.AdamW8bit
    else:
        optimizer_class = torch.optim.AdamW
    optimizer = optimizer_class(unet.parameters(), lr=args.lr)
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    text_encoder.to(accelerator.device)
    for step, batch in enumerate(loader):
        with accelerator.accumulate(unet):
            hidden = text_encoder(batch['input_ids'])[0]
            loss = unet(batch['latents'], batch['t'], hidden).sample.mean()
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
";

// Ex) unet = UNet2DConditionModel.from_pretrained(...)       <- the model trained
//     unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
//     text_encoder.to(accelerator.device)                     <- frozen, placed by the file
#[test]
fn a_trained_model_a_framework_places_is_the_anchor_over_a_frozen_one_the_file_moves() {
    let a = run(DREAMBOOTH);
    assert_eq!(lines_of(&a, "EA203"), vec![10], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA204"), vec![10]);
    // one model of several a switch chooses among is no build site: nothing is guessed
    let chosen = DREAMBOOTH.replace(
        "    unet = UNet2DConditionModel.from_pretrained(args.base, subfolder='unet')\n",
        "    if args.arch == 'sd':\n        unet = UNet2DConditionModel.from_pretrained(args.base)\n    else:\n        unet = UNet2DConditionModel.from_config(args.cfg)\n",
    );
    let a = run(&chosen);
    assert!(!lines_of(&a, "EA203").contains(&10), "{:?}", a.findings);
    assert!(!lines_of(&a, "EA203").contains(&13), "{:?}", a.findings);
}

/// RIFE's video interpolation: each frame read back from the GPU is appended to a buffer that
/// a writer thread of the file (`clear_buffer`, which writes the video) drains.
const WRITER_THREAD: &str = "import _thread
import cv2
import torch

def clear_buffer(out, buffer):
    for frame in buffer:
        out.write(frame)

model = torch.load('flownet.pt').cuda().eval()
cap = cv2.VideoCapture('in.mp4')
out = cv2.VideoWriter('out.mp4', cv2.VideoWriter_fourcc(*'mp4v'), 30, (640, 480))
buffer = []
ok, frame = cap.read()
with torch.no_grad():
    while ok:
        ok, frame = cap.read()
        x = torch.from_numpy(frame).cuda().permute(2, 0, 1)[None].float() / 255.0
        mid = model(x)
        mid = (mid[0] * 255.0).byte().cpu().numpy().transpose(1, 2, 0)
        buffer.append(mid)
        if len(buffer) > 100:
            _thread.start_new_thread(clear_buffer, (out, buffer))
            buffer = []
";

// Ex) mid = (mid[0] * 255.).byte().cpu().numpy() ... buffer.append(mid)
//     _thread.start_new_thread(clear_buffer, (out, buffer))   # clear_buffer writes frames
#[test]
fn a_frame_handed_to_a_writer_thread_is_the_loops_product() {
    let a = run(WRITER_THREAD);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // a thread that only logs the frames writes nothing out: the read is a sync
    let logger = WRITER_THREAD.replace("out.write(frame)", "print(frame.shape)");
    let a = run(&logger);
    assert_eq!(lines_of(&a, "EA301"), vec![19], "{:?}", a.findings);
}

/// Stable Video Diffusion's `get_batch`: conditioning values read from a dict of host values,
/// wrapped in a one-element tensor and moved, every sampling step.
const HOST_VALUE_LIST: &str = "import torch

def get_batch(value_dict, n, device):
    return {
        'fps_id': torch.tensor([value_dict['fps_id']]).to(device).repeat(n),
        'zeros': torch.tensor([0.0]).to(device).repeat(n),
    }

model = torch.load('svd.pt').cuda().eval()
with torch.no_grad():
    for step in range(1000):
        batch = get_batch({'fps_id': 6}, 4, 'cuda')
        out = model(batch)
";

// Ex) torch.tensor([value_dict["fps_id"]]).to(device)   <- host data wrapped: the data's copy
//     torch.tensor([0.0]).to(device)                     <- a constant: build it on the device
#[test]
fn a_list_of_values_read_from_host_data_is_wrapped_data_not_a_constant() {
    let a = run(HOST_VALUE_LIST);
    assert_eq!(lines_of(&a, "EA304"), vec![6], "{:?}", a.findings);
}

/// The PyTorch ImageNet example's placement: `args.distributed` derived from the options in
/// `main()`, `args.gpu` reassigned in `main_worker` from the value `main()` passes.
const IMAGENET_EXAMPLE: &str = "import argparse
import torch
import torchvision.models as models

parser = argparse.ArgumentParser()
parser.add_argument('--arch', default='resnet18')
parser.add_argument('--world-size', default=-1, type=int)
parser.add_argument('--gpu', default=None, type=int)
parser.add_argument('--multiprocessing-distributed', action='store_true')


def main():
    args = parser.parse_args()
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    main_worker(args.gpu, args)


def main_worker(gpu, args):
    args.gpu = gpu
    model = models.__dict__[args.arch]()
    if not torch.cuda.is_available():
        print('using CPU')
    elif args.distributed:
        if args.gpu is not None:
            model.cuda(args.gpu)
        else:
            model.cuda()
    elif args.gpu is not None:
        model = model.cuda(args.gpu)
    else:
        if args.arch.startswith('alexnet'):
            model.features = torch.nn.DataParallel(model.features)
            model.cuda()
        else:
            model = torch.nn.DataParallel(model).cuda()
    optimizer = torch.optim.SGD(model.parameters(), 0.1)
    loader = torch.utils.data.DataLoader(ds, batch_size=256, num_workers=4, pin_memory=True)
    for i, (x, y) in enumerate(loader):
        out = model(x.cuda(args.gpu, non_blocking=True))
        loss = torch.nn.functional.cross_entropy(out, y.cuda(args.gpu, non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == '__main__':
    main()
";

// Ex) args.distributed = args.world_size > 1 or args.multiprocessing_distributed   (False)
//     args.gpu = gpu   (the args.gpu main() passes: None)
//     ... else: model = torch.nn.DataParallel(model).cuda()   <- the placement as shipped
#[test]
fn switches_a_script_derives_from_its_options_are_read_as_shipped() {
    let a = run(IMAGENET_EXAMPLE);
    assert_eq!(lines_of(&a, "EA203"), vec![35], "{:?}", a.findings);
    // launched distributed by default: the first placement of the distributed branch
    let dist = IMAGENET_EXAMPLE.replace("default=-1, type=int", "default=2, type=int");
    let a = run(&dist);
    assert_eq!(lines_of(&a, "EA203"), vec![27], "{:?}", a.findings);
}

/// A train/val phase loop that picks its loader by a conditional expression every epoch.
const PHASE_LOADER: &str = "import torch
import torchvision
from torch.utils.data import DataLoader

trainloader = DataLoader(trainset, batch_size=128, shuffle=True, num_workers=4, pin_memory=True)
testloader = DataLoader(testset, batch_size=128, shuffle=False, num_workers=4, pin_memory=True)
model = torchvision.models.resnet34().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(80):
    for phase in ['train', 'val']:
        dataloader = trainloader if phase == 'train' else testloader
        for inputs, labels in dataloader:
            inputs = inputs.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            with torch.set_grad_enabled(phase == 'train'):
                loss = torch.nn.functional.cross_entropy(model(inputs), labels)
                if phase == 'train':
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
";

// Ex) dataloader = trainloader if phase == 'train' else testloader
//     for inputs, labels in dataloader:   (every epoch: both loaders restart their workers)
#[test]
fn a_loader_chosen_by_phase_each_epoch_is_iterated_per_epoch() {
    let a = run(PHASE_LOADER);
    assert_eq!(lines_of(&a, "EA103"), vec![5, 6], "{:?}", a.findings);
}

/// EfficientAT's ESC-50 fine-tuning: CUDA only with `--cuda`, off by default.
const CUDA_FLAG_OFF: &str = "import argparse
import torch
from torch.utils.data import DataLoader
from models.mn import get_model

def train(args):
    device = torch.device('cuda') if args.cuda and torch.cuda.is_available() else torch.device('cpu')
    model = get_model(width_mult=1.0)
    model.to(device)
    dl = DataLoader(get_training_set(), batch_size=32, num_workers=4, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(80):
        for x, y in dl:
            x, y = x.to(device), y.to(device)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(loss.item())

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--cuda', action='store_true', default=False)
    train(parser.parse_args())
";

// Ex) device = torch.device('cuda') if args.cuda and torch.cuda.is_available() else torch.device('cpu')
//     (with `--cuda` off by default: the work runs on the CPU as shipped)
#[test]
fn a_device_chosen_by_a_flag_that_is_off_runs_on_the_cpu() {
    let a = run(CUDA_FLAG_OFF);
    for gpu_rule in ["EA102", "EA201", "EA203", "EA204", "EA301"] {
        assert!(
            lines_of(&a, gpu_rule).is_empty(),
            "{gpu_rule}: {:?}",
            a.findings
        );
    }
    assert_eq!(lines_of(&a, "EA103"), vec![10]);
    // with the flag on by default, the GPU rules apply
    let on = CUDA_FLAG_OFF.replace("default=False", "default=True");
    let a = run(&on);
    assert_eq!(lines_of(&a, "EA203"), vec![9], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA301"), vec![19]);
}

// Ex) if __name__ == 'main':   (a script's name is never 'main': nothing below runs)
#[test]
fn a_main_guard_that_names_the_wrong_module_runs_nothing() {
    let src = CUDA_FLAG_OFF
        .replace("default=False", "default=True")
        .replace("if __name__ == '__main__':", "if __name__=='main':");
    let a = run(&src);
    assert!(a.findings.is_empty(), "{:?}", a.findings);
}

/// IAM handwriting CRNN: the collate moves each batch to `dev`, a CUDA choice by another name.
const COLLATE_TO_DEV: &str = "import torch
from torch.utils.data import DataLoader
from model import IAMModel

dev = 'cuda' if torch.cuda.is_available() else 'cpu'
model = IAMModel(time_step=96)
model.to(dev)

def collate_fn(batch):
    images, targets, lengths = zip(*batch)
    images = torch.stack(images)
    targets = torch.cat(targets)
    lengths = torch.tensor(lengths)
    return images.to(dev), targets.to(dev), lengths.to(dev)

train_loader = DataLoader(dataset, batch_size=64, shuffle=True, collate_fn=collate_fn)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(10):
    for xb, yb, lens in train_loader:
        loss = model.loss(model(xb), yb, lens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) dev = 'cuda' if torch.cuda.is_available() else 'cpu'
//     def collate_fn(batch): ... return images.to(dev), ...   (batches built on the GPU)
#[test]
fn a_collate_that_moves_batches_to_a_cuda_choice_by_any_name_is_on_the_device() {
    let a = run(COLLATE_TO_DEV);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    // a collate that builds on the host keeps both findings
    let host = COLLATE_TO_DEV.replace(
        "return images.to(dev), targets.to(dev), lengths.to(dev)",
        "return images, targets, lengths",
    );
    let a = run(&host);
    assert_eq!(lines_of(&a, "EA101"), vec![16], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA102"), vec![16]);
}

/// SupContrast's linear evaluation: the optimizer over the classifier comes from a helper of
/// another module; the frozen encoder is placed first.
const OPTIMIZER_HELPER: &str = "import torch
from util import set_optimizer
from networks.resnet_big import SupConResNet, LinearClassifier

model = SupConResNet(name='resnet50')
classifier = LinearClassifier(name='resnet50', num_classes=10)
model = model.cuda()
classifier = classifier.cuda()
optimizer = set_optimizer(opt, classifier)
model.eval()
for epoch in range(100):
    for images, labels in train_loader:
        images = images.cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        with torch.no_grad():
            features = model.encoder(images)
        loss = torch.nn.functional.cross_entropy(classifier(features), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) optimizer = set_optimizer(opt, classifier)   <- the model trained: anchor at its placement
#[test]
fn a_model_an_optimizer_helper_is_handed_is_the_trained_one() {
    let a = run(OPTIMIZER_HELPER);
    assert_eq!(lines_of(&a, "EA203"), vec![8], "{:?}", a.findings);
}

/// nerf-pytorch: every tensor on the GPU through the default tensor type; a PSNR computed on
/// the host from a `.cpu()` copy.
const DEFAULT_CUDA_TENSORS: &str = "import torch
from model import NeRF

torch.set_default_tensor_type('torch.cuda.FloatTensor')

def mse_to_psnr(mse):
    return -10.0 * torch.log10(mse)

model = NeRF(n_layer=8, n_dim=256)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
for it in range(200000):
    rays, target = sample_rays()
    loss = ((model(rays) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    psnr = mse_to_psnr(loss.detach().cpu())
    log = {'loss': loss.item(), 'psnr': psnr.item()}
";

// Ex) torch.set_default_tensor_type('torch.cuda.FloatTensor')   (the file runs on CUDA)
//     psnr = mse_to_psnr(loss.detach().cpu())  ...  psnr.item()   (a host value: no sync)
#[test]
fn tensors_made_on_the_gpu_by_default_make_a_cuda_file() {
    let a = run(DEFAULT_CUDA_TENSORS);
    assert_eq!(lines_of(&a, "EA203"), vec![9], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA201"), vec![11]);
    assert_eq!(lines_of(&a, "EA301"), vec![17, 18]);
    let cpu = DEFAULT_CUDA_TENSORS.replace("torch.cuda.FloatTensor", "torch.FloatTensor");
    let a = run(&cpu);
    assert!(lines_of(&a, "EA203").is_empty(), "{:?}", a.findings);
}

/// HTR training: workers as a share of the machine's cores.
const CORE_SHARE_WORKERS: &str = "import torch
from multiprocessing import cpu_count

nwrks = int(cpu_count() * 0.70)
train_loader = torch.utils.data.DataLoader(train_set, batch_size=24, num_workers=nwrks, pin_memory=True, shuffle=True)
model = torch.load('htr.pt').cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(20):
    for x, y in train_loader:
        loss = model(x.cuda(non_blocking=True)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) nwrks = int(cpu_count() * 0.70)   (at least 1 on a machine of two cores or more)
#[test]
fn workers_as_a_share_of_the_cores_are_some() {
    let a = run(CORE_SHARE_WORKERS);
    assert_eq!(lines_of(&a, "EA103"), vec![5], "{:?}", a.findings);
    // a share that leaves none on a small machine stays unknown
    let none = CORE_SHARE_WORKERS.replace("cpu_count() * 0.70", "cpu_count() - 2");
    let a = run(&none);
    assert!(lines_of(&a, "EA103").is_empty(), "{:?}", a.findings);
}

/// The 3D pose baseline: options parsed in another module (`from opt import Options`); the
/// test pass runs only with `--test`.
const MODE_SWITCH: &str = "import torch
from opt import Options
from model import LinearModel

def test(loader, model):
    model.eval()
    for inps, tars in loader:
        out = model(inps.cuda())
        err = (out - tars.cuda()).abs().mean().item()

def main(opt):
    model = LinearModel().cuda()
    if opt.test:
        test(test_loader, model)
        return
    print('nothing to train')

if __name__ == '__main__':
    main(Options().parse())
";

// Ex) if opt.test:   (opt parsed elsewhere, never set here: an unset flag, off as shipped)
#[test]
fn a_mode_switch_of_options_parsed_elsewhere_is_off() {
    let a = run(MODE_SWITCH);
    assert!(lines_of(&a, "EA401").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // the same switch set by the file runs
    let set = MODE_SWITCH.replace(
        "    model = LinearModel().cuda()\n",
        "    model = LinearModel().cuda()\n    opt.test = True\n",
    );
    let a = run(&set);
    assert_eq!(lines_of(&a, "EA401"), vec![7], "{:?}", a.findings);
}

/// togheppi's CycleGAN: test loaders read for one batch with the dunder spelling.
const DUNDER_NEXT: &str = "import torch
from torch.utils.data import DataLoader
from model import Generator

G = Generator(3, 64, 3, 9).cuda()
train_loader = DataLoader(train_set, batch_size=1, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
test_loader = DataLoader(test_set, batch_size=1, shuffle=False)
test_real = test_loader.__iter__().__next__()
opt = torch.optim.Adam(G.parameters(), lr=2e-4)
for epoch in range(200):
    for x in train_loader:
        loss = G(x.cuda(non_blocking=True)).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
";

// Ex) test_real = test_loader.__iter__().__next__()   (one batch: no workers to start)
#[test]
fn a_loader_read_once_through_dunder_methods_is_read_once() {
    let a = run(DUNDER_NEXT);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    let looped = DUNDER_NEXT.replace(
        "test_real = test_loader.__iter__().__next__()",
        "for test_real in test_loader: pass",
    );
    let a = run(&looped);
    assert_eq!(lines_of(&a, "EA101"), vec![7], "{:?}", a.findings);
}

/// FSDP2's example: a model built on the meta device, materialized with `to_empty`; and a
/// U-Net spelled `U_Net`.
const TO_EMPTY: &str = "import torch
from model import Transformer, ModelArgs

with torch.device('meta'):
    model = Transformer(ModelArgs(n_layers=2, dim=512))
model.to_empty(device='cuda')
optim = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(1000):
    x = torch.randint(0, 1000, (32, 128), device='cuda')
    loss = model(x).sum()
    loss.backward()
    optim.step()
    optim.zero_grad()
";

// Ex) model.to_empty(device='cuda')   (where the model reaches the GPU)
#[test]
fn a_model_materialized_with_to_empty_is_placed_there() {
    let a = run(TO_EMPTY);
    assert_eq!(lines_of(&a, "EA203"), vec![6], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA202"), vec![6]);
}

// Ex) net = torch.nn.DataParallel(U_Net(training=False)).cuda()   (a U-Net: convolutional)
#[test]
fn a_u_net_split_by_an_underscore_is_convolutional() {
    let src = TO_EMPTY
        .replace(
            "from model import Transformer, ModelArgs",
            "from net import U_Net",
        )
        .replace(
            "    model = Transformer(ModelArgs(n_layers=2, dim=512))",
            "    model = U_Net(training=True)",
        )
        .replace(
            "torch.randint(0, 1000, (32, 128), device='cuda')",
            "torch.randn(8, 1, 256, 256, device='cuda')",
        );
    let a = run(&src);
    assert_eq!(lines_of(&a, "EA204"), vec![6], "{:?}", a.findings);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
}
