//! Recognising models and training steps: model methods that run the model, modules built from
//! imported classes, optimizers fed through a parameter list, and parameter annotations;
//! checked on small snippets in the shapes real scripts use.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};
use efficiency_audit::analysis::FileAnalysis;

fn all(a: &FileAnalysis) -> Vec<(String, usize)> {
    a.findings
        .iter()
        .map(|f| (f.rule.clone(), f.line))
        .collect()
}

// Ex) prefix = clip_model.encode_image(image).cpu()  (image moved to the device per file)
#[test]
fn model_method_on_device_data_runs_the_model() {
    let src = "import torch
import clip
from PIL import Image
device = torch.device('cuda:0')
clip_model, preprocess = clip.load('ViT-B/32', device=device)
feats = []
for f in files:
    image = preprocess(Image.open(f)).unsqueeze(0).to(device)
    with torch.no_grad():
        prefix = clip_model.encode_image(image).cpu()
    feats.append(prefix)
torch.save(feats, 'out.pt')
";
    let a = run(src);
    assert_eq!(lines_of(&a, "EA502"), vec![8], "{:?}", all(&a));
    assert_eq!(lines_of(&a, "EA301"), vec![10], "{:?}", all(&a));
    assert!(lines_of(&a, "EA602").is_empty(), "{:?}", all(&a));
}

// Ex) model.load_state_dict(sd) per checkpoint: housekeeping, not a forward pass
#[test]
fn module_housekeeping_does_not_run_the_model() {
    let src = "import torch
from PIL import Image
device = torch.device('cuda')
model = Net().to(device)
for path in paths:
    img = Image.open(path)
    model.load_state_dict(torch.load(path, map_location=device))
";
    let a = run(src);
    assert!(lines_of(&a, "EA502").is_empty(), "{:?}", all(&a));
}

// Ex) with open(img_path, "rb") as f: img = Image.open(f)
#[test]
fn open_handle_fed_to_an_image_decoder_is_the_decode() {
    let src = "import torch
from PIL import Image
device = torch.device('cuda')
model.eval()
for img_path in paths:
    with open(img_path, 'rb') as f:
        img = Image.open(f)
        img = img.convert('RGB')
    out = model.get_last_selfattention(transform(img).to(device))
    results.append(out)
";
    let a = run(src);
    assert_eq!(lines_of(&a, "EA502"), vec![7], "{:?}", all(&a));
    assert!(lines_of(&a, "EA501").is_empty(), "{:?}", all(&a));
}

// Ex) for epoch in ...: train(epoch); test(epoch); sample = model.decode(sample).cpu()
#[test]
fn forward_once_per_epoch_beside_step_functions_is_not_a_step() {
    let src = "import torch
device = torch.device('cuda')
model = VAE().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
def train(epoch):
    model.train()
    for data, _ in train_loader:
        data = data.to(device)
        optimizer.zero_grad()
        loss = model(data).sum()
        loss.backward()
        optimizer.step()
for epoch in range(10):
    train(epoch)
    with torch.no_grad():
        sample = torch.randn(64, 20).to(device)
        sample = model.decode(sample).cpu()
    save_image(sample, 'sample.png')
";
    let a = run(src);
    assert!(!lines_of(&a, "EA301").contains(&17), "{:?}", all(&a));
}

// Ex) encoder = EncoderCNN(args.embed_size).to(device)  (class imported from a sibling module)
#[test]
fn imported_class_placed_on_the_device_is_a_model() {
    let src = "import torch
from model import EncoderCNN, DecoderRNN
device = torch.device('cuda')
encoder = EncoderCNN(256).to(device)
decoder = DecoderRNN(256, 512).to(device)
criterion = torch.nn.CrossEntropyLoss()
params = list(decoder.parameters()) + list(encoder.linear.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)
for epoch in range(5):
    for images, captions in data_loader:
        images = images.to(device)
        captions = captions.to(device)
        outputs = decoder(encoder(images), captions)
        loss = criterion(outputs, captions)
        decoder.zero_grad()
        loss.backward()
        optimizer.step()
";
    let a = run(src);
    assert_eq!(lines_of(&a, "EA203"), vec![4], "{:?}", all(&a));
    // (a CNN encoder and an RNN decoder run in TF32 through cuDNN already: no EA202)
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", all(&a));
}

// Ex) params = list(dec.parameters()) + list(enc.fc.parameters()); Adam(params)
#[test]
fn modules_whose_parameters_reach_an_optimizer_through_a_list_are_models() {
    let src = "import torch
from nets import build_parts
device = torch.device('cuda')
enc, dec = build_parts()
params = list(dec.parameters()) + list(enc.fc.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)
enc.eval()
for x in val_items:
    out = dec(enc(x.to(device)))
    results.append(out)
";
    let a = run(src);
    assert_eq!(lines_of(&a, "EA401"), vec![8], "{:?}", all(&a));
}

