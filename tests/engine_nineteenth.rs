//! The nineteenth accuracy round: shapes from the blind waves g419– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A training loop with a CPU fallback branch on the device string the script chose.
const CPU_FALLBACK: &str = "import torch
from torch.utils.data import DataLoader


def main():
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    model = torch.nn.Linear(10, 2).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(10):
        for inputs, targets in loader:
            if device == 'cuda':
                inputs = inputs.to(device, non_blocking=True)
                targets = targets.to(device, non_blocking=True)
            else:
                inputs = inputs.to(device)
                targets = targets.to(device)
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(inputs), targets)
            loss.backward()
            opt.step()


if __name__ == '__main__':
    main()
";

// Ex) if device == 'cuda': x = x.to(device, non_blocking=True) else: x = x.to(device)
#[test]
fn the_cpu_fallback_of_a_device_test_does_not_run_on_cuda() {
    assert!(lines_of(&run(CPU_FALLBACK), "EA303").is_empty());
    // through `torch.device(...).type`
    let typed = CPU_FALLBACK
        .replace(
            "device = 'cuda' if torch.cuda.is_available() else 'cpu'",
            "device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')",
        )
        .replace("if device == 'cuda':", "if device.type == 'cuda':");
    assert!(lines_of(&run(&typed), "EA303").is_empty());
    // the copies of the CUDA branch are reported when they block
    let blocking = CPU_FALLBACK.replace(
        "                inputs = inputs.to(device, non_blocking=True)\n",
        "                inputs = inputs.to(device)\n",
    );
    assert_eq!(lines_of(&run(&blocking), "EA303"), vec![13]);
    // a test the engine cannot decide leaves both branches running
    let unknown = CPU_FALLBACK.replace("if device == 'cuda':", "if args.fast:");
    assert_eq!(lines_of(&run(&unknown), "EA303"), vec![16, 17]);
}

/// Segmentation inference over a folder, the image decoded from an f-string path.
const FSTRING_DECODE: &str = "import os
import torch
from PIL import Image
from torchvision import transforms
from model import fcn

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
trans = transforms.ToTensor()
model = fcn(1).to(device)
model.eval()
for name in os.listdir('img_pre'):
    img = Image.open(f'img_pre/{name}')
    with torch.no_grad():
        res = model(trans(img).unsqueeze(0).to(device))
    transforms.ToPILImage()(res.squeeze().cpu()).save(f'result/{name}')
";

// Ex) for i in os.listdir('img_pre'): img = Image.open(f'img_pre/{i}')
#[test]
fn an_image_decoded_from_an_f_string_path_is_the_loops_input() {
    assert_eq!(lines_of(&run(FSTRING_DECODE), "EA502"), vec![12]);
    // a fixed file is no input of the loop
    let fixed = FSTRING_DECODE.replace("Image.open(f'img_pre/{name}')", "Image.open('logo.png')");
    assert!(lines_of(&run(&fixed), "EA502").is_empty());
}

/// An MLP autoencoder of about 952,000 parameters whose `__init__` calls its weight init.
const WEIGHT_INIT: &str = "import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class VAE(nn.Module):
    def __init__(self, z_dim=2):
        super(VAE, self).__init__()
        self.encode = nn.Sequential(
            nn.Linear(784, 400), nn.ReLU(), nn.Linear(400, 400), nn.ReLU(), nn.Linear(400, 2 * z_dim))
        self.decode = nn.Sequential(
            nn.Linear(z_dim, 400), nn.ReLU(), nn.Linear(400, 400), nn.ReLU(), nn.Linear(400, 784))
        self.weight_init()

    def weight_init(self):
        for block in self._modules:
            for m in self._modules[block]:
                if isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.02)

    def forward(self, x):
        return self.decode(self.encode(x)[:, :2])


