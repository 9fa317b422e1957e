//! The eighth accuracy round: shapes from the blind wave g118–g123 that the engine read wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A Kaggle inference script run through `tyro.cli(main)`: `use_amp` and `use_tta` default to
/// False in `main`'s signature and reach `predict` through two calls.
const TYRO_MAIN: &str = "import torch
import tyro
from torch.utils.data import DataLoader

def predict(model, loader, device, use_amp=False, use_tta=False):
    preds = []
    for batch in loader:
        images = batch.to(device)
        if use_amp:
            with torch.no_grad(), torch.autocast('cuda'):
                pred = model(images)
            preds.append(pred.cpu().numpy())
        else:
            with torch.no_grad():
                pred = model(images)
            preds.append(pred.cpu().numpy())
        if use_tta:
            with torch.no_grad():
                flipped = model(torch.flip(images, dims=[3]))
            preds.append(flipped.cpu().numpy())
    return preds

def predict_fold(model, loader, device, use_amp, use_tta):
    return predict(model, loader, device, use_amp=use_amp, use_tta=use_tta)

def main(device: str = 'cuda', use_amp: bool = False, use_tta: bool = False):
    model = torch.load('model.pt').eval().to(device)
    loader = DataLoader(torch.load('test.pt'), batch_size=32, num_workers=4, pin_memory=True)
    predict_fold(model, loader, device, use_amp, use_tta)

if __name__ == '__main__':
    tyro.cli(main)
";

// Ex) def main(use_tta: bool = False): ...  tyro.cli(main): the TTA branch does not run
#[test]
fn a_signature_cli_runs_its_function_with_the_defaults() {
    let a = run(TYRO_MAIN);
    // only the `else` branch's read runs as shipped
    assert_eq!(lines_of(&a, "EA301"), vec![16], "{:?}", a.findings);
    // the same through `from fire import Fire; Fire(main)`
    let fire = TYRO_MAIN
        .replace("import tyro\n", "from fire import Fire\n")
        .replace("tyro.cli(main)", "Fire(main)");
    assert_eq!(lines_of(&run(&fire), "EA301"), vec![16]);
    // a function nothing hands to such a runner keeps its parameters unknown: every branch
    // may run
    let plain = TYRO_MAIN.replace("    tyro.cli(main)", "    run_somehow(main)");
    assert_eq!(lines_of(&run(&plain), "EA301"), vec![12, 16, 20]);
}

/// A pix2pix-style script: a sample loader, bound in both branches of an `if`, is only read by
/// a helper that draws one batch of it for a picture.
const SAMPLE_LOADER: &str = "import torch
from torch.utils.data import DataLoader
from data import PairDataset
from nets import Generator

DEVICE = 'cuda'

def save_samples(gen, loader, epoch):
    gen.eval()
    data = next(iter(loader))
    with torch.no_grad():
        fake = gen(data['a'].to(DEVICE))
    torch.save(fake, f'sample_{epoch}.pt')

