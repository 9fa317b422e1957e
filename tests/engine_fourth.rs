//! The fourth accuracy round: shapes real public scripts use that the engine read wrongly —
//! worker counts over the machine's cores, datasets that hold their samples on the device,
//! loaders nothing reads, copies inside comprehensions, convolutional networks named by a
//! string, models placed after they are built, and evaluation through a local helper.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, assert_silent, ids_of as rules_of, rule_lines as lines_of};

const HEAD: &str = "import os
import argparse
import torch
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument('--batch-size', type=int, default=32)
args = parser.parse_args()
device = torch.device('cuda')
";

const EPOCHS: &str = "
model = Net().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = model(x).sum()
        loss.backward()
        opt.step()
";

// Ex) nw = min([os.cpu_count(), batch_size if batch_size > 1 else 0, 8])
#[test]
fn workers_over_the_core_count_start_at_least_one() {
    let src = format!(
        "{HEAD}batch_size = args.batch_size
nw = min([os.cpu_count(), batch_size if batch_size > 1 else 0, 8])
loader = DataLoader(ds, batch_size=batch_size, num_workers=nw, pin_memory=True)
{EPOCHS}"
    );
    assert_eq!(lines_of(&run(&src), "EA103"), vec![11]);
    // with a batch of one the same expression starts no worker: nothing to keep
    let one = src.replace("default=32", "default=1");
    assert!(lines_of(&run(&one), "EA103").is_empty(), "{one}");
    // a floor the engine cannot read stays silent
    let unknown = src.replace("os.cpu_count()", "workers_from_config()");
    assert_silent(&unknown, &["EA103"]);
}

// Ex) train_set = MelDataset(args.train_file, device); DataLoader(train_set, num_workers=0)
#[test]
fn a_dataset_built_with_the_device_needs_no_workers_or_pinning() {
    let src = format!(
        "{HEAD}from dataset import MelDataset
train_set = MelDataset('train.csv', device)
loader = DataLoader(train_set, batch_size=64, num_workers=0)
{EPOCHS}"
    );
    assert_silent(&src, &["EA101", "EA102"]);
    // the same loader over a dataset that does not hold the device keeps both findings
    let plain = src.replace("MelDataset('train.csv', device)", "MelDataset('train.csv')");
    let b = run(&plain);
    assert_eq!(lines_of(&b, "EA101"), vec![11], "{:?}", rules_of(&b));
    assert_eq!(lines_of(&b, "EA102"), vec![11], "{:?}", rules_of(&b));
}

// Ex) def create_data_loader(data, bs): return DataLoader(data, batch_size=bs)
//     loader = create_data_loader(UrbanSoundDataset(files, device), 128)
#[test]
fn a_dataset_passed_through_a_helper_is_followed_to_its_constructor() {
    let src = format!(
        "{HEAD}from urbansound import UrbanSoundDataset
def create_data_loader(data, bs):
    return DataLoader(data, batch_size=bs)
usd = UrbanSoundDataset('a.csv', device=device)
loader = create_data_loader(usd, 128)
{EPOCHS}"
    );
    assert_silent(&src, &["EA101"]);
    let plain = src.replace(
        "UrbanSoundDataset('a.csv', device=device)",
        "UrbanSoundDataset('a.csv')",
    );
    assert_eq!(lines_of(&run(&plain), "EA101"), vec![11]);
}

// Ex) val_loader = DataLoader(val_set, batch_size=1)  # and nothing reads val_loader
#[test]
fn a_local_loader_nothing_reads_gets_no_finding() {
    let src = format!(
        "{HEAD}def main():
    loader = DataLoader(ds, batch_size=64)
    val_loader = DataLoader(val_ds, batch_size=64)
    model = Net().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        for x, y in loader:
            loss = model(x.to(device)).sum()
            loss.backward()
            opt.step()
main()
"
    );
    assert_eq!(lines_of(&run(&src), "EA101"), vec![10]);
}