device = 'cuda' if torch.cuda.is_available() else 'cpu'
loader = DataLoader(train_set, batch_size=100, shuffle=True, num_workers=2, pin_memory=True, persistent_workers=True)
vae = VAE().to(device)
opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
for epoch in range(10):
    for x, _ in loader:
        x = x.to(device, non_blocking=True)
        loss = (vae(x) - x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
";

// Ex) def __init__(self, z_dim=2): ...; self.weight_init()
#[test]
fn a_weight_init_method_called_in_init_adds_no_parameters() {
    let report = run(WEIGHT_INIT);
    assert!(lines_of(&report, "EA201").is_empty());
    assert!(lines_of(&report, "EA202").is_empty());
    // `self.apply(init_fn)` alike
    let apply = WEIGHT_INIT.replace("self.weight_init()\n", "self.apply(init_fn)\n");
    assert!(lines_of(&run(&apply), "EA201").is_empty());
    // a method that builds a layer the count cannot size keeps the findings
    let builds = WEIGHT_INIT.replace(
        "                if isinstance(m, nn.Linear):\n                    nn.init.normal_(m.weight, 0, 0.02)\n",
        "                pass\n        self.extra = nn.TransformerEncoderLayer(d_model, 8)\n",
    );
    assert_eq!(lines_of(&run(&builds), "EA201"), vec![30]);
}

/// Style transfer whose options are copied into a config dict handed to the function.
const CONFIG_DICT: &str = "import argparse
import torch
from torch.optim import Adam, LBFGS
import utils


def transfer(config):
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    img = utils.load(config['content'], device).requires_grad_(True)
    net = utils.prepare_model(config['model'], device)
    if config['optimizer'] == 'adam':
        optimizer = Adam((img,), lr=10.0)
        for cnt in range(3000):
            loss = utils.loss(net, img)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f'iteration {cnt}: {loss.item():12.4f}')
    elif config['optimizer'] == 'lbfgs':
        optimizer = LBFGS((img,), max_iter=1000)

        def closure():
            optimizer.zero_grad()
            loss = utils.loss(net, img)
            loss.backward()
            return loss

        optimizer.step(closure)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--content', default='figures.jpg')
    parser.add_argument('--optimizer', choices=['lbfgs', 'adam'], default='lbfgs')
    parser.add_argument('--model', choices=['vgg16', 'vgg19'], default='vgg19')
    args = parser.parse_args()
    config = dict()
    for arg in vars(args):
        config[arg] = getattr(args, arg)
    transfer(config)
";

// Ex) for arg in vars(args): config[arg] = getattr(args, arg) ... if config['optimizer'] == 'adam':
#[test]
fn an_entry_of_a_dict_copied_from_the_options_is_compared_as_shipped() {
    let report = run(CONFIG_DICT);
    assert!(lines_of(&report, "EA301").is_empty());
    assert!(lines_of(&report, "EA201").is_empty());
    // with `adam` the default, the Adam loop runs and reads the loss every step
    let adam = CONFIG_DICT.replace("default='lbfgs'", "default='adam'");
    assert_eq!(lines_of(&run(&adam), "EA301"), vec![18]);
}

/// A training script whose network is built by name from a config dict copied from the options.
const CONFIG_ARCH: &str = "import argparse
import torch
import models