// Ex) def train_one_epoch(model: torch.nn.Module, ..., optimizer: torch.optim.Optimizer, ...):
//         loss_scaler(loss, optimizer, parameters=model.parameters())
#[test]
fn annotated_optimizer_handed_to_a_scaler_trains() {
    let src = "import torch
from typing import Iterable

def train_one_epoch(model: torch.nn.Module, criterion: torch.nn.Module,
                    data_loader: Iterable, optimizer: torch.optim.Optimizer,
                    device: torch.device, loss_scaler):
    model.train()
    for samples, targets in data_loader:
        samples = samples.to(device, non_blocking=True)
        with torch.cuda.amp.autocast():
            outputs = model(samples)
            loss = criterion(outputs, targets)
        optimizer.zero_grad()
        loss_scaler(loss, optimizer, parameters=model.parameters())

@torch.no_grad()
def evaluate(data_loader, model, device):
    model.eval()
    for images, target in data_loader:
        output = model(images.to(device))
";
    let a = run(src);
    assert!(lines_of(&a, "EA401").is_empty(), "{:?}", all(&a));
}

#[test]
fn loop_calling_a_function_that_runs_the_model_drives_the_model() {
    // `predict(image)` runs the model outside any loop of its own: the file loop around it is
    // an inference loop (decode there is EA502), not a serial batch of CPU work (EA602)
    let src = "\
import os
import torch
from PIL import Image
device = torch.device('cuda')
model = torch.load('model.pt')
model.eval().to(device)

def predict(image):
    x = transform(image).unsqueeze(0).to(device)
    return model(x).argmax(1)

preds = []
for name in os.listdir('data/test'):
    image = Image.open(os.path.join('data/test', name))
    preds.append(predict(image))
";
    let a = run(src);
    assert_eq!(lines_of(&a, "EA502"), vec![14]);
    assert_eq!(lines_of(&a, "EA602"), Vec::<usize>::new());
    // a helper with its own loop over the data is an evaluation pass, not one step
    let pass = src.replace(
        "    x = transform(image).unsqueeze(0).to(device)\n    return model(x).argmax(1)",
        "    for crop in crops(image):\n        out = model(crop.to(device))\n    return out",
    );
    let a = run(&pass);
    assert_eq!(lines_of(&a, "EA502"), Vec::<usize>::new());
}

#[test]
fn pretrained_weights_placed_on_the_device_are_a_model_and_pipelines_disable_autograd() {
    // `X.from_pretrained(...).to(device)` of any class: loaded weights placed on a device
    let src = "\
import os
import cv2
import torch
from depth_anything.dpt import DepthAnything
DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'
depth_anything = DepthAnything.from_pretrained('x').to(DEVICE)
depth_anything.eval()
for filename in os.listdir('imgs'):
    raw_image = cv2.imread(filename)
    image = torch.from_numpy(raw_image).unsqueeze(0).to(DEVICE)
    with torch.no_grad():
        depth = depth_anything(image)
    cv2.imwrite('out/' + filename, depth.cpu().numpy())
";
    let a = run(src);
    assert_eq!(lines_of(&a, "EA502"), vec![9], "{:?}", all(&a));
    assert_eq!(lines_of(&a, "EA602"), Vec::<usize>::new());
    // a diffusers pipeline runs its `__call__` under no_grad itself
    let pipe = "\
import torch
from diffusers import StableDiffusionPipeline
pipe = StableDiffusionPipeline.from_pretrained('sd', torch_dtype=torch.float16).to('cuda')
for i, prompt in enumerate(prompts):
    image = pipe(prompt).images[0]
    image.save(f'out/{i}.png')
";
    assert_eq!(lines_of(&run(pipe), "EA401"), Vec::<usize>::new());
}

#[test]
fn a_move_to_the_device_by_keyword_is_a_host_to_device_copy() {
    let src = "\
import torch
from torch.utils.data import DataLoader
device = torch.device('cuda')
model = UNet(3, 1).to(device)
optimizer = torch.optim.Adam(model.parameters())
loader = DataLoader(train_set, batch_size=8, num_workers=8, pin_memory=True)
for batch in loader:
    imgs = batch['image'].to(device=device, dtype=torch.float32)
    loss = model(imgs).mean()
    loss.backward()
    optimizer.step()
";
    assert_eq!(lines_of(&run(src), "EA303"), vec![8]);
    // a dtype conversion alone stays on the host
    let cast = src.replace(
        ".to(device=device, dtype=torch.float32)",
        ".to(dtype=torch.float32)",
    );
    assert_eq!(lines_of(&run(&cast), "EA303"), Vec::<usize>::new());
}