// Ex) images = images.to(device); boxes = [b.to(device) for b in boxes]
#[test]
fn copies_of_batch_parts_in_a_comprehension_are_blocking_copies_too() {
    let src = format!(
        "{HEAD}loader = DataLoader(ds, batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True)
model = Net().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for images, boxes, labels in loader:
        images = images.to(device)
        boxes = [b.to(device) for b in boxes]
        batch = {{k: v.to(device) for k, v in labels.items()}}
        other = [t.to(device) for t in cached]
        loss = model(images, boxes, batch).sum()
        loss.backward()
        opt.step()
"
    );
    assert_eq!(lines_of(&run(&src), "EA303"), vec![14, 15, 16]);
}

// Ex) model = build_model_timm(model_name=args.model_name)  # default "efficientnet_b0"
#[test]
fn a_convolutional_network_named_by_a_string_gets_autotuning_advice() {
    let src = "import argparse
import torch
from models import build_model_timm
parser = argparse.ArgumentParser()
parser.add_argument('--model-name', default='efficientnet_b0')
args = parser.parse_args()
device = torch.device('cuda')
model = build_model_timm(model_name=args.model_name, num_classes=2)
model = model.to(device)
opt = torch.optim.AdamW(model.parameters())
for epoch in range(10):
    for x, y in loader:
        loss = model(x.to(device)).sum()
        loss.backward()
        opt.step()
";
    assert_eq!(lines_of(&run(src), "EA204"), vec![9]);
    // a name that only contains a family inside a word ("SimpleNet" ⊃ "lenet") is not one
    let simple = src.replace("efficientnet_b0", "SimpleNet");
    assert_silent(&simple, &["EA204"]);
    // `EfficientNet.from_pretrained(...)`: the family is the receiver's name
    let from = src.replace(
        "build_model_timm(model_name=args.model_name, num_classes=2)",
        "EfficientNet.from_pretrained('x')",
    );
    assert_eq!(lines_of(&run(&from), "EA204"), vec![9]);
}

// Ex) depth_anything = DepthAnythingV2(**cfg); depth_anything = depth_anything.to(DEVICE).eval()
#[test]
fn a_module_placed_after_it_is_built_is_a_model() {
    let src = "import cv2
import torch
from depth_anything_v2.dpt import DepthAnythingV2

def main(paths):
    DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'
    depth_anything = DepthAnythingV2(encoder='vitl')
    depth_anything = depth_anything.to(DEVICE).eval()
    for k, filename in enumerate(paths):
        raw_image = cv2.imread(filename)
        depth = depth_anything.infer_image(raw_image, 518)
        cv2.imwrite(filename + '.png', depth)

main(['a.jpg'])
";
    let a = run(src);
    assert_eq!(a.kind, efficiency_audit::analysis::model::CodeKind::Infer);
    assert_eq!(lines_of(&a, "EA502"), vec![10], "{:?}", rules_of(&a));
    // cast, not placed: not evidence of a module
    let cast = src.replace(".to(DEVICE)", ".to(torch.float16)");
    assert_silent(&cast, &["EA502"]);
}

// Ex) def test_net(net, image): y = net(x) ... for path in images: test_net(net, load(path))
#[test]
fn an_evaluation_loop_through_a_local_helper_runs_the_model_with_autograd() {
    let src = "import torch
from craft import CRAFT

def test_net(net, image):
    x = torch.from_numpy(image).cuda()
    y, feature = net(x)
    return y[0].cpu().numpy()

net = CRAFT().cuda()
net.eval()
for image_path in image_list:
    score = test_net(net, load(image_path))
    save(score)
";
    assert_eq!(lines_of(&run(src), "EA401"), vec![11]);
    // the helper that disables autograd itself is fine
    let guarded = src.replace("def test_net", "@torch.no_grad()\ndef test_net");
    assert_silent(&guarded, &["EA401"]);
}

// Ex) flags.DEFINE_bool('train', False, ...) ... def main(argv): if FLAGS.train: train()
#[test]
fn a_function_called_only_under_an_absl_flag_off_by_default_does_not_run() {
    let src = "import torch
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_bool('train', False, help='train from scratch')

def train():
    model = Net().cuda()
    opt = torch.optim.Adam(model.parameters())
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()
        print(loss.item())

def main(argv):
    if FLAGS.train:
        train()

if __name__ == '__main__':
    app.run(main)
";
    let a = run(src);
    assert!(a.findings.is_empty(), "{:?}", rules_of(&a));
    // on by default: the training runs and gets its findings
    let on = src.replace("DEFINE_bool('train', False", "DEFINE_bool('train', True");
    let b = run(&on);
    assert_eq!(lines_of(&b, "EA301"), vec![14], "{:?}", rules_of(&b));
}