def main(config):
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = models.build_model(config['arch']).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            with torch.autocast('cuda', dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--arch', default='resnet18')
    args = parser.parse_args()
    config = {}
    for arg in vars(args):
        config[arg] = getattr(args, arg)
    main(config)
";

// Ex) model = models.build_model(config['arch']) with `--arch` defaulting to 'resnet18'
#[test]
fn a_network_named_by_a_config_entry_copied_from_the_options_is_convolutional() {
    assert_eq!(lines_of(&run(CONFIG_ARCH), "EA204"), vec![8]);
    let vit = CONFIG_ARCH.replace("default='resnet18'", "default='vit_b_16'");
    assert!(lines_of(&run(&vit), "EA204").is_empty());
}

/// YOLO inference over a video's frames.
const YOLO_VIDEO: &str = "import cv2
from ultralytics import YOLO

model = YOLO('models/yolov8s.pt')
model.to('cuda')
model.eval()
cap = cv2.VideoCapture('videos/video1.mp4')
while True:
    ret, frame = cap.read()
    if not ret:
        break
    results = model(frame, device='cuda')
    cv2.imshow('YOLOv8', results[0].plot())
    if cv2.waitKey(1) & 0xFF == ord('q'):
        break
";

// Ex) model = YOLO("yolov8s.pt") ... results = model(frame)
#[test]
fn an_ultralytics_model_disables_autograd_itself() {
    assert!(lines_of(&run(YOLO_VIDEO), "EA401").is_empty());
    let hub = YOLO_VIDEO
        .replace("from ultralytics import YOLO\n", "import torch\n")
        .replace(
            "YOLO('models/yolov8s.pt')",
            "torch.hub.load('ultralytics/yolov5', 'yolov5s')",
        );
    assert!(lines_of(&run(&hub), "EA401").is_empty());
    // a network of the repository called the same way records the graph
    let own = YOLO_VIDEO.replace("from ultralytics import YOLO", "from nets import YOLO");
    assert_eq!(lines_of(&run(&own), "EA401"), vec![8]);
}

/// A notebook-style sandbox that draws one batch from a loader bound over its own dataset name.
const ONE_BATCH: &str = "import torch
from torch.utils.data import DataLoader
import dataset as ds
import transformer as tst

training_data = ds.TransformerDataset(data=torch.tensor(values).float(), indices=indices)
training_data = DataLoader(training_data, 32)
i, batch = next(enumerate(training_data))
src, trg, trg_y = batch
model = tst.TimeSeriesTransformer(dim_val=512, input_size=1)
output = model(src=src, tgt=trg)
";

// Ex) training_data = DataLoader(training_data, batch_size); i, batch = next(enumerate(training_data))
#[test]
fn a_loader_read_with_next_of_enumerate_gives_one_batch() {
    assert!(lines_of(&run(ONE_BATCH), "EA101").is_empty());
    // iterated, it loads every batch
    let looped = ONE_BATCH.replace(
        "i, batch = next(enumerate(training_data))\nsrc, trg, trg_y = batch\n",
        "for i, batch in enumerate(training_data):\n    src, trg, trg_y = batch\n",
    );
    assert_eq!(lines_of(&run(&looped), "EA101"), vec![7]);
}

/// The PyTorch style-transfer tutorial: a pretrained VGG's features placed at module level,
/// a normalisation module placed inside the function that assembles the model.
const STYLE_TUTORIAL: &str = "import torch
import torch.nn as nn
import torchvision.models as models

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
cnn = models.vgg16(pretrained=True).features.to(device).eval()


class Normalization(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


def build(cnn, mean, std):
    normalization = Normalization(mean, std).to(device)
    model = nn.Sequential(normalization)
    for layer in cnn.children():
        model.add_module('x', layer)
    return model


def run(cnn, img):
    model = build(cnn, 0.5, 0.2)
    model.requires_grad_(False)
    img.requires_grad_(True)
    optimizer = torch.optim.Adam([img])
    for step in range(300):
        optimizer.zero_grad()
        loss = model(img).sum()
        loss.backward()
        optimizer.step()


run(cnn, torch.rand(1, 3, 224, 224, device=device))
";

// Ex) cnn = models.vgg16(pretrained=True).features.to(device).eval()
#[test]
fn the_features_of_a_network_built_on_the_spot_are_a_model() {
    let report = run(STYLE_TUTORIAL);
    assert_eq!(lines_of(&report, "EA204"), vec![6]);
    assert_eq!(lines_of(&report, "EA203"), vec![6]);
}

/// A notebook fragment: module-level loaders, a training function called from an epoch loop
/// at module level, a test loader nothing reads.
const MODULE_EPOCHS: &str = "import torch
from torch_geometric.loader import DataLoader

optimizer = torch.optim.Adam(model.parameters(), lr=0.0007)
device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
model = model.to(device)
loader = DataLoader(data[:800], batch_size=64, shuffle=True)
test_loader = DataLoader(data[800:], batch_size=64, shuffle=True)


def train(data):
    for batch in loader:
        batch.to(device)
        optimizer.zero_grad()
        loss = model(batch.x.float(), batch.edge_index).sum()
        loss.backward()
        optimizer.step()
    return loss


for epoch in range(2000):
    loss = train(data)
";

// Ex) for epoch in range(2000): loss, h = train(data)   (and `test_loader` read nowhere)
#[test]
fn an_unread_loader_of_a_script_whose_module_level_epoch_loop_trains_is_not_reported() {
    assert_eq!(lines_of(&run(MODULE_EPOCHS), "EA101"), vec![7]);
}

/// Converts synthetic-dataset captures to YOLO labels: the files kept from a directory listing
/// by a comprehension.
const FILTERED_LISTING: &str = "import json
import os

root = '/data/'
dir_list = os.listdir(root + 'Dataset/')
captures_list = [name for name in dir_list if 'captures' in name]
for capture in captures_list:
    with open(root + 'Dataset/' + capture) as file:
        captures = json.load(file)
    for picture in captures['captures']:
        with open(root + 'RGB/' + picture['filename'][:-4] + '.txt', 'w') as out:
            for box in picture['annotations'][0]['values']:
                out.write('%d %f\\n' % (box['label_id'], box['x']))
";

// Ex) captures_list = [str for str in dir_list if any(...)]; for capture in captures_list:
#[test]
fn entries_kept_from_a_listing_by_a_comprehension_are_files() {
    assert_eq!(lines_of(&run(FILTERED_LISTING), "EA602"), vec![7]);
    // a comprehension over names that list nothing is no loop over files
    let names = FILTERED_LISTING.replace("os.listdir(root + 'Dataset/')", "['a', 'b']");
    assert!(lines_of(&run(&names), "EA602").is_empty());
}

/// A seq2seq training loop whose per-step printing sits behind a `VERBOSE` switch of another
/// module.
const VERBOSE_SWITCH: &str = "import torch
from model import *


def train():
    encoder_optim = torch.optim.SGD(encoder.parameters(), lr=0.01)
    for ei in range(10):
        for ii, (x, y) in enumerate(data):
            encoder.zero_grad()
            loss = encoder(x, y)
            loss.backward()
            encoder_optim.step()
            if VERBOSE:
                print('epoch = %d, iteration = %d, loss = %f' % (ei, ii + 1, loss))


if __name__ == '__main__':
    train()
";

// Ex) from model import *  ...  if VERBOSE: print(...)
#[test]
fn a_verbose_switch_of_another_module_is_off_as_shipped() {
    assert!(lines_of(&run(VERBOSE_SWITCH), "EA504").is_empty());
    // a switch the file sets on prints every step
    let on = VERBOSE_SWITCH.replace(
        "from model import *\n",
        "from model import *\n\nVERBOSE = True\n",
    );
    assert_eq!(lines_of(&run(&on), "EA504"), vec![16]);
    // any other unknown test is no switch the engine can read
    let other = VERBOSE_SWITCH.replace("if VERBOSE:", "if LOG_STEPS:");
    assert_eq!(lines_of(&run(&other), "EA504"), vec![14]);
}

/// Domain-adaptation fine-tuning: `load_model(str(args.model))` takes the branch of the
/// option's default; the branch for another checkpoint places a wrapped copy.
const STR_OPTION: &str = "import argparse
import torch
import torchvision

parser = argparse.ArgumentParser()
parser.add_argument('--model', type=str, default='resnet')
args = parser.parse_args()
DEVICE = torch.device('cuda')


def load_model(name='alexnet'):
    if name == 'resnet':
        model = torchvision.models.resnet50(pretrained=True)
    elif name == 'gheiros':
        model = torchvision.models.resnet50(pretrained=False)
        model = torch.nn.DataParallel(model, device_ids=[1]).cuda(DEVICE)
    return model


def get_optimizer(model_name):
    return torch.optim.SGD(model.parameters(), lr=0.01)


def finetune(model, loader, optimizer):
    for epoch in range(10):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.to(DEVICE)), y.to(DEVICE))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    model_name = str(args.model)
    model = load_model(model_name).to(DEVICE)
    optimizer = get_optimizer(model_name)
    finetune(model, loader, optimizer)
