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