// Ex) if len(all_desc) == 100: all_desc = torch.vstack(all_desc).cpu().numpy(); print(...)
#[test]
fn a_buffer_flushed_when_full_is_a_cadence_not_every_step() {
    let src = "import torch
model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
buf = []
for x, y in loader:
    loss = model(x.cuda()).sum()
    loss.backward()
    opt.step()
    buf.append(loss.detach())
    if len(buf) == 100:
        print(torch.stack(buf).mean().item())
        buf = []
";
    assert_silent(src, &["EA301", "EA504"]);
    // `len(buf) == 1` is every step
    let every = src.replace("len(buf) == 100", "len(buf) == 1");
    assert_eq!(lines_of(&run(&every), "EA301"), vec![11]);
}

// Ex) def train_one_epoch(model, loader, optimizer, device): ... loss.item() per step
#[test]
fn a_device_the_module_is_handed_is_an_accelerator() {
    let src = "import torch

def train_one_epoch(model, loader, optimizer, criterion, device):
    model.train()
    total = 0.0
    for images, targets in loader:
        images, targets = images.to(device), targets.to(device)
        loss = criterion(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total
";
    assert_eq!(lines_of(&run(src), "EA301"), vec![12]);
    // a file that says where it runs decides
    let cpu = src.replace("import torch\n", "import torch\nDEVICE = 'cpu'\n");
    assert_silent(&cpu, &["EA301"]);
    // `device = get_device(args.device)` with `default="cpu"`
    let arg = "import argparse
import torch
from utils import get_device
p = argparse.ArgumentParser()
p.add_argument('--device', default='cpu')
args = p.parse_args()
device = get_device(args.device)
model = Net().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for images, targets in loader:
    loss = model(images.to(device)).sum()
    loss.backward()
    opt.step()
    print(loss.item())
";
    assert_silent(arg, &["EA301"]);
}

// Ex) for img, path in loader: pred = model(img); print(path, pred.argmax(1))
#[test]
fn inference_loops_may_report_each_batch() {
    let src = "import torch
model = Net().cuda().eval()
with torch.no_grad():
    for image, name in loader:
        pred = model(image.cuda())
        print(name)
";
    assert_silent(src, &["EA504"]);
    let train = "import torch
model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for image, name in loader:
    loss = model(image.cuda()).sum()
    loss.backward()
    opt.step()
    print(name)
";
    assert_eq!(lines_of(&run(train), "EA504"), vec![8]);
}

// Ex) train_set, val_set = random_split(MelDataset(path, device), [n, m])
#[test]
fn splits_of_a_device_resident_dataset_are_device_resident() {
    let src = format!(
        "{HEAD}from dataset import MelDataset
dataset = MelDataset('train.csv', device)
train_set, val_set = torch.utils.data.random_split(dataset, [80, 20])
loader = DataLoader(train_set, batch_size=64, num_workers=0)
{EPOCHS}"
    );
    assert_silent(&src, &["EA101"]);
    let plain = src.replace("MelDataset('train.csv', device)", "MelDataset('train.csv')");
    assert_eq!(lines_of(&run(&plain), "EA101"), vec![12]);
}

// Ex) for batch in loader: out = model(input_ids=batch["input_ids"].to(device), ...)
#[test]
fn batches_of_token_ids_from_another_module_need_no_workers() {
    let src = "import torch
from torch.utils.data import DataLoader
from dataset import GSMDataset
model = Net().cuda()
opt = torch.optim.AdamW(model.parameters())
loader = DataLoader(GSMDataset(examples), batch_size=16, shuffle=True)
for epoch in range(3):
    for batch in loader:
        out = model(input_ids=batch['input_ids'].cuda(), attention_mask=batch['attention_mask'].cuda())
        out.loss.backward()
        opt.step()
";
    assert_silent(src, &["EA101", "EA102"]);
    // the same loader in a file that also reads images keeps its findings
    let images = src.replace("import torch\n", "import torch\nfrom PIL import Image\n");
    assert_eq!(lines_of(&run(&images), "EA101"), vec![7]);
}

// Ex) model = Net2d(modes, width).cpu() ... x, y = x.to(device), y.to(device)
#[test]
fn a_model_placed_on_the_cpu_keeps_a_handed_device_off_the_gpu() {
    let src = "import torch
from utilities import *
from models import Net2d
model = Net2d(12, 32).cpu()
opt = torch.optim.Adam(model.parameters())
for x, y in loader:
    x, y = x.to(device), y.to(device)
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    opt.step()
    print(loss.item())
";
    assert_silent(src, &["EA301"]);
    let gpu = src.replace("Net2d(12, 32).cpu()", "Net2d(12, 32).to(device)");
    assert_eq!(lines_of(&run(&gpu), "EA301"), vec![11]);
}

// Ex) loader = DataLoader(TensorDataset(x_train, y_train), batch_size=20, shuffle=True)
#[test]
fn a_tensor_dataset_needs_no_workers() {
    let src = format!(
        "{HEAD}from torch.utils.data import TensorDataset
loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True)
{EPOCHS}"
    );
    assert_silent(&src, &["EA101"]);
    // a collate of its own may do per-batch work
    let collate = src.replace("shuffle=True)", "shuffle=True, collate_fn=augment)");
    assert_eq!(lines_of(&run(&collate), "EA101"), vec![10]);
}

