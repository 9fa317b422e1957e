//! The fifteenth accuracy round: shapes from the blind wave g294– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};
use efficiency_audit::analysis::apply_fixes;

/// The fix of the one finding of `rule` in `src`, applied.
fn fixed(src: &str, rule: &str) -> String {
    let a = run(src);
    let fixes: Vec<_> = a
        .findings
        .iter()
        .filter(|f| f.rule == rule)
        .filter_map(|f| f.fix.as_ref())
        .collect();
    assert_eq!(fixes.len(), 1, "{:?}", a.findings);
    apply_fixes(src, &fixes).expect("the fix applies")
}

/// PointNet-style training whose loaders turn pinning and persistence off in so many words.
const SWITCHED_OFF: &str = "import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
model = Net().to(device)
optimizer = torch.optim.Adam(model.parameters())
train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4, pin_memory=False, persistent_workers=False)
for epoch in range(100):
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) DataLoader(ds, num_workers=4, pin_memory=False)   <- pageable copies on a CUDA file
#[test]
fn a_switch_written_false_is_off() {
    let a = run(SWITCHED_OFF);
    assert_eq!(lines_of(&a, "EA102"), vec![7], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA103"), vec![7], "{:?}", a.findings);
    // the fixes turn the literal on instead of adding a second keyword
    let out = fixed(SWITCHED_OFF, "EA102");
    assert!(
        out.contains("num_workers=4, pin_memory=True, persistent"),
        "{out}"
    );
    let out = fixed(SWITCHED_OFF, "EA103");
    assert!(out.contains("persistent_workers=True)"), "{out}");
    assert_eq!(out.matches("persistent_workers").count(), 1, "{out}");
}

// Ex) DataLoader(ds, pin_memory=args.pin_memory)   <- the user's switch, left to them
#[test]
fn a_switch_from_a_variable_or_an_option_is_the_users() {
    let opt = SWITCHED_OFF
        .replace(
            "import torch\n",
            "import argparse\nimport torch\n\np = argparse.ArgumentParser()\np.add_argument('--pin', action='store_true')\np.add_argument('--persist', action='store_true')\nargs = p.parse_args()\n",
        )
        .replace("pin_memory=False", "pin_memory=args.pin")
        .replace("persistent_workers=False", "persistent_workers=args.persist");
    let a = run(&opt);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA103").is_empty(), "{:?}", a.findings);
    let var = SWITCHED_OFF
        .replace(
            "device = torch.device('cuda')\n",
            "device = torch.device('cuda')\npin = False\n",
        )
        .replace("pin_memory=False", "pin_memory=pin");
    assert!(lines_of(&run(&var), "EA102").is_empty());
    // and on, it is on
    let on = SWITCHED_OFF
        .replace("pin_memory=False", "pin_memory=True")
        .replace("persistent_workers=False", "persistent_workers=True");
    let a = run(&on);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA103").is_empty(), "{:?}", a.findings);
}

/// auto_LiRPA's certified training: the input bounds are computed from the batch on the host,
/// then copied.
const BOUNDS: &str = "import torch
from torch.utils.data import DataLoader

norm = float(input())
loader = DataLoader(ds, batch_size=128, num_workers=4, pin_memory=True, persistent_workers=True)
model = Net().cuda()
opt = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for data, labels in loader:
        if norm == float('inf'):
            data_ub = torch.min(data + eps, data_max)
            scaled = (data - mean) / std
        else:
            data_ub = scaled = data
        data, labels = data.cuda(), labels.cuda()
        data_ub, scaled = data_ub.cuda(), scaled.cuda()
        loss = model(data, data_ub, scaled).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
";

// Ex) lb = torch.max(data - eps, lo); lb.cuda()   <- a new tensor: its copy blocks anyway
#[test]
fn a_tensor_computed_from_the_batch_is_no_pinned_batch() {
    let a = run(BOUNDS);
    assert_eq!(lines_of(&a, "EA303"), vec![15], "{:?}", a.findings);
}

/// A training loop whose method switches to natural training for tiny epsilons, and whose
/// robust statistics are read only otherwise.
const CONDITIONAL_REBINDING: &str = "import torch

def train(model, loader, opt, method='robust'):
    for data, labels in loader:
        batch_method = method
        if sched.get_eps() < 1e-20:
            batch_method = 'natural'
        data, labels = data.cuda(), labels.cuda()
        loss = torch.nn.functional.cross_entropy(model(data), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if batch_method != 'natural':
            meter.update('robust', loss.item())

model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    train(model, loader, opt)
";

// Ex) m = method; if eps < tiny: m = "natural"   <- either value reaches the test below
#[test]
fn a_name_rebound_in_a_branch_holds_either_value() {
    let a = run(CONDITIONAL_REBINDING);
    assert_eq!(lines_of(&a, "EA301"), vec![14], "{:?}", a.findings);
    // a rebinding that always runs decides the value: the branch is dead
    let always = CONDITIONAL_REBINDING.replace(
        "        if sched.get_eps() < 1e-20:\n            batch_method = 'natural'\n",
        "        batch_method = 'natural'\n",
    );
    let a = run(&always);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
}

/// PGD adversarial training: the attack back-propagates to its input in a loop of its own,
/// called by the training step loop.
const PGD: &str = "import torch
import torch.nn.functional as F

def attack_pgd(model, X, y, iters):
    delta = torch.zeros_like(X).cuda()
    delta.requires_grad = True
    for _ in range(iters):
        loss = F.cross_entropy(model(X + delta), y)
        loss.backward()
        delta.data = delta + 0.01 * delta.grad.sign()
        delta.grad.zero_()
    return delta.detach()

model = PreActResNet18().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(200):
    for X, y in train_loader:
        X, y = X.cuda(), y.cuda()
        delta = attack_pgd(model, X, y, 10)
        loss = F.cross_entropy(model(X + delta), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
";

// Ex) for X, y in loader: delta = attack_pgd(model, X, y)   <- the training loop, not the attack's
#[test]
fn the_training_loop_is_the_one_that_calls_the_attack() {
    let a = run(PGD);
    assert_eq!(lines_of(&a, "EA201"), vec![17], "{:?}", a.findings);
}

/// TRADES with adversarial weight perturbation: the architecture is looked up by name in a
/// module of models.
const GETATTR_ARCH: &str = "import argparse
import torch
import torch.nn as nn
import models

parser = argparse.ArgumentParser()
parser.add_argument('--arch', type=str, default='WideResNet34')
args = parser.parse_args()
device = torch.device('cuda')
model = nn.DataParallel(getattr(models, args.arch)(num_classes=10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(100):
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) getattr(models, args.arch)() with default='WideResNet34'   <- a convolutional family
#[test]
fn an_architecture_looked_up_by_a_name_of_a_conv_family_is_convolutional() {
    let a = run(GETATTR_ARCH);
    assert_eq!(lines_of(&a, "EA204"), vec![10], "{:?}", a.findings);
    let vit = GETATTR_ARCH.replace("WideResNet34", "ViT_B16");
    assert!(lines_of(&run(&vit), "EA204").is_empty());
}

/// A change-detection loss computed per sample of the batch from whole per-sample maps.
const PER_SAMPLE_LOSS: &str = "import numpy as np
import torch

def sample_losses(diff, labels, batch_size):
    losses = torch.zeros(batch_size)
    for i in range(batch_size):
        dist = torch.norm(diff[i], dim=0)
        change = labels[i] == 1
        loss_change = dist[change].sum() / (change.sum() + 1e-8)
        loss = torch.exp(loss_change)
        losses[i] = loss
    return losses

def histogram(values, n):
    counts = np.zeros(n)
    for i in range(len(values)):
        counts[i] = values[i] * 2
    return counts

for path in paths:
    np.save(path + '.npy', sample_losses(np.load(path), labels, 64))
    np.save(path + '.h.npy', histogram(np.load(path), 8))
";

// Ex) loss = dist[mask].sum() / n; losses[i] = torch.exp(loss)   <- whole maps per iteration
#[test]
fn a_write_of_a_name_the_body_reduced_is_no_element_wise_work() {
    let a = run(PER_SAMPLE_LOSS);
    assert_eq!(lines_of(&a, "EA603"), vec![16], "{:?}", a.findings);
}

/// MART's white-box PGD: an optimizer over the adversarial input, which the loop rebuilds.
const PGD_OPT: &str = "import torch
import torch.optim as optim

def pgd_whitebox(model, X, y, num_steps=20):
    X_pgd = X.clone().requires_grad_(True)
    for _ in range(num_steps):
        opt = optim.SGD([X_pgd], lr=1e-3)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(X_pgd), y)
        loss.backward()
        X_pgd = (X_pgd + 0.01 * X_pgd.grad.sign()).detach().requires_grad_(True)
    return X_pgd

model = Net().cuda()
for X, y in test_loader:
    X_adv = pgd_whitebox(model, X.cuda(), y.cuda())
";

// Ex) opt = optim.SGD([x_adv]) ... x_adv = x_adv + eta   <- a new tensor each iteration
#[test]
fn setup_over_a_name_the_loop_rebinds_is_not_invariant() {
    let a = run(PGD_OPT);
    assert!(lines_of(&a, "EA701").is_empty(), "{:?}", a.findings);
    let fixed_input = PGD_OPT.replace(
        "        X_pgd = (X_pgd + 0.01 * X_pgd.grad.sign()).detach().requires_grad_(True)\n",
        "        X_pgd.data += 0.01 * X_pgd.grad.sign()\n",
    );
    let a = run(&fixed_input);
    assert_eq!(lines_of(&a, "EA701"), vec![7], "{:?}", a.findings);
}

/// Tiling satellite rasters: the listing helper only reports each file's size.
const SIZES: &str = "import os
import humanfriendly
import magic
import numpy as np
from PIL import Image

def get_tif_paths(image_path):
    tif_paths = []
    for fn in os.listdir(image_path):
        if fn.endswith('.tif'):
            tif_path = os.path.join(image_path, fn)
            print(humanfriendly.format_size(os.path.getsize(tif_path)))
            tif_paths.append(tif_path)
    return tif_paths

def main():
    for tif_path in get_tif_paths('rasters'):
        tiles = np.asarray(Image.open(tif_path))
        np.save(tif_path + '.npy', tiles)

main()
";

// Ex) humanfriendly.format_size(os.path.getsize(path))   <- a number, not the file
#[test]
fn a_package_handed_a_fact_about_a_file_does_no_work_on_it() {
    let a = run(SIZES);
    assert_eq!(lines_of(&a, "EA602"), vec![17], "{:?}", a.findings);
    // handed the file itself, the package reads it
    let read = SIZES.replace(
        "print(humanfriendly.format_size(os.path.getsize(tif_path)))",
        "print(magic.from_file(tif_path))",
    );
    assert_eq!(lines_of(&run(&read), "EA602"), vec![9, 17]);
}

/// OGB's link prediction: batches of edge indices drawn from a DataLoader over a range.
const INDEX_LOADER: &str = "import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
model = GCN(4096, 256).to(device)
predictor = LinkPredictor(256, 1).to(device)
optimizer = torch.optim.Adam(list(model.parameters()) + list(predictor.parameters()))
for epoch in range(400):
    for perm in DataLoader(range(pos_train_edge.size(0)), 64 * 1024, shuffle=True):
        h = model(x, adj)
        edge = pos_train_edge[perm].t()
        loss = -torch.log(predictor(h[edge[0]], h[edge[1]]) + 1e-15).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) for perm in DataLoader(range(n), batch_size): edge = edges[perm]   <- integers, not samples
#[test]
fn a_loader_over_indices_needs_no_workers_pinning_or_hoisting() {
    let a = run(INDEX_LOADER);
    for rule in ["EA101", "EA102", "EA103", "EA701"] {
        assert!(lines_of(&a, rule).is_empty(), "{rule}: {:?}", a.findings);
    }
    // over a dataset it is a loader like any other
    let samples = INDEX_LOADER.replace("range(pos_train_edge.size(0))", "edge_dataset");
    let a = run(&samples);
    assert_eq!(lines_of(&a, "EA101"), vec![9], "{:?}", a.findings);
    // (built in the step loop's own header, it is built once per pass, not every step: no
    // loop-invariant setup in the step loop, seventeenth session)
    assert!(lines_of(&a, "EA701").is_empty(), "{:?}", a.findings);
}

/// FixMatch-style training: each loader is restarted whenever its iterator runs out.
const RESTARTED: &str = "import torch
from torch.utils.data import DataLoader

def train_loop(model, optimizer, labeled_loader, total_steps):
    labeled_iter = iter(labeled_loader)
    for step in range(total_steps):
        try:
            images, targets = next(labeled_iter)
        except StopIteration:
            labeled_iter = iter(labeled_loader)
            images, targets = next(labeled_iter)
        loss = model(images.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

model = WideResNet().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.03)
labeled_loader = DataLoader(labeled_dataset, batch_size=64, num_workers=4, pin_memory=True)
train_loop(model, optimizer, labeled_loader, 2 ** 20)
";

// Ex) except StopIteration: it = iter(loader)   <- new workers at every restart
#[test]
fn a_loader_restarted_in_the_step_loop_restarts_its_workers() {
    let a = run(RESTARTED);
    assert_eq!(lines_of(&a, "EA103"), vec![19], "{:?}", a.findings);
}

/// A script that picks CUDA when it can, prints the choice and never uses it.
const PRINTED_DEVICE: &str = "import torch
import torch.nn as nn

device = 'cuda:0' if torch.cuda.is_available() else 'cpu'
print(device)
model = nn.LSTM(1, 512, batch_first=True)
head = nn.Linear(512, 1)
optimizer = torch.optim.Adam(list(model.parameters()) + list(head.parameters()))
for epoch in range(100):
    for x, y in loader:
        out, _ = model(x)
        loss = ((head(out[:, -1]) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f'loss {loss.item()}')
";

// Ex) device = 'cuda' if ... else 'cpu'; print(device)   <- nothing moves: a CPU script
#[test]
fn a_device_only_printed_puts_nothing_on_the_gpu() {
    let a = run(PRINTED_DEVICE);
    for rule in ["EA201", "EA203", "EA301"] {
        assert!(lines_of(&a, rule).is_empty(), "{rule}: {:?}", a.findings);
    }
    let used = PRINTED_DEVICE.replace("out, _ = model(x)", "out, _ = model(x.to(device))");
    assert_eq!(lines_of(&run(&used), "EA301"), vec![16]);
}

/// DGL's node-classification tutorial: a two-layer GCN built once for the CPU and again for
/// the GPU, sized by the graph's feature width.
const DGL_GCN: &str = "import dgl
import torch
import torch.nn as nn
import torch.nn.functional as F
from dgl.nn import GraphConv

class GCN(nn.Module):
    def __init__(self, in_feats, h_feats, num_classes):
        super().__init__()
        self.conv1 = GraphConv(in_feats, h_feats)
        self.conv2 = GraphConv(h_feats, num_classes)

    def forward(self, g, x):
        return self.conv2(g, F.relu(self.conv1(g, x)))

model = GCN(g.ndata['feat'].shape[1], 16, dataset.num_classes)

def train(g, model):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for e in range(200):
        logits = model(g, g.ndata['feat'])
        loss = F.cross_entropy(logits[train_mask], labels[train_mask])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

g = g.to('cuda')
model = GCN(g.ndata['feat'].shape[1], 16, dataset.num_classes).to('cuda')
train(g, model)
";

// Ex) GraphConv(g.ndata['feat'].shape[1], 16), built twice alike   <- 0.1 M parameters
#[test]
fn a_small_graph_network_built_twice_alike_is_sized() {
    let a = run(DGL_GCN);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    // built with other sizes the second time, it has no single size
    let other = DGL_GCN.replace(
        "model = GCN(g.ndata['feat'].shape[1], 16, dataset.num_classes).to('cuda')",
        "model = GCN(g.ndata['feat'].shape[1], 4096, dataset.num_classes).to('cuda')",
    );
    assert_eq!(lines_of(&run(&other), "EA201"), vec![20]);
}

/// build-nanogpt's compile switch, declared with `BooleanOptionalAction` and no default.
const BOOL_OPTIONAL: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--compile', action=argparse.BooleanOptionalAction)
args = parser.parse_args()
model = GPT(GPTConfig())
model.to('cuda')
use_compile = args.compile
if use_compile:
    model = torch.compile(model)
optimizer = torch.optim.AdamW(model.parameters())
for step in range(19073):
    x, y = train_loader.next_batch()
    with torch.autocast(device_type='cuda', dtype=torch.bfloat16):
        logits, loss = model(x.to('cuda'), y.to('cuda'))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) add_argument('--compile', action=argparse.BooleanOptionalAction)   <- None: not compiled
#[test]
fn a_boolean_optional_switch_without_a_default_is_off() {
    let a = run(BOOL_OPTIONAL);
    assert_eq!(lines_of(&a, "EA203"), vec![8], "{:?}", a.findings);
    let on = BOOL_OPTIONAL.replace(
        "action=argparse.BooleanOptionalAction)",
        "action=argparse.BooleanOptionalAction, default=True)",
    );
    assert!(lines_of(&run(&on), "EA203").is_empty());
}

/// CMGAN's trainer: the discriminator's labels and the STFT window, built on the CPU each step
/// and moved to the process's GPU by its ordinal.
const ORDINAL: &str = "import torch

class Trainer:
    def __init__(self, model, loader, gpu_id):
        self.model = model.to(gpu_id)
        self.loader = loader
        self.gpu_id = gpu_id
        self.opt = torch.optim.Adam(self.model.parameters())

    def train_step(self, batch):
        x = batch[0].to(self.gpu_id)
        one_labels = torch.ones(64).to(self.gpu_id)
        spec = torch.stft(x, 400, 100, window=torch.hamming_window(400).to(self.gpu_id), return_complex=True)
        loss = ((self.model(spec) - one_labels) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss

    def train(self):
        for epoch in range(10):
            for batch in self.loader:
                self.train_step(batch)

Trainer(Net(), loader, 0).train()
";

// Ex) torch.hamming_window(n).to(self.gpu_id)   <- built on the CPU every step
#[test]
fn a_constant_moved_to_a_device_ordinal_every_step_is_reported() {
    let a = run(ORDINAL);
    assert_eq!(lines_of(&a, "EA304"), vec![12, 13], "{:?}", a.findings);
}

/// A colorization script whose training is switched off: its trainer's methods run only from
/// the dead branch, and they read the module's loaders.
const SWITCHED_OFF_TRAINER: &str = "import torch
from torch.utils.data import DataLoader

train_dataloader = DataLoader(train_dataset, batch_size=48, shuffle=True)

class Trainer:
    def train(self, model, optimizer):
        model.train()
        total = 0
        for inputs, gts in train_dataloader:
            inputs, gts = inputs.cuda(), gts.cuda()
            loss = torch.nn.functional.mse_loss(model(inputs), gts)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total

model = Net().cuda()
trainer = Trainer()
run = False
if run == True:
    for epoch in range(100):
        optimizer = torch.optim.Adam(model.parameters())
        trainer.train(model=model, optimizer=optimizer)
";

// Ex) def train(self, model): model.train() ...   <- names itself, is called by nothing live
#[test]
fn a_method_reached_only_from_a_dead_branch_does_not_run() {
    let a = run(SWITCHED_OFF_TRAINER);
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    let on = SWITCHED_OFF_TRAINER.replace("run = False", "run = True");
    let a = run(&on);
    assert_eq!(lines_of(&a, "EA301"), vec![16], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA101"), vec![4], "{:?}", a.findings);
}

/// Attention-MIL: each bag set is loaded whole, as one batch, to build the bags.
const WHOLE_BATCH: &str = "import torch
import torch.utils.data as data_utils

tumor_loader = data_utils.DataLoader(tumor_set, batch_size=len(tumor_set), shuffle=False)
bags = Bags(tumor_loader)
loader = data_utils.DataLoader(bags, batch_size=1, shuffle=True)
model = Attention().cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(100):
    for data, label in loader:
        loss = model(data.cuda(), label.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) DataLoader(ds, batch_size=len(ds))   <- one batch: no stream of copies to overlap
#[test]
fn a_loader_whose_batch_is_its_whole_dataset_needs_no_pinning() {
    let a = run(WHOLE_BATCH);
    assert_eq!(lines_of(&a, "EA102"), vec![6], "{:?}", a.findings);
}

/// pix2pix's per-epoch report, printed at the last batch.
const LAST_BATCH: &str = "import torch

model = Generator().cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(200):
    for batch, (x, y) in enumerate(train_dl, start=1):
        loss = torch.nn.functional.l1_loss(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if batch == len(train_dl):
            print(f'[{epoch}] L1 loss: {loss.item(): .4f}')
";

// Ex) if batch == len(train_dl): print(loss.item())   <- once per epoch
#[test]
fn a_read_at_the_last_batch_runs_once_per_epoch() {
    let a = run(LAST_BATCH);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA504").is_empty(), "{:?}", a.findings);
    let every = LAST_BATCH.replace("if batch == len(train_dl):", "if batch:");
    assert_eq!(lines_of(&run(&every), "EA301"), vec![12]);
}

/// CS224N's translation assignment: docopt's usage text declares `--cuda`, off unless given.
const DOCOPT: &str = "\"\"\"
Usage:
    run.py train --train-src=<file> [options]

Options:
    --cuda                                  use GPU
    --batch-size=<int>                      batch size [default: 32]
\"\"\"
import torch
from docopt import docopt

def train(args):
    device = torch.device('cuda:0' if args['--cuda'] else 'cpu')
    model = NMT(embed_size=256, hidden_size=256)
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(30):
        for src, tgt in batch_iter(train_data, batch_size=int(args['--batch-size'])):
            loss = -model(src, tgt).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            cum_loss = loss.item()

if __name__ == '__main__':
    args = docopt(__doc__)
    train(args)
";

// Ex) device = 'cuda' if args['--cuda'] else 'cpu'   <- `--cuda` is false unless given
#[test]
fn a_docopt_flag_is_off_unless_given() {
    let a = run(DOCOPT);
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    let on = DOCOPT.replace(
        "--cuda                                  use GPU",
        "--cuda    use GPU [default: True]",
    );
    let a = run(&on);
    assert_eq!(lines_of(&a, "EA301"), vec![23], "{:?}", a.findings);
}

/// CommonLit's text building, with tqdm's progress bar over pandas.
const PROGRESS_APPLY: &str = "import pandas as pd
from tqdm import tqdm

tqdm.pandas()
df = pd.read_csv('summaries.csv')
df['full_text'] = df.progress_apply(lambda r: r['prompt'] + ' [SEP] ' + r['text'], axis=1)
df.to_csv('full.csv')
";

// Ex) df.progress_apply(f, axis=1)   <- `apply` with a progress bar
#[test]
fn progress_apply_by_row_is_a_row_loop() {
    let a = run(PROGRESS_APPLY);
    assert_eq!(lines_of(&a, "EA601"), vec![6], "{:?}", a.findings);
}

/// A transformer benchmark that casts its model to a dtype an imported parser gives.
const MODEL_DTYPE: &str = "import argparse
import torch
from transformers import AutoModelForCausalLM
from bench import parse_dtype

parser = argparse.ArgumentParser()
parser.add_argument('--dtype', default='bf16')
args = parser.parse_args()

def finalize(model, device, dtype):
    return model.eval().to(device).to(dtype)

dtype = parse_dtype(args.dtype)
model = AutoModelForCausalLM.from_pretrained('gpt2')
model = finalize(model, 'cuda', dtype)
with torch.no_grad():
    for batch in batches:
        out = model(batch.to('cuda'))
";

// Ex) model.to(dtype) with dtype = parse_dtype(args.dtype)   <- precision unknown: no TF32 claim
#[test]
fn a_model_cast_to_a_dtype_the_file_does_not_show_has_unknown_precision() {
    let a = run(MODEL_DTYPE);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
    // a batch cast to a dtype is no model cast
    let batch = MODEL_DTYPE
        .replace(
            "return model.eval().to(device).to(dtype)",
            "return model.eval().to(device)",
        )
        .replace(
            "out = model(batch.to('cuda'))",
            "out = model(batch.to('cuda').to(dtype))",
        );
    assert_eq!(lines_of(&run(&batch), "EA202"), vec![11]);
    // nor is a model built after 16-bit became the default tensor type fp32
    let half = MODEL_DTYPE
        .replace(
            "model = finalize(model, 'cuda', dtype)",
            "model = model.to('cuda')",
        )
        .replace(
            "model = AutoModelForCausalLM",
            "torch.set_default_tensor_type(torch.cuda.HalfTensor)\nmodel = AutoModelForCausalLM",
        );
    assert!(lines_of(&run(&half), "EA202").is_empty());
}

/// A lane-detection demo: the predicted mask is painted onto the frame in place and shown.
const PAINTED: &str = "import cv2
import numpy as np
import torch

model = LaneNet().to('cuda').eval()
cap = cv2.VideoCapture('road.mp4')
while True:
    ok, frame = cap.read()
    if not ok:
        break
    x = torch.from_numpy(frame).permute(2, 0, 1).float().unsqueeze(0).to('cuda')
    with torch.no_grad():
        output = model(x)
    mask = output.squeeze().cpu().numpy()
    lane = mask > 0.5
    frame[lane] = (0, 0, 255)
    cv2.imshow('lanes', frame)
    if cv2.waitKey(1) & 0xFF == ord('q'):
        break
";

// Ex) frame[mask > 0.5] = red; cv2.imshow(frame)   <- the read is what the loop shows
#[test]
fn a_read_painted_into_the_frame_shown_is_the_loops_product() {
    let a = run(PAINTED);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    let unused = PAINTED.replace("    frame[lane] = (0, 0, 255)\n", "    print(lane.sum())\n");
    assert_eq!(lines_of(&run(&unused), "EA301"), vec![14]);
}

/// A loader builder whose worker count is the parameter's default unless one of two branches
/// sets none.
const PARAM_THEN_BRANCHES: &str = "import torch
from torch.utils.data import DataLoader

def make_loader(ds, workers=8):
    if debug:
        workers = 0
    if on_windows:
        workers = 0
    return DataLoader(ds, batch_size=64, num_workers=workers, pin_memory=True)

model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = make_loader(train_set)
for epoch in range(10):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
";

// Ex) def make_loader(ds, workers=8): if debug: workers = 0   <- 8 may still reach the loader
#[test]
fn a_parameter_rebound_only_in_branches_keeps_its_own_value_too() {
    let a = run(PARAM_THEN_BRANCHES);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    // rebound where it always runs, the parameter's value no longer reaches the loader
    let always = PARAM_THEN_BRANCHES.replace(
        "    if on_windows:\n        workers = 0\n",
        "    workers = 0\n",
    );
    assert_eq!(lines_of(&run(&always), "EA101"), vec![8]);
}

/// A GPT-2 sampler that picks a device, prints it and never moves anything there; its model's
/// code builds positions on the input's own device.
const KEYWORD_ONLY: &str = "import torch
import torch.nn as nn

class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(50257, 768)
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(768, 12) for _ in range(12)])

    def forward(self, idx):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.wte(idx) + pos
        for block in self.blocks:
            x = block(x)
        return x

device = 'cpu'
if torch.cuda.is_available():
    device = 'cuda'
print(f'using device: {device}')
model = GPT()
model.eval()
with torch.no_grad():
    for prompt in prompts:
        out = model(prompt)
";

// Ex) device = 'cuda' ...; torch.arange(..., device=idx.device)   <- a keyword, not a read
#[test]
fn a_keyword_named_like_the_device_does_not_read_it() {
    let a = run(KEYWORD_ONLY);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
    let moved = KEYWORD_ONLY.replace("model = GPT()\n", "model = GPT().to(device)\n");
    assert_eq!(lines_of(&run(&moved), "EA202"), vec![21]);
}