def main():
    train_ds = PairDataset('train')
    val_ds = PairDataset('val')
    if len(val_ds) == 0:
        sample_loader = DataLoader(train_ds, batch_size=1, shuffle=True)
    else:
        sample_loader = DataLoader(val_ds, batch_size=1, shuffle=True)
    train_loader = DataLoader(train_ds, batch_size=16, shuffle=True, num_workers=2, pin_memory=True, persistent_workers=True)
    gen = Generator().to(DEVICE)
    opt = torch.optim.Adam(gen.parameters())
    for epoch in range(10):
        for batch in train_loader:
            loss = gen(batch['a'].to(DEVICE, non_blocking=True)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        save_samples(gen, sample_loader, epoch)

main()
";

// Ex) save_samples(gen, sample_loader, epoch) with def save_samples(gen, loader, epoch): next(iter(loader))
#[test]
fn a_loader_a_helper_reads_once_gets_no_worker_or_pinning_finding() {
    let a = run(SAMPLE_LOADER);
    assert_eq!(
        lines_of(&a, "EA101"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    assert_eq!(
        lines_of(&a, "EA102"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // a helper that loops over its loader runs it in full: both loaders are flagged again
    let looped = SAMPLE_LOADER.replace(
        "    data = next(iter(loader))\n",
        "    for data in loader:\n        pass\n",
    );
    // (the replacement adds a line above them)
    assert_eq!(lines_of(&run(&looped), "EA101"), vec![20, 22]);
}

/// A DDPM script: the test loader is built under the `__main__` guard and never read.
const UNREAD_MAIN_LOADER: &str = "import torch
from torch.utils.data import DataLoader
from data import get_data
from nets import UNet

def train(loader, epochs=100):
    model = UNet().cuda()
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        for images, _ in loader:
            loss = model(images.cuda()).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()

if __name__ == '__main__':
    training_data, test_data = get_data()
    train_dataloader = DataLoader(training_data, batch_size=64, shuffle=True)
    test_dataloader = DataLoader(test_data, batch_size=64, shuffle=True)
    train(train_dataloader)
";

// Ex) if __name__ == "__main__": test_dataloader = DataLoader(...)  # never read
#[test]
fn a_loader_nothing_reads_under_the_main_guard_costs_nothing() {
    let a = run(UNREAD_MAIN_LOADER);
    assert_eq!(lines_of(&a, "EA101"), vec![18], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA102"), vec![18], "{:?}", a.findings);
    // at module level without the guard, and without the module-level call of its own
    // `train` (which makes the file a script, twenty-seventh session), another module may
    // import it: still flagged
    let importable = UNREAD_MAIN_LOADER
        .replace("if __name__ == '__main__':\n", "if True:\n")
        .replace("    train(train_dataloader)\n", "");
    assert_eq!(lines_of(&run(&importable), "EA101"), vec![18, 19]);
    // with that call the file is a script: its unread loader is nobody's
    let script = UNREAD_MAIN_LOADER.replace("if __name__ == '__main__':\n", "if True:\n");
    assert_eq!(lines_of(&run(&script), "EA101"), vec![18]);
}

/// A GAN over skins loaded into a Python list before training.
const LIST_DATASET: &str = "import torch
from torch.utils.data import DataLoader
from nets import Generator

def load_skin(path):
    return torch.load(path)

paths = [f'skins/{i}.pt' for i in range(1000)]
train_dataset = []
for p in paths:
    train_dataset.append(load_skin(p))
train_dataloader = DataLoader(train_dataset, batch_size=32, shuffle=True)

generator = Generator().cuda()
opt = torch.optim.Adam(generator.parameters())
for epoch in range(100):
    for real in train_dataloader:
        loss = generator(real.cuda()).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
";

// Ex) train_dataset = []; train_dataset.append(...); DataLoader(train_dataset, batch_size=32)
#[test]
fn a_loader_over_an_in_memory_list_needs_no_workers() {
    let a = run(LIST_DATASET);
    assert_eq!(
        lines_of(&a, "EA101"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // pinning still speeds up its copies
    assert_eq!(lines_of(&a, "EA102"), vec![12], "{:?}", a.findings);
    // a custom collate may do real work per batch
    let collated = LIST_DATASET.replace("shuffle=True)", "shuffle=True, collate_fn=augment)");
    assert_eq!(lines_of(&run(&collated), "EA101"), vec![12]);
}

/// The torchaudio speech-command tutorial's switch: `device` is a `torch.device`, which never
/// equals a string, so the `else` branch (no workers) runs even on a GPU.
const DEVICE_EQ_STRING: &str = "import torch
import torch.nn.functional as F
from data import SubsetSC, collate_fn
from nets import M5

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
if device == 'cuda':
    num_workers = 1
    pin_memory = True
else:
    num_workers = 0
    pin_memory = False

train_loader = torch.utils.data.DataLoader(SubsetSC('training'), batch_size=256, shuffle=True,
    collate_fn=collate_fn, num_workers=num_workers, pin_memory=pin_memory)

model = M5().to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(2):
    for data, target in train_loader:
        output = model(data.to(device))
        loss = F.nll_loss(output.squeeze(), target.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) device = torch.device(...); if device == "cuda": num_workers = 1 else: num_workers = 0
#[test]
fn a_torch_device_never_equals_a_string() {
    let a = run(DEVICE_EQ_STRING);
    assert_eq!(lines_of(&a, "EA101"), vec![14], "{:?}", a.findings);
    // `!=` is true: the first branch runs
    let ne = DEVICE_EQ_STRING.replace("if device == 'cuda':", "if device != 'cuda':");
    assert_eq!(lines_of(&run(&ne), "EA101"), Vec::<usize>::new());
    // a device kept as a string compares as written: unknown here (it depends on the machine)
    let string = DEVICE_EQ_STRING.replace(
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'",
    );
    assert_eq!(lines_of(&run(&string), "EA101"), Vec::<usize>::new());
}

/// An MMLU evaluation over a question table: each row runs the language model once.
const MODEL_PER_ROW: &str = "import pandas as pd
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained('Qwen/Qwen-7B')
model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen-7B', device_map='auto', torch_dtype=torch.bfloat16).eval()

def get_logits(prompt):
    inputs = tokenizer(prompt, return_tensors='pt').to(model.device)
    with torch.no_grad():
        return model(**inputs).logits[:, -1]

test_df = pd.read_csv('test.csv')
answers = []
for _, row in test_df.iterrows():
    prompt = row['question'] + ' Answer:'
    with torch.no_grad():
        logits = model(**tokenizer(prompt, return_tensors='pt').to(model.device)).logits
    answers.append(int(logits[0, -1].argmax()))
test_df['pred'] = answers
";

// Ex) for _, row in df.iterrows(): logits = model(**tokenizer(row["question"], ...))
#[test]
fn a_row_loop_that_runs_a_model_per_row_is_not_a_pandas_finding() {
    let a = run(MODEL_PER_ROW);
    assert_eq!(
        lines_of(&a, "EA601"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // the same loop building a feature per row is row-by-row pandas
    let features = MODEL_PER_ROW.replace(
        "    with torch.no_grad():\n        logits = model(**tokenizer(prompt, return_tensors='pt').to(model.device)).logits\n    answers.append(int(logits[0, -1].argmax()))\n",
        "    answers.append(len(prompt))\n",
    );
    assert_eq!(lines_of(&run(&features), "EA601"), vec![15]);
}

/// pyGAT: a full-batch graph network whose `train()` is one optimizer step, called once per
/// iteration of the loop, and reads four metrics with `.item()`; and an accuracy helper
/// called in an evaluation loop.
const HELPER_SYNCS: &str = "import torch
import torch.nn.functional as F
from models import GAT
from utils import load_data

adj, features, labels, idx_train = load_data()
model = GAT(nfeat=features.shape[1], nhid=8, nclass=7).cuda()
features, adj, labels = features.cuda(), adj.cuda(), labels.cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=0.005)

def number_of_correct(pred, target):
    return pred.argmax(1).eq(target).sum().item()

def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    loss_train = F.nll_loss(output[idx_train], labels[idx_train])
    loss_train.backward()
    optimizer.step()
    print('Epoch: {:04d}'.format(epoch + 1), 'loss_train: {:.4f}'.format(loss_train.item()))
    return number_of_correct(output, labels)

for epoch in range(1000):
    train(epoch)
";

// Ex) def train(epoch): ...; print(loss_train.item())   for epoch in range(1000): train(epoch)
#[test]
fn an_item_in_a_helper_every_step_calls_is_a_host_sync() {
    let a = run(HELPER_SYNCS);
    assert_eq!(lines_of(&a, "EA301"), vec![12, 21], "{:?}", a.findings);
    // called only every 100 iterations: rare
    let rare = HELPER_SYNCS.replace(
        "    train(epoch)\n",
        "    if epoch % 100 == 0:\n        train(epoch)\n",
    );
    assert_eq!(lines_of(&run(&rare), "EA301"), Vec::<usize>::new());
    // a `.cpu()` a helper hands back is its product, not a read that could wait
    let product = HELPER_SYNCS.replace(".sum().item()", ".cpu()");
    assert_eq!(lines_of(&run(&product), "EA301"), vec![21]);
}

/// A U-Net training loop that sets its logging interval to 1 inside the loop.
const LOG_INTERVAL_IN_LOOP: &str = "import torch
from unet import UNet

model = UNet(2).cuda()
optimizer = torch.optim.Adam(model.parameters())

def train(loader, epoch):
    for step, sample in enumerate(loader):
        x = sample['image'].cuda()
        loss = model(x).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log_interval = 1
        if step % log_interval == 0:
            print('Train Epoch: {} Loss: {:.6f}'.format(epoch, loss.item()))

for epoch in range(10):
    train(loader, epoch)
";

// Ex) for step, x in enumerate(loader): ...; log_interval = 1; if step % log_interval == 0: print(loss.item())
#[test]
fn a_literal_bound_inside_the_loop_is_read() {
    let a = run(LOG_INTERVAL_IN_LOOP);
    assert_eq!(lines_of(&a, "EA301"), vec![16], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA504"), vec![16], "{:?}", a.findings);
    // every 50 steps: guarded
    let every_50 = LOG_INTERVAL_IN_LOOP.replace("log_interval = 1", "log_interval = 50");
    assert_eq!(lines_of(&run(&every_50), "EA301"), Vec::<usize>::new());
    // a value computed from the loop is not a constant
    let computed =
        LOG_INTERVAL_IN_LOOP.replace("log_interval = 1", "log_interval = step // 10 + 1");
    assert_eq!(lines_of(&run(&computed), "EA301"), Vec::<usize>::new());
}

/// A YOLO v1 trained from scratch: the network comes from the repository's own module.
const YOLO_V1: &str = "import torch
from yolo_v1 import Yolo_V1
from loss import YoloLoss

model = Yolo_V1(split_size=7, num_boxes=2, num_classes=20).to('cuda')
optimizer = torch.optim.Adam(model.parameters())
loss_fn = YoloLoss()
for epoch in range(100):
    for x, y in train_loader:
        with torch.autocast('cuda', dtype=torch.bfloat16):
            loss = loss_fn(model(x.to('cuda')), y.to('cuda'))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = Yolo_V1(...).to("cuda"): a convolutional detector
#[test]
fn a_yolo_detector_is_a_convolutional_network() {
    let a = run(YOLO_V1);
    assert_eq!(lines_of(&a, "EA204"), vec![5], "{:?}", a.findings);
    // YOLOS is a vision transformer
    let yolos = YOLO_V1
        .replace(
            "from yolo_v1 import Yolo_V1",
            "from yolos import YolosDetector",
        )
        .replace(
            "Yolo_V1(split_size=7, num_boxes=2, num_classes=20)",
            "YolosDetector()",
        );
    assert_eq!(lines_of(&run(&yolos), "EA204"), Vec::<usize>::new());
}

/// pycococreator's example: a walk over image folders, a loop over each folder's images, and
/// inside it a walk over the annotation folders and a loop over each image's masks.
const NESTED_FILE_LOOPS: &str = "import os
import json
import numpy as np
from PIL import Image
import pycococreatortools

def filter_for_jpeg(root, files):
    return [os.path.join(root, f) for f in files if f.endswith('.jpg')]

def filter_for_annotations(root, files, image_filename):
    base = os.path.splitext(os.path.basename(image_filename))[0]
    return [os.path.join(root, f) for f in files if f.startswith(base)]

coco_output = {'images': [], 'annotations': []}
image_id = 1
for root, _, files in os.walk('train/images'):
    image_files = filter_for_jpeg(root, files)
    for image_filename in image_files:
        image = Image.open(image_filename)
        coco_output['images'].append(pycococreatortools.create_image_info(image_id, image_filename, image.size))
        for root2, _, files2 in os.walk('train/annotations'):
            annotation_files = filter_for_annotations(root2, files2, image_filename)
            for annotation_filename in annotation_files:
                binary_mask = np.asarray(Image.open(annotation_filename).convert('1')).astype(np.uint8)
                coco_output['annotations'].append(pycococreatortools.create_annotation_info(image_id, binary_mask))
        image_id += 1

with open('instances.json', 'w') as f:
    json.dump(coco_output, f)
";

// Ex) for root, _, files in os.walk(d): for image_filename in filter_for_jpeg(root, files): ...
#[test]
fn a_nest_of_file_loops_gets_one_finding_on_the_loop_over_files() {
    let a = run(NESTED_FILE_LOOPS);
    assert_eq!(lines_of(&a, "EA602"), vec![18], "{:?}", a.findings);
}

/// WGAN-GP: noise drawn on the CPU every critic step and moved with `.cuda(gpu)`; a sample
/// helper does the same, but runs every 100 iterations only.
const NOISE_TO_GPU: &str = "import torch
from models import Generator, Discriminator

use_cuda = torch.cuda.is_available()
gpu = 0
netG = Generator()
netD = Discriminator()
if use_cuda:
    netD = netD.cuda(gpu)
    netG = netG.cuda(gpu)
optimizerG = torch.optim.Adam(netG.parameters())

def generate_image(frame, netG):
    fixed_noise = torch.randn(128, 128)
    if use_cuda:
        fixed_noise = fixed_noise.cuda(gpu)
    torch.save(netG(fixed_noise), f'samples_{frame}.pt')

for iteration in range(200000):
    netG.zero_grad()
    noise = torch.randn(64, 128)
    if use_cuda:
        noise = noise.cuda(gpu)
    G = netD(netG(noise)).mean()
    G.backward()
    optimizerG.step()
    if iteration % 100 == 99:
        generate_image(iteration, netG)
";

// Ex) noise = torch.randn(64, 128); if use_cuda: noise = noise.cuda(gpu)
#[test]
fn a_move_to_a_device_ordinal_is_a_move_and_rare_helpers_are_not_per_step() {
    let a = run(NOISE_TO_GPU);
    assert_eq!(lines_of(&a, "EA304"), vec![21], "{:?}", a.findings);
    // the helper called every step: its noise is per step too
    let every_step = NOISE_TO_GPU.replace(
        "    if iteration % 100 == 99:\n        generate_image(iteration, netG)\n",
        "    generate_image(iteration, netG)\n",
    );
    assert_eq!(lines_of(&run(&every_step), "EA304"), vec![14, 21]);
}

/// A validation loop that copies the logits to the host first, then computes the loss there.
const LOSS_ON_HOST: &str = "import torch
from torch.utils.data import DataLoader
from conv_net import CNN

DEVICE = 'cuda'
model = CNN().to(DEVICE)
loss_func = torch.nn.CrossEntropyLoss()
val_loader = DataLoader(val_set, batch_size=64, num_workers=4, pin_memory=True)
model.eval()
val_loss_total = 0
with torch.inference_mode():
    for x_val, y_val in val_loader:
        logits = model(x_val.to(DEVICE)).cpu()
        val_loss_total += loss_func(logits, y_val).item()
";

// Ex) logits = model(x.to(DEVICE)).cpu(); total += loss_func(logits, y).item()
#[test]
fn a_loss_computed_from_host_values_reads_no_gpu() {
    let a = run(LOSS_ON_HOST);
    assert_eq!(lines_of(&a, "EA301"), vec![13], "{:?}", a.findings);
    // the labels moved to the GPU make it a device computation again
    let on_gpu = LOSS_ON_HOST.replace(
        "        logits = model(x_val.to(DEVICE)).cpu()\n",
        "        logits = model(x_val.to(DEVICE))\n        y_val = y_val.to(DEVICE)\n",
    );
    assert_eq!(lines_of(&run(&on_gpu), "EA301"), vec![15]);
}

/// GIN (powerful-gnns): a graph network named `GraphCNN`, trained on labels gathered from a
/// list of graph objects every step.
const GRAPH_CNN: &str = "import numpy as np
import torch
import torch.nn.functional as F
from models.graphcnn import GraphCNN

device = torch.device('cuda')
model = GraphCNN(5, 2, 64, 64, 2, 0.5, False, 'sum', 'sum', device).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(350):
    for pos in range(50):
        selected_idx = np.random.permutation(len(train_graphs))[:32]
        batch_graph = [train_graphs[idx] for idx in selected_idx]
        output = model(batch_graph)
        labels = torch.LongTensor([graph.label for graph in batch_graph]).to(device)
        loss = F.cross_entropy(output, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = GraphCNN(...).to(device); labels = torch.LongTensor([g.label for g in batch_graph]).to(device)
#[test]
fn a_graph_cnn_is_no_conv_net_and_gathered_labels_are_host_data() {
    let a = run(GRAPH_CNN);
    assert_eq!(
        lines_of(&a, "EA204"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    assert_eq!(
        lines_of(&a, "EA304"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // a plain CNN is one; a constant built every step is waste
    let cnn = GRAPH_CNN
        .replace(
            "from models.graphcnn import GraphCNN",
            "from models.cnn import SimpleCNN",
        )
        .replace(
            "GraphCNN(5, 2, 64, 64, 2, 0.5, False, 'sum', 'sum', device)",
            "SimpleCNN()",
        )
        .replace("[graph.label for graph in batch_graph]", "[0] * 32");
    let a = run(&cnn);
    assert_eq!(lines_of(&a, "EA204"), vec![7], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA304"), vec![14], "{:?}", a.findings);
}

/// YOLOv4's loss: target buffers built on the CPU every step and moved by `.type(dtype)` with
/// `dtype` a CUDA tensor type; DDPM sampling that scales a CPU tensor in parentheses.
const MOVED_BY_TYPE: &str = "import torch
import torch.nn as nn

class YoloLoss(nn.Module):
    def forward(self, xin, labels):
        loss = 0
        for output in xin:
            dtype = torch.cuda.FloatTensor if output.is_cuda else torch.FloatTensor
            tgt_mask = torch.zeros(output.shape[0], 3, 4).type(dtype)
            loss = loss + (output.sum() * tgt_mask.sum())
        return loss

def sample(model, n, steps, device):
    x = torch.randn((n, 1, 32, 32), device=device)
    for i in reversed(range(1, steps)):
        t = (torch.ones(n) * i).long().to(device)
        x = model(x, t)
    return x
";

// Ex) torch.zeros(...).type(dtype) with dtype = torch.cuda.FloatTensor ...; (torch.ones(n) * i).long().to(device)
#[test]
fn a_move_by_cuda_tensor_type_or_of_a_scaled_constructor_is_a_move() {
    let a = run(MOVED_BY_TYPE);
    assert_eq!(lines_of(&a, "EA304"), vec![9, 16], "{:?}", a.findings);
    // a CPU tensor type converts dtypes only
    let cpu = MOVED_BY_TYPE.replace(
        "torch.cuda.FloatTensor if output.is_cuda else torch.FloatTensor",
        "torch.FloatTensor",
    );
    assert_eq!(lines_of(&run(&cpu), "EA304"), vec![16]);
}

/// A WGAN-GP whose generator samples a batch with a method named `generate`.
const GAN_GENERATE: &str = "import torch
from wgan import SimpleGenerator, SimpleDiscriminator

device = torch.device('cuda')
generator = SimpleGenerator(100).to(device)
discriminator = SimpleDiscriminator().to(device)
opt_d = torch.optim.Adam(discriminator.parameters())
losses = []
for iteration in range(100000):
    for gt, _ in train_dataloader:
        opt_d.zero_grad()
        fake = generator.generate(gt.shape[0], device)
        scores = discriminator(torch.cat((gt.to(device), fake)))
        loss = scores.mean()
        losses.append(loss.item())
        loss.backward()
        opt_d.step()
";

// Ex) fake = generator.generate(gt.shape[0], device): a GAN sample, not token decoding
#[test]
fn a_gan_generate_decodes_no_tokens() {
    let a = run(GAN_GENERATE);
    assert_eq!(lines_of(&a, "EA301"), vec![15], "{:?}", a.findings);
    // a language model's generate reads tokens back every step already
    let llm = GAN_GENERATE.replace(
        "generator.generate(gt.shape[0], device)",
        "generator.generate(input_ids, max_new_tokens=32)",
    );
    assert_eq!(lines_of(&run(&llm), "EA301"), Vec::<usize>::new());
}

/// deepspeech.pytorch: `--cuda` is a `store_true` switch whose `dest` is the string "cuda".
const CUDA_SWITCH_DEST: &str = "import argparse
import torch
from model import DeepSpeech

parser = argparse.ArgumentParser()
parser.add_argument('--cuda', dest='cuda', action='store_true', help='Use cuda to train model')
args = parser.parse_args()
model = DeepSpeech()
if args.cuda:
    model = torch.nn.DataParallel(model).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=3e-4)
for epoch in range(70):
    for i, (inputs, targets) in enumerate(train_loader):
        if args.cuda:
            inputs = inputs.cuda()
        loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print('loss', loss.item())
";

// Ex) parser.add_argument('--cuda', dest='cuda', action='store_true'): off as shipped
#[test]
fn an_option_named_cuda_places_nothing_on_the_gpu() {
    let a = run(CUDA_SWITCH_DEST);
    assert_eq!(
        lines_of(&a, "EA201"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    assert_eq!(
        lines_of(&a, "EA301"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // on by default, the same script trains on the GPU
    let on = CUDA_SWITCH_DEST.replace("action='store_true'", "default=True");
    assert_eq!(lines_of(&run(&on), "EA201"), vec![13]);
}

/// FloWaveNet's synthesis: only the first batch of the loader is copied and used.
const FIRST_BATCH_ONLY: &str = "import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
model = build_model().to(device)
synth_loader = DataLoader(test_dataset, batch_size=1, num_workers=2, pin_memory=True, persistent_workers=True)

def synthesize(model):
    model.eval()
    for batch_idx, (x, c) in enumerate(synth_loader):
        if batch_idx == 0:
            x, c = x.to(device), c.to(device)
            with torch.no_grad():
                y = model.reverse(x, c)
            torch.save(y, 'sample.pt')

for epoch in range(100):
    synthesize(model)
";

// Ex) for i, (x, c) in enumerate(loader): if i == 0: x = x.to(device)
#[test]
fn a_copy_that_runs_once_is_not_a_blocking_copy_per_step() {
    let a = run(FIRST_BATCH_ONLY);
    assert_eq!(
        lines_of(&a, "EA303"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    let every = FIRST_BATCH_ONLY.replace("        if batch_idx == 0:\n", "        if True:\n");
    assert_eq!(lines_of(&run(&every), "EA303"), vec![12]);
}

/// PlaNet's data collection: an environment stepped through a helper every iteration.
const ENV_THROUGH_HELPER: &str = "import torch
from env import Env
from planner import act

device = torch.device('cuda')
policy = Policy().to(device)
optimizer = torch.optim.Adam(policy.parameters())
env = Env('Pendulum-v0')
for episode in range(1000):
    observation, total_reward = env.reset(), 0
    with torch.no_grad():
        for t in range(1000):
            action, next_observation, reward, done = act(env, policy, observation.to(device))
            buffer.append(observation, action.cpu(), reward, done)
            observation = next_observation
            if done.sum().item() == 1:
                break
    loss = policy.loss(buffer.sample(64))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) action, obs, r, done = act(env, policy, obs.to(device)); buffer.append(obs, action.cpu(), ...)
#[test]
fn reads_in_a_loop_that_steps_an_environment_are_its_product() {
    let a = run(ENV_THROUGH_HELPER);
    assert_eq!(
        lines_of(&a, "EA301"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // without the environment the same reads are syncs
    let no_env = ENV_THROUGH_HELPER.replace("act(env, policy,", "act(policy,");
    assert_eq!(lines_of(&run(&no_env), "EA301"), vec![14, 16]);
}

/// YOLOv7's `test.py`: `save_txt` reaches `test()` as the union of two `store_true` switches.
const SWITCHES_COMBINED: &str = "import argparse
import torch

def test(model, dataloader, save_txt=False):
    for img, targets, paths in dataloader:
        out = model(img.to('cuda', non_blocking=True))
        if save_txt:
            with open(paths[0] + '.txt', 'a') as f:
                f.write(str(out.shape))

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--save-txt', action='store_true')
    parser.add_argument('--save-hybrid', action='store_true')
    opt = parser.parse_args()
    model = torch.load('best.pt').cuda().eval()
    with torch.no_grad():
        test(model, loader, save_txt=opt.save_txt | opt.save_hybrid)
";

// Ex) test(..., save_txt=opt.save_txt | opt.save_hybrid) with both switches off by default
#[test]
fn two_switches_combined_are_read() {
    let a = run(SWITCHES_COMBINED);
    assert_eq!(
        lines_of(&a, "EA501"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    let on = SWITCHES_COMBINED.replace(
        "parser.add_argument('--save-hybrid', action='store_true')",
        "parser.add_argument('--save-hybrid', default=True)",
    );
    assert_eq!(lines_of(&run(&on), "EA501"), vec![8]);
}

/// A U-Net placed in a conditional expression on the device string.
const CONDITIONAL_PLACEMENT: &str = "import torch
from unet import UNet

device = 'cuda' if torch.cuda.is_available() else 'cpu'
model = UNet(2).cuda() if device == 'cuda' else UNet(2)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for x, y in train_loader:
        with torch.autocast('cuda', dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = UNet(2).cuda() if device == "cuda" else UNet(2)
#[test]
fn a_placement_in_a_conditional_expression_anchors_the_file_findings() {
    let a = run(CONDITIONAL_PLACEMENT);
    assert_eq!(lines_of(&a, "EA203"), vec![5], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA204"), vec![5], "{:?}", a.findings);
}

/// Data preparation: MFCCs of every file librosa finds; comments cleaned row by row; a GPTQ
/// pass that runs each layer on every calibration sample.
const DATA_PREP_SHAPES: &str = "import re
import numpy as np
import pandas as pd
import torch
from librosa.core import load
from librosa.util import find_files
from librosa.feature import mfcc

audio_list = find_files('audio/')
for audiofile in audio_list:
    y, sr = load(audiofile, sr=22050)
    np.save(audiofile + '.npy', mfcc(y=y, sr=sr))

data_df = pd.read_csv('comments.csv')
for each in range(0, len(data_df)):
    data_df['body'][each] = re.sub(r'https?:\\S*', '', str(data_df['body'][each]))

def quantize(layers, inps, dev, nsamples):
    outs = torch.zeros_like(inps)
    for i in range(len(layers)):
        layer = layers[i].to(dev)
        for j in range(nsamples):
            outs[j] = layer(inps[j].unsqueeze(0))[0]
        layers[i] = layer.cpu()
    return outs
";

// Ex) for f in find_files(d); for each in range(0, len(df)): df["body"][each]; outs[j] = layer(inps[j])
#[test]
fn listing_helpers_row_numbers_and_layers_called_by_variable() {
    let a = run(DATA_PREP_SHAPES);
    assert_eq!(lines_of(&a, "EA602"), vec![10], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA601"), vec![15], "{:?}", a.findings);
    assert_eq!(
        lines_of(&a, "EA603"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // `range(df.shape[0])` numbers the rows too
    let shape = DATA_PREP_SHAPES.replace("range(0, len(data_df))", "range(data_df.shape[0])");
    assert_eq!(lines_of(&run(&shape), "EA601"), vec![15]);
}

/// A MONAI-style 3D U-Net trained subject by subject: each subject's volume is cut into patches
/// and served by a loader built for it.
const PER_SUBJECT_LOADER: &str = "import torch
import torch.utils.data as td
from torch.utils.data import DataLoader
from unet3d import UNet3D

DEVICE = 'cuda'
model = UNet3D().to(DEVICE)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(100):
    for data in subject_loader:
        image = data['image'].squeeze(0).numpy()
        patched_image, patched_mask = patch_and_flatten(image, data['mask'].numpy())
        subvoxels = td.TensorDataset(patched_image, patched_mask)
        subvoxel_loader = DataLoader(subvoxels, batch_size=8)
        for x, y in subvoxel_loader:
            with torch.autocast('cuda', dtype=torch.bfloat16):
                loss = loss_fn(model(x.to(DEVICE)), y.to(DEVICE))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
";

// Ex) for data in subject_loader: ds = TensorDataset(patch(data)); loader = DataLoader(ds, ...)
#[test]
fn a_loader_over_each_items_data_is_not_loop_invariant() {
    let a = run(PER_SUBJECT_LOADER);
    assert_eq!(
        lines_of(&a, "EA701"),
        Vec::<usize>::new(),
        "{:?}",
        a.findings
    );
    // the same loader over a fixed dataset, rebuilt every iteration, is loop-invariant
    let fixed = PER_SUBJECT_LOADER.replace(
        "td.TensorDataset(patched_image, patched_mask)",
        "td.TensorDataset(all_images, all_masks)",
    );
    assert_eq!(lines_of(&run(&fixed), "EA701"), vec![14]);
}