// Ex) for fl in train_df.train_path.values: img = get_im_cv2(fl); X_train.append(img)
#[test]
fn a_loop_over_a_column_of_paths_is_a_file_loop() {
    let src = "import cv2
import pandas as pd
train_df = pd.read_csv('train.csv')

def get_im(path):
    return cv2.resize(cv2.imread(path), (128, 128))

X_train = []
for fl in train_df.train_path.values:
    X_train.append(get_im(fl))
";
    assert_eq!(lines_of(&run(src), "EA602"), vec![9]);
    let ids = src.replace("train_df.train_path.values", "train_df.user_id.values");
    assert_silent(&ids, &["EA602"]);
}

// Ex) y_real_ = torch.ones(mini_batch) ... y_real_ = Variable(y_real_.cuda())
#[test]
fn a_constant_built_on_the_cpu_and_moved_a_line_later_is_reported_where_it_is_built() {
    let src = "import torch
D = Discriminator().cuda()
opt = torch.optim.Adam(D.parameters())
for x_, _ in loader:
    mini_batch = x_.size()[0]
    y_real_ = torch.ones(mini_batch)
    rows = torch.tensor(batch_rows)
    x_, y_real_ = x_.cuda(), y_real_.cuda()
    rows = rows.cuda()
    loss = torch.nn.functional.binary_cross_entropy(D(x_).squeeze(), y_real_)
    loss.backward()
    opt.step()
";
    let a = run(src);
    // host data (`torch.tensor(batch_rows)`) is the input's own copy, not a constant
    assert_eq!(lines_of(&a, "EA304"), vec![6], "{:?}", rules_of(&a));
    assert!(
        a.findings
            .iter()
            .all(|f| f.rule != "EA304" || f.fix.is_none()),
        "no fix: the name may be read on the CPU in between"
    );
}

// Ex) for img_path in input_img_list: img = cv2.imread(img_path) ... for face in faces: net(face)
#[test]
fn an_image_decoded_per_item_of_a_loop_holding_an_inference_loop() {
    let src = "import cv2
import torch
from codeformer import CodeFormer
net = CodeFormer().to('cuda').eval()
for i, img_path in enumerate(input_img_list):
    img = cv2.imread(img_path)
    faces = detect_faces(img)
    for idx, face in enumerate(faces):
        with torch.no_grad():
            out = net(torch.from_numpy(face).to('cuda'))
        save(out)
";
    assert_eq!(lines_of(&run(src), "EA502"), vec![6]);
    // a decode that does not read the outer item (a fixed logo) is setup per item, not input
    let fixed = src.replace("cv2.imread(img_path)", "cv2.imread('logo.png')");
    assert_silent(&fixed, &["EA502"]);
}