";

// Ex) model_name = str(args.model); model = load_model(model_name).to(DEVICE)
#[test]
fn str_of_a_string_option_is_the_option() {
    let report = run(STR_OPTION);
    assert_eq!(lines_of(&report, "EA203"), vec![35]);
    assert_eq!(lines_of(&report, "EA204"), vec![35]);
}

/// Resamples a folder of recordings with soundfile and librosa.
const AUDIO_FOLDER: &str = "import librosa
import soundfile as sf
import os
from tqdm import tqdm

in_path = 'data/wavs/'
out_path = 'data/wavs_16k/'

for file in tqdm(os.listdir(in_path)):
    audio, sr = sf.read(in_path + file)
    resampled = librosa.resample(audio, orig_sr=sr, target_sr=16000)
    sf.write(out_path + file, resampled, 16000)
";

// Ex) for file in os.listdir(in_path): audio, sr = sf.read(in_path + file)
#[test]
fn decoding_audio_files_is_data_processing() {
    assert_eq!(lines_of(&run(AUDIO_FOLDER), "EA602"), vec![9]);
}

/// Samples every third frame of each video of a folder into one array per video.
const VIDEO_FRAMES: &str = "import os
import cv2
import numpy as np
from numpy import save

videos = os.listdir('data/videos')
for video in videos:
    cap = cv2.VideoCapture(os.path.join('data/videos', video))
    count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    buf = np.empty((count, 224, 224, 3), np.dtype('uint8'))
    fc = 0
    ret = True
    while fc < count and ret:
        ret, img = cap.read()
        if ret:
            buf[fc] = cv2.resize(img, (224, 224))
        fc += 1
    save(os.path.join('data/arrays', video[:-4] + '.npy'), buf)
