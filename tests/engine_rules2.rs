//! Individual rules on facts of their own: compilation decided apart from precision, a loader
//! read once, per-file work that is not a stdlib helper.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

const BENCH: &str = "import torch
from contextlib import nullcontext

device = 'cuda'
dtype = DTYPE
ctx = nullcontext() if device == 'cpu' else torch.autocast(device_type='cuda', dtype=dtype)
model = Net()
model.to(device)
optimizer = torch.optim.AdamW(model.parameters())
for step in range(1000):
    x, y = get_batch()
    with ctx:
        loss = model(x, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

#[test]
fn no_compile_does_not_wait_for_an_unresolved_precision() {
    // the autocast dtype comes from something the engine cannot read: compile is judged anyway
    let a = run(&BENCH.replace("DTYPE", "pick_dtype()"));
    assert_eq!(lines_of(&a, "EA203"), [8]);
}

#[test]
fn a_module_level_dtype_constant_is_a_precision() {
    let a = run(&BENCH.replace("DTYPE", "torch.float16"));
    assert_eq!(lines_of(&a, "EA203"), [8]);
    assert!(a.facts.precision.half && !a.facts.precision.unresolved);
    let a = run(&BENCH.replace("DTYPE", "torch.float32"));
    assert!(!a.facts.precision.unresolved);
    // two assignments that disagree stay unknown
    let a = run(&BENCH.replace(
        "DTYPE",
        "torch.float16\nif flag:\n    dtype = torch.float32",
    ));
    assert!(a.facts.precision.unresolved);
}

#[test]
fn no_compile_stays_silent_when_compile_comes_from_a_variable() {
    let src = "import torch
from transformers import TrainingArguments, Trainer
args = TrainingArguments(output_dir='o', torch_compile=opts.compile)
model = Net().to('cuda')
for x in loader:
    loss = model(x)
    loss.backward()
    opt.step()
";
    assert!(lines_of(&run(src), "EA203").is_empty());
}

const ONE_BATCH: &str = "import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
model = Net().to(device)

def show(ds):
    images, _ = next(iter(DataLoader(ds, batch_size=8)))
    return model(images.to(device))

def peek(ds):
    loader = DataLoader(ds, batch_size=8)
    batch = next(iter(loader))
    return batch
";

#[test]
fn a_loader_read_for_one_batch_needs_no_workers() {
    let a = run(ONE_BATCH);
    for rule in ["EA101", "EA102", "EA103"] {
        assert!(lines_of(&a, rule).is_empty(), "{rule}: {:?}", a.findings);
    }
}

#[test]
fn a_loader_also_looped_over_still_needs_workers() {
    let src = ONE_BATCH.replace(
        "    return batch\n",
        "    for x in loader:\n        model(x)\n    return batch\n",
    );
    let a = run(&src);
    assert_eq!(lines_of(&a, "EA101"), [12]);
    assert_eq!(lines_of(&a, "EA102"), [12]);
    // handed elsewhere: the reader cannot tell how often it is consumed
    let a = run(&ONE_BATCH.replace("    return batch\n", "    return loader\n"));
    assert_eq!(lines_of(&a, "EA101"), [12]);
}

#[test]
fn decoding_a_video_per_file_and_writing_frames_is_serial_work() {
    let src = "import os
import cv2

names = os.listdir('videos')
n = 0
for name in names:
    path = 'videos/' + name
    cap = cv2.VideoCapture(path)
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        cv2.imwrite(os.path.join('frames', '%d.jpg' % n), frame)
        n += 1
";
    assert_eq!(lines_of(&run(src), "EA602"), [6]);
}

#[test]
fn a_third_party_call_on_the_file_is_per_file_work_a_path_helper_is_not() {
    let src = "import os
import ocrlib

for name in os.listdir('.'):
    if os.path.isfile(name):
        text = ocrlib.image_to_string(name)
        with open(name + '.txt', 'w') as f:
            f.writelines(text)
";
    assert_eq!(lines_of(&run(src), "EA602"), [4]);
    // only path and string helpers on the file: nothing to parallelise
    let helpers = src.replace("ocrlib.image_to_string(name)", "os.path.basename(name)");
    assert!(lines_of(&run(&helpers), "EA602").is_empty());
    // a standard-library string helper on a name built from the entry
    let stdlib = "import os
import html

rows = []
for name in os.listdir('.'):
    label = name + '/'
    rows.append(html.escape(label))
";
    assert!(lines_of(&run(stdlib), "EA602").is_empty());
}

#[test]
fn counting_files_or_converting_arrays_is_not_per_file_work() {
    // a package call on an element of an in-memory batch, not on a file
    let src = "import os
from PIL import Image

def main(images_processed):
    out = []
    for img in list(images_processed):
        pil = Image.fromarray(img)
        pil.save(os.path.join('out', 'x.png'))
";
    assert!(lines_of(&run(src), "EA602").is_empty());
    // a 10-byte header check that only counts the files it skips
    let src = "import os

skipped = 0
for name in os.listdir('imgs'):
    path = os.path.join('imgs', name)
    with open(path, 'rb') as f:
        ok = b'JFIF' in f.peek(10)
    if not ok:
        skipped += 1
        os.remove(path)
";
    assert!(lines_of(&run(src), "EA602").is_empty());
}

const INFER_LOOP: &str = "import torch
from torch.utils.data import DataLoader

model = Net().to('cuda').eval()
loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
with torch.no_grad():
    for batch in loader:
        emb = model(batch.to('cuda'))
        LOG
";

#[test]
fn printing_text_and_shapes_per_inference_batch_is_not_logging_waste() {
    for quiet in [
        "print('batch done, shape:', emb.shape)",
        "print(f'{len(batch)} rows -> {emb.shape[0]} x {emb.size(1)}', flush=True)",
    ] {
        let a = run(&INFER_LOOP.replace("LOG", quiet));
        assert!(
            lines_of(&a, "EA504").is_empty(),
            "{quiet}: {:?}",
            a.findings
        );
    }
    // a tensor (or anything the engine cannot tell is metadata) is still flagged
    for loud in ["print('emb', emb)", "print(f'mean {emb.mean()}')"] {
        let a = run(&INFER_LOOP.replace("LOG", loud));
        assert_eq!(lines_of(&a, "EA504"), [9], "{loud}");
    }
}