// Ex) encoder = networks.ResnetEncoder(18, False); encoder.to(device); encoder.eval()
#[test]
fn a_class_of_an_imported_module_placed_later_is_a_model() {
    let src = "import cv2
import torch
import networks
device = torch.device('cuda')
encoder = networks.ResnetEncoder(18, False)
encoder.to(device)
encoder.eval()
with torch.no_grad():
    for image_path in paths:
        image = cv2.imread(image_path)
        features = encoder(torch.from_numpy(image).to(device))
        save(features)
";
    assert_eq!(lines_of(&run(src), "EA502"), vec![10]);
    let loss = src.replace("networks.ResnetEncoder(18, False)", "networks.SSIMLoss()");
    assert_silent(&loss, &["EA502"]);
}

// Ex) if not args.eval: train(args) else: eval(args)  /  elif source == 'vott': convert_vott(...)
#[test]
fn functions_called_only_from_branches_off_as_shipped_do_not_run() {
    let src = "import argparse
import glob
from PIL import Image

def train(args):
    out = []
    for path in glob.glob(args.images + '/*'):
        out.append(Image.open(path).convert('L').resize((32, 32)))
    save(out)

def evaluate(args):
    out = []
    for path in glob.glob(args.images + '/*'):
        out.append(Image.open(path).convert('L'))
    save(out)

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--images')
    parser.add_argument('--eval', action='store_true')
    args = parser.parse_args()
    source = 'coco'
    if not args.eval:
        train(args)
    else:
        evaluate(args)
    if source == 'vott':
        evaluate(args)
    elif source == 'labelbox':
        evaluate(args)
";
    assert_eq!(lines_of(&run(src), "EA602"), vec![7]);
    // the elif that is taken runs
    let taken = src.replace("elif source == 'labelbox'", "elif source == 'coco'");
    assert_eq!(lines_of(&run(&taken), "EA602"), vec![7, 13]);
}

// Ex) def evaluate(model, eval_dataloader): ... batch["input_ids"].to(model.device)
#[test]
fn a_loader_handed_in_is_pinned_when_every_live_loader_of_the_file_is() {
    let src = "import torch
from torch.utils.data import DataLoader

def get_loader(ds):
    return DataLoader(ds, batch_size=8, num_workers=2, pin_memory=True)

def evaluate(model, eval_dataloader):
    model.eval()
    for batch in eval_dataloader:
        with torch.no_grad():
            out = model(batch['x'].to(model.device))

def main():
    model = Net().cuda()
    evaluate(model, get_loader(val_set))

main()
";
    assert_eq!(lines_of(&run(src), "EA303"), vec![11]);
    let unpinned = src.replace("pin_memory=True", "pin_memory=False");
    assert_silent(&unpinned, &["EA303"]);
}

// Ex) emb = model(batch) ... print('emb', emb)   vs   print(name, file=sys.stderr)
#[test]
fn an_inference_loop_is_flagged_only_for_printing_what_the_model_returned() {
    let src = "import sys
import torch
model = Net().to('cuda').eval()
with torch.no_grad():
    for name, batch in loader:
        emb = model(batch.to('cuda'))
        ids = model.generate(batch.to('cuda'))
        print(name, len(name), file=sys.stderr)
        print('ids', ids)
        print('emb', emb)
";
    assert_eq!(lines_of(&run(src), "EA504"), vec![10]);
}

// Ex) if step >= last_eval_step + eval_period: print(...); last_eval_step = step
#[test]
fn a_test_whose_body_resets_its_trigger_is_a_cadence() {
    let src = "import torch
model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
last_eval_step = 0
for step, (x, y) in enumerate(loader):
    loss = model(x.cuda()).sum()
    loss.backward()
    opt.step()
    if step >= last_eval_step + 100:
        print(f'loss {loss.item()}')
        last_eval_step = step
";
    assert_silent(src, &["EA301", "EA504"]);
    // a test that nothing in its body resets runs every step once it holds
    let every = src.replace("        last_eval_step = step\n", "");
    assert_eq!(lines_of(&run(&every), "EA301"), vec![10]);
}