";

// Ex) from numpy import save ... for video in videos: ...; save(path, buf)
#[test]
fn an_output_function_imported_by_name_writes_a_result_per_file() {
    assert_eq!(lines_of(&run(VIDEO_FRAMES), "EA602"), vec![7]);
    // nothing kept per video: no result to parallelise
    let shown = VIDEO_FRAMES.replace(
        "    save(os.path.join('data/arrays', video[:-4] + '.npy'), buf)\n",
        "    print(video, fc)\n",
    );
    assert!(lines_of(&run(&shown), "EA602").is_empty());
}

/// A fine-tuning script whose data function returns a test loader the caller never reads.
const RETURNED_TEST_LOADER: &str = "import torch
from torchvision import datasets, models


def load_dataset(root):
    train_data = datasets.ImageFolder(root + '/train')
    test_data = datasets.ImageFolder(root + '/test')
    train_loader = torch.utils.data.DataLoader(train_data, batch_size=32, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
    test_loader = torch.utils.data.DataLoader(test_data, batch_size=32)
    return train_data.class_to_idx, train_loader, test_loader


device = torch.device('cuda')
class_to_idx, train_loader, test_loader = load_dataset('flowers')
model = models.densenet201(pretrained=True).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(5):
    for images, labels in train_loader:
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) class_to_idx, train_loader, valid_loader, test_loader = load_dataset(...)   # test_loader unread
#[test]
fn a_returned_loader_the_caller_never_reads_is_not_reported() {
    assert!(lines_of(&run(RETURNED_TEST_LOADER), "EA101").is_empty());
    // read by the caller, it loads every batch in the main process
    let read = RETURNED_TEST_LOADER.replace(
        "        optimizer.step()\n",
        "        optimizer.step()\n    for images, labels in test_loader:\n        print(model(images.to(device)).argmax(1))\n",
    );
    assert_eq!(lines_of(&run(&read), "EA101"), vec![9]);
}

/// A Lightning detection script whose accelerator is a value of its config module.
const LIGHTNING_CONFIG: &str = "import config
from model import get_fasterrcnn
from trainer import FasterRCNNTrainer
from dataset import TacoDataset
from torch.utils.data import DataLoader
from pytorch_lightning import Trainer

if __name__ == '__main__':
    train_data = TacoDataset(root=config.ROOT, transform=config.transform)
    train_dataloader = DataLoader(train_data, batch_size=config.BATCHSIZE, shuffle=True,
                                  num_workers=config.NUM_WORKERS)
    model = FasterRCNNTrainer(model=get_fasterrcnn(out_features=config.NUM_CLASSES))
    trainer = Trainer(accelerator=config.ACCELERATOR, max_epochs=config.NUM_EPOCHS)
    trainer.fit(model=model, train_dataloaders=train_dataloader)