// Ex) for step, batch in enumerate(train_loader): ...; if step % 500 == 0: for x in val_loader: ...
#[test]
fn an_evaluation_loop_every_n_steps_of_training_is_rare() {
    let src = "import torch
model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step, (x, y) in enumerate(loader):
    loss = model(x.cuda()).sum()
    loss.backward()
    opt.step()
    if step % 500 == 0:
        with torch.no_grad():
            for vx, vy in val_loader:
                acc = (model(vx.cuda()).argmax(1) == vy.cuda()).float().mean().item()
";
    assert_silent(src, &["EA301"]);
    let every = src.replace("    if step % 500 == 0:\n", "    if True:\n");
    assert_eq!(lines_of(&run(&every), "EA301"), vec![11]);
}

// Ex) boxes = output['boxes'].cpu() ... for box in boxes: x1, y1, x2, y2 = box.tolist()
#[test]
fn a_value_already_copied_to_the_host_reads_without_a_wait() {
    let src = "import torch
model = Net().cuda().eval()
with torch.no_grad():
    for images in loader:
        output = model(images.cuda())
        boxes = output['boxes'].cpu()
        masks = output['masks'].cpu()
        for mask, box in zip(masks, boxes):
            coords = box.tolist()
            binary = (mask > 0.5).numpy()
            collect(coords, binary)
";
    // the two copies wait; what is read from them afterwards does not
    assert_eq!(lines_of(&run(src), "EA301"), vec![6, 7]);
}

// Ex) def compute_clip_features(batch): photos = [Image.open(p) for p in batch] ... (per step)
#[test]
fn an_image_decoded_in_a_helper_the_model_loop_calls_per_step() {
    let src = "import torch
from PIL import Image
model = Net().to('cuda').eval()

def compute_features(paths):
    photos = [Image.open(p) for p in paths]
    logo = Image.open('assets/logo.png')
    with torch.no_grad():
        return model(torch.stack([preprocess(x) for x in photos]).to('cuda'))

for i in range(0, len(files), 64):
    feats = compute_features(files[i:i + 64])
    save(feats, i)
";
    // the fixed logo is not the loop's input
    assert_eq!(lines_of(&run(src), "EA502"), vec![6]);
}

// Ex) parser.add_argument('--device', default='cpu') ... if args.device == 'cuda': torch.cuda.synchronize()
#[test]
fn code_that_never_runs_says_nothing_of_the_device() {
    let src = "import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument('--device', type=str, default='cpu')
args = parser.parse_args()
model = Net().to(args.device)
opt = torch.optim.AdamW(model.parameters())
for x, y in loader:
    loss = model(x.to(args.device)).sum()
    loss.backward()
    opt.step()
    print(loss.item())
    if args.device == 'cuda':
        torch.cuda.synchronize()
";
    assert!(run(src).findings.iter().all(|f| f.rule != "EA301"));
    let gpu = src.replace("default='cpu'", "default='cuda'");
    assert_eq!(lines_of(&run(&gpu), "EA301"), vec![12]);
}

// Ex) model = BERTBaseUncased(); train_loader = DataLoader(BERTDataset(review, target), ...)
#[test]
fn a_text_model_by_its_class_name_feeds_token_ids() {
    let src = "import torch
from torch.utils.data import DataLoader
from model import BERTBaseUncased
from dataset import ReviewDataset
model = BERTBaseUncased().to('cuda')
opt = torch.optim.AdamW(model.parameters())
loader = DataLoader(ReviewDataset(reviews, targets), batch_size=32)
for epoch in range(3):
    for batch in loader:
        out = model(**{k: v.to('cuda') for k, v in batch.items()})
        out.sum().backward()
        opt.step()
";
    assert_silent(src, &["EA101", "EA102"]);
    // an image model over the same loader keeps both findings
    let image = src.replace("BERTBaseUncased", "ResNetClassifier");
    let b = run(&image);
    assert_eq!(lines_of(&b, "EA102"), vec![7], "{:?}", rules_of(&b));
}

// Ex) def validate(model, loader): model = model.to(device) ... model = get_model(...).to(device)
#[test]
fn the_model_a_function_builds_anchors_the_file_level_advice_over_one_it_is_handed() {
    let src = "import torch
from models import get_model

def validate(model, loader):
    model = model.to('cuda')
    with torch.no_grad():
        for x in loader:
            model(x.to('cuda'))

def main():
    model = get_model('mlp').to('cuda')
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(10):
        for x, y in loader:
            loss = model(x.to('cuda')).sum()
            loss.backward()
            opt.step()
        validate(model, val_loader)

main()
";
    assert_eq!(lines_of(&run(src), "EA203"), vec![11]);
    // torch's own data types placed on the device are not models
    let variable = "import torch
from torch.autograd import Variable
model = Net()
def train_model(model):
    model.cuda()
    opt = torch.optim.Adam(model.parameters())
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()
train_model(model)
t = Variable(torch.LongTensor([1, 2]))
t = t.cuda()
";
    assert_eq!(lines_of(&run(variable), "EA203"), vec![5]);
}