";

// Ex) trainer = Trainer(accelerator=config.ACCELERATOR, ...)
#[test]
fn a_lightning_accelerator_from_a_config_module_is_the_gpu() {
    let report = run(LIGHTNING_CONFIG);
    assert_eq!(lines_of(&report, "EA102"), vec![10]);
    assert_eq!(lines_of(&report, "EA201"), vec![13]);
    // the CPU named in the file keeps it off the GPU
    let cpu = LIGHTNING_CONFIG.replace("accelerator=config.ACCELERATOR", "accelerator='cpu'");
    assert!(lines_of(&run(&cpu), "EA102").is_empty());
}

/// The Hugging Face course's Trainer tutorial: the arguments are built twice, the second
/// binding handed to the Trainer.
const TWO_TRAINING_ARGS: &str = "from transformers import AutoModelForSequenceClassification
from transformers import TrainingArguments, Trainer

model = AutoModelForSequenceClassification.from_pretrained('bert-base-cased', num_labels=5)
training_args = TrainingArguments(output_dir='test_trainer')
training_args = TrainingArguments(output_dir='test_trainer', evaluation_strategy='epoch')
trainer = Trainer(model=model, args=training_args, train_dataset=small_train_dataset)
trainer.train()
";

// Ex) training_args = TrainingArguments(...) twice, then Trainer(args=training_args)
#[test]
fn the_training_arguments_a_trainer_is_handed_anchor_the_framework_rules() {
    let report = run(TWO_TRAINING_ARGS);
    assert_eq!(lines_of(&report, "EA201"), vec![6]);
    assert_eq!(lines_of(&report, "EA203"), vec![6]);
    // handed the first binding (under another name), that one
    let first = TWO_TRAINING_ARGS
        .replace(
            "training_args = TrainingArguments(output_dir='test_trainer')",
            "args1 = TrainingArguments(output_dir='test_trainer')",
        )
        .replace("args=training_args", "args=args1");
    assert_eq!(lines_of(&run(&first), "EA201"), vec![5]);
}

/// Node classification over token features a helper builds on the device.
const TENSORS_ON_DEVICE: &str = "import torch
import torch.utils.data as Data
import utils

device = torch.device('cuda')
features, labels, idx_train = utils.load_data('cora')
processed = utils.get_token(features, 4, 3, 'cora', device)
labels = labels.to(device)
train_set = Data.TensorDataset(processed[idx_train], labels[idx_train])
train_loader = Data.DataLoader(train_set, batch_size=2000, shuffle=True)
model = utils.TransformerModel(hops=7, n_class=7).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(100):
    for x, y in train_loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) labels = labels.to(device) ... TensorDataset(processed_features[idx_train], labels[idx_train])
#[test]
fn a_tensor_dataset_of_tensors_bound_on_the_device_needs_no_pinning() {
    assert!(lines_of(&run(TENSORS_ON_DEVICE), "EA102").is_empty());
    // features left on the CPU are copied every batch
    let host = TENSORS_ON_DEVICE.replace(
        "processed = utils.get_token(features, 4, 3, 'cora', device)",
        "processed = utils.get_token(features, 4, 3, 'cora')",
    );
    assert_eq!(lines_of(&run(&host), "EA102"), vec![10]);
}

/// A notebook turned script: loaders in a dict, one batch shown, a model class that only
/// another file builds (its `super(Model, self)` names it from inside).
const UNBUILT_CLASS: &str = "import torch
import torchvision
from torch import nn, optim

dset = {x: torchvision.datasets.ImageFolder('/data/' + x) for x in ['train', 'test']}
dataloaders = {x: torch.utils.data.DataLoader(dset[x], batch_size=256, shuffle=True, num_workers=4)
               for x in ['train', 'test']}
inputs, classes = next(iter(dataloaders['train']))


def show(batch):
    print(batch.shape)