// Ex) device = "mps" if torch.backends.mps.is_available() else "cpu"
#[test]
fn a_device_chosen_between_mps_and_cpu_is_not_cuda() {
    let src = "import torch
device = 'mps' if torch.backends.mps.is_available() else 'cpu'
model = ViT().to(device)
opt = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = model(x.to(device)).sum()
    loss.backward()
    opt.step()
    print(loss.item())
";
    assert_silent(src, &["EA301"]);
    let cuda = src.replace("'mps' if torch.backends.mps", "'cuda' if torch.cuda");
    assert_eq!(lines_of(&run(&cuda), "EA301"), vec![9]);
}

// Ex) train_loader = DataLoader(ds, num_workers=8) ... trainAndValidate(train_loader, ...) with
//     `for epoch in range(n): for x, y in trainingData:` inside
#[test]
fn a_loader_handed_to_a_function_with_an_epoch_loop_is_iterated_per_epoch() {
    let src = "import torch
train_loader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=8, pin_memory=True)

def trainAndValidate(trainingData, numEpochs=8):
    model = Net().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(numEpochs):
        for x, y in trainingData:
            loss = model(x.cuda(non_blocking=True)).sum()
            loss.backward()
            opt.step()

trainAndValidate(train_loader, 20)
";
    assert_eq!(lines_of(&run(src), "EA103"), vec![2]);
    // a function that reads the loader once per call, called once, keeps no workers alive
    let once = src.replace("    for epoch in range(numEpochs):\n        for x, y in trainingData:\n            loss = model(x.cuda(non_blocking=True)).sum()\n            loss.backward()\n            opt.step()\n", "    for x, y in trainingData:\n        loss = model(x.cuda(non_blocking=True)).sum()\n        loss.backward()\n        opt.step()\n");
    assert!(lines_of(&run(&once), "EA103").is_empty(), "{once}");
}

// Ex) def trainAndValidate(trainingData): for i, (x, y) in enumerate(trainingData): x = x.to(device)
#[test]
fn a_parameter_loop_over_a_handed_pinned_loader_copies_blocking() {
    let src = "import torch
loader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=8, pin_memory=True, persistent_workers=True)

def fit(trainingData):
    model = Net().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(trainingData):
        x = x.to('cuda')
        loss = model(x).sum()
        loss.backward()
        opt.step()

fit(loader)
";
    assert_eq!(lines_of(&run(src), "EA303"), vec![8]);
}

// Ex) text_for_pred = torch.LongTensor(batch_size, 26).fill_(0).to(device)
#[test]
fn legacy_typed_constructors_of_constants_are_built_on_the_cpu_and_moved() {
    let src = "import torch
model = Net().to('cuda').eval()
with torch.no_grad():
    for image, batch in loader:
        text = torch.LongTensor(batch_size, 26).fill_(0).to('cuda')
        length = torch.IntTensor([25] * batch_size).to('cuda')
        y = torch.arange(0, 5).view(5, 1).expand(5, 3).reshape(15).cuda()
        data = torch.FloatTensor(batch).to('cuda')
        model(image.to('cuda'), text, length, y, data)
";
    let a = run(src);
    // the wrapped host batch (line 8) is the input's own copy
    assert_eq!(lines_of(&a, "EA304"), vec![5, 6, 7], "{:?}", rules_of(&a));
    // no one-keyword fix for the legacy constructors (they take no `device=`)
    assert!(
        a.findings
            .iter()
            .filter(|f| f.rule == "EA304" && f.line < 7)
            .all(|f| f.fix.is_none())
    );
}

// Ex) device = torch.device('cuda' if args.device == 'cuda' else 'cpu') with default 'cpu'
#[test]
fn the_device_a_conditional_picks_as_shipped_decides() {
    let src = "import argparse
import torch
p = argparse.ArgumentParser()
p.add_argument('--device', default='cpu')
args = p.parse_args()
torch.backends.cudnn.benchmark = True
device = torch.device('cuda' if args.device == 'cuda' else 'cpu')
model = Net().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = model(x.to(device)).sum()
    loss.backward()
    opt.step()
    print(loss.item())
";
    assert_silent(src, &["EA301", "EA201"]);
    let gpu = src.replace("default='cpu'", "default='cuda'");
    assert_eq!(lines_of(&run(&gpu), "EA301"), vec![14]);
    // `use_cuda = ... and torch.cuda.is_available()`: judged on the GPU runner, it is true
    let avail = src.replace(
        "device = torch.device('cuda' if args.device == 'cuda' else 'cpu')",
        "use_cuda = torch.cuda.is_available()\ndevice = torch.device('cuda' if use_cuda else 'cpu')",
    );
    assert_eq!(lines_of(&run(&avail), "EA301"), vec![15]);
}

// Ex) GPU_available = False; GPU_available = GPU_available and torch.cuda.is_available()
#[test]
fn a_flag_that_gates_every_move_off_keeps_the_file_on_the_cpu() {
    let src = "import torch
GPU_available = False
GPU_available = GPU_available and torch.cuda.is_available()
model = Net()
if GPU_available:
    model.cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    if GPU_available:
        x = x.cuda()
    loss = model(x).sum()
    loss.backward()
    opt.step()
    print(loss.item())
";
    assert_silent(src, &["EA301", "EA201"]);
    let on = src.replace("GPU_available = False", "GPU_available = True");
    assert_eq!(lines_of(&run(&on), "EA301"), vec![14]);
}

// Ex) x = x.to(device) with a pinned loader, on Apple's MPS
#[test]
fn pinned_copies_are_a_cuda_matter() {
    let src = "import torch
device = 'mps' if torch.backends.mps.is_available() else 'cpu'
loader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=2, pin_memory=True, persistent_workers=True)
model = Net().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    x = x.to(device)
    loss = model(x).sum()
    loss.backward()
    opt.step()
";
    assert_silent(src, &["EA303"]);
    // copying results back with `.to(torch.device('cpu'))` does not put the file on the CPU
    let back = "import torch
loader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=2, pin_memory=True, persistent_workers=True)

def train(model, device):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        x = x.to(device)
        loss = model(x).sum()
        loss.backward()
        opt.step()
        keep(loss.detach().to(torch.device('cpu')))
";
    assert_eq!(lines_of(&run(back), "EA303"), vec![7]);
}

// Ex) model = UNet3D(in_channels=4, out_channels=3).cuda(); DataLoader(volumes, batch_size=2)
#[test]
fn a_small_batch_of_3d_volumes_is_a_memory_decision() {
    let src = "import torch
from torch.utils.data import DataLoader
from unet3d import UNet3D
model = UNet3D(in_channels=4, out_channels=3).cuda()
opt = torch.optim.Adam(model.parameters())
train_loader = DataLoader(volumes, batch_size=2, num_workers=4, pin_memory=True, persistent_workers=True)
for epoch in range(100):
    for x, y in train_loader:
        loss = model(x.cuda(non_blocking=True)).sum()
        loss.backward()
        opt.step()
";
    assert_silent(src, &["EA702"]);
    let images = src.replace("UNet3D", "UNet");
    assert_eq!(lines_of(&run(&images), "EA702"), vec![6]);
}

// Ex) for k, v in model.named_parameters(): v.requires_grad = False
#[test]
fn a_model_with_every_parameter_frozen_records_no_graph() {
    let src = "import torch
model = RRDBNet().cuda()
model.eval()
for k, v in model.named_parameters():
    v.requires_grad = False
for path in paths:
    out = model(load(path).cuda())
    save(out)
";
    assert_silent(src, &["EA401"]);
    // freezing only the embedding leaves the rest of the graph recorded
    let partial = src.replace(
        "for k, v in model.named_parameters():\n    v.requires_grad = False\n",
        "model.embedding.weight.requires_grad = False\n",
    );
    assert_eq!(lines_of(&run(&partial), "EA401"), vec![5]);
}