show(inputs)


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.model = torchvision.models.vgg16(pretrained=True)

    def fit(self, dataloaders, num_epochs):
        optimizer = optim.Adam(self.model.parameters())
        self.model = self.model.cuda()
        for epoch in range(num_epochs):
            for inputs, labels in dataloaders['train']:
                inputs, labels = inputs.cuda(), labels.cuda()
                optimizer.zero_grad()
                loss = nn.functional.cross_entropy(self.model(inputs), labels)
                loss.backward()
                optimizer.step()
                print(loss.item())
";

// Ex) class Model(nn.Module): def __init__(self): super(Model, self).__init__() ... (never built)
#[test]
fn a_class_named_only_inside_itself_is_never_built() {
    let report = run(UNBUILT_CLASS);
    for rule in ["EA201", "EA203", "EA204", "EA301", "EA102", "EA103"] {
        assert!(lines_of(&report, rule).is_empty(), "{rule}");
    }
    // built and trained by the script, it runs
    let built = format!("{UNBUILT_CLASS}\n\nModel().fit(dataloaders, 10)\n");
    assert_eq!(lines_of(&run(&built), "EA301"), vec![33]);
    assert_eq!(lines_of(&run(&built), "EA103"), vec![6]);
}

/// A training script that imports a vision transformer it builds only for `--model ViT`.
const VIT_OFF: &str = "import argparse
import torch
from models.vision_transformer import VisionTransformer
from models.resnet import ResNet


def build_model(args):
    if args.model == 'ResNet':
        model = ResNet()
    elif args.model == 'ViT':
        model = VisionTransformer(image_size=(32, 32))
    return model


def main(args):
    model = build_model(args)
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', default='ResNet', choices=['ResNet', 'ViT'])
    args = parser.parse_args()
    main(args)
";

// Ex) elif args.model == "ViT": model = VisionTransformer(...)   with default="ResNet"
#[test]
fn a_transformer_built_only_behind_an_option_that_is_off_shows_no_matmul_work() {
    assert!(lines_of(&run(VIT_OFF), "EA202").is_empty());
    // the default that builds it does
    let vit = VIT_OFF.replace("default='ResNet'", "default='ViT'");
    assert_eq!(lines_of(&run(&vit), "EA202"), vec![18]);
}

/// A super-resolution test script that fills an array with the grey images of a folder.
const DECODED_ROWS: &str = "import os
import numpy as np
from PIL import Image

test_files = os.listdir('cubic_test')
test_imgs = np.zeros((len(test_files), 128, 128))
for i in range(0, len(test_files)):
    test_imgs[i] = np.array(Image.open('cubic_test/' + test_files[i]).convert('L'))
np.save('test.npy', test_imgs)
";

// Ex) for i in range(n): test_imgs[i] = np.array(Image.open(path).convert('L'))
#[test]
fn rows_decoded_from_image_files_are_no_element_wise_arithmetic() {
    assert!(lines_of(&run(DECODED_ROWS), "EA603").is_empty());
    // through a loader of the file's
    let loader = DECODED_ROWS
        .replace("from PIL import Image\n", "from PIL import Image\n\n\ndef load_image_fn(p):\n    return np.array(Image.open(p).convert('L'))\n\n\n")
        .replace("np.array(Image.open('cubic_test/' + test_files[i]).convert('L'))", "load_image_fn('cubic_test/' + test_files[i])");
    assert!(lines_of(&run(&loader), "EA603").is_empty());
    // arithmetic on what is in memory is element-wise
    let arith = DECODED_ROWS.replace(
        "np.array(Image.open('cubic_test/' + test_files[i]).convert('L'))",
        "test_imgs[i - 1] * 0.5 + 1.0",
    );
    assert_eq!(lines_of(&run(&arith), "EA603"), vec![7]);
}

/// A bird-call classifier whose messages call it a transformer; the network it builds is an
/// imported one the file does not show.
const PRINTED_TRANSFORMER: &str = "import torch
from models import BirdAudioCNN


def train(loader, device):
    print(f'Fine-tuning AST Audio Transformer on device: {device}')
    model = BirdAudioCNN(num_classes=264).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(10):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    train(make_loader(), torch.device('cuda'))
";

// Ex) print(f"Fine-tuning AST Audio Transformer on device: {device}")
#[test]
fn a_model_named_only_in_a_printed_message_shows_no_matmul_work() {
    assert!(lines_of(&run(PRINTED_TRANSFORMER), "EA202").is_empty());
    // a transformer the file builds does
    let built = PRINTED_TRANSFORMER.replace("BirdAudioCNN", "AudioSpectrogramTransformer");
    assert_eq!(lines_of(&run(&built), "EA202"), vec![7]);
}

/// A driver that hands training to a helper, then shows one reconstructed test batch.
const PREVIEW_LOOP: &str = "import torch
from utils import utils as ksd
from core.autoencoders import ResAutoEncoderCIFAR10

if __name__ == '__main__':
    train_loader, test_loader = ksd.load_data_cifar_10(batch_size=64)
    net = ResAutoEncoderCIFAR10()
    net.eval()
    for X, y in test_loader:
        ksd.show_images(net(X.to('cuda')).to('cpu'), X)
        break
";

// Ex) for X, y in test_loader: show(net(X.to("cuda"))); break
#[test]
fn a_loop_that_always_breaks_after_one_batch_is_no_evaluation_loop() {
    assert!(lines_of(&run(PREVIEW_LOOP), "EA401").is_empty());
    // without the break it evaluates every batch with autograd on
    let every = PREVIEW_LOOP.replace("        break\n", "");
    assert_eq!(lines_of(&run(&every), "EA401"), vec![9]);
}

/// Old-style iterator reads of one batch: `dataiter.next()` and `iter(loader).next()`.
const OLD_NEXT: &str = "import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from model import VAE

train = DataLoader(datasets.MNIST('../data', train=True, transform=transforms.ToTensor()), batch_size=32, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
test = DataLoader(datasets.MNIST('../data', train=False, transform=transforms.ToTensor()), batch_size=32, shuffle=True)
vae = VAE().cuda()
optimizer = torch.optim.Adam(vae.parameters(), lr=1e-3)
for epoch in range(100):
    for x, _ in train:
        loss = vae(x.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    x, _ = iter(test).next()
    print(vae(x.cuda()).mean())
";

// Ex) x, _ = iter(mnist_test).next()   and   dataiter = iter(loader); img, label = dataiter.next()
#[test]
fn the_old_next_method_reads_one_batch() {
    assert!(lines_of(&run(OLD_NEXT), "EA101").is_empty());
    let named = OLD_NEXT.replace(
        "    x, _ = iter(test).next()\n",
        "    it = iter(test)\n    x, _ = it.next()\n",
    );
    assert!(lines_of(&run(&named), "EA101").is_empty());
    // iterated, it loads every batch
    let looped = OLD_NEXT.replace(
        "    x, _ = iter(test).next()\n    print(vae(x.cuda()).mean())\n",
        "    for x, _ in test:\n        print(vae(x.cuda()).mean())\n",
    );
    assert_eq!(lines_of(&run(&looped), "EA101"), vec![7]);
}

/// A discriminator script whose sorting pass runs only when `training is False`; the entry
/// point hands it `training = True`.
const IS_FALSE: &str = "import torch
from torch.utils.data import DataLoader


def train(args, training):
    disc = Discriminator().to('cuda')
    optimizer = torch.optim.Adam(disc.parameters(), lr=args.lr)
    loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
    if training is False:
        for i, (_, fake) in enumerate(loader):
            d_fake = disc(fake.to('cuda', non_blocking=True))
            if torch.mean(d_fake).item() > 0.05:
                save_images(fake, f'good/{i}.png')
    else:
        for epoch in range(args.epochs):
            for real, fake in loader:
                loss = disc(real.to('cuda', non_blocking=True)).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


if __name__ == '__main__':
    args = parse()
    training = True
    train(args, training)
";

// Ex) if training is False: ...  with  training = True; train(args, training)
#[test]
fn an_identity_test_against_a_boolean_reads_the_value_handed_in() {
    assert!(lines_of(&run(IS_FALSE), "EA301").is_empty());
    let sorting = IS_FALSE.replace("    training = True\n", "    training = False\n");
    assert_eq!(lines_of(&run(&sorting), "EA301"), vec![12]);
}
