//! A model small enough to be launch-bound gains nothing from mixed precision, TF32, cuDNN
//! autotuning or pinned copies.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::rule_ids as rules;

fn script(fc: &str) -> String {
    format!(
        "import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv1 = nn.Conv2d(3, 6, 5)\n        self.pool = nn.MaxPool2d(2, 2)\n        self.conv2 = nn.Conv2d(6, 16, 5)\n        self.fc1 = {fc}\n        self.fc2 = nn.Linear(120, 10)\n    def forward(self, x):\n        return self.fc2(self.fc1(self.pool(self.conv2(self.pool(self.conv1(x)))).flatten(1)))\n\ndevice = torch.device('cuda')\nmodel = Net().to(device)\nopt = torch.optim.SGD(model.parameters(), lr=0.01)\nloader = DataLoader(train_set, batch_size=64, num_workers=2)\nfor epoch in range(10):\n    for x, y in loader:\n        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n"
    )
}

#[test]
fn a_lenet_sized_model_gets_no_precision_autotune_or_pinning_advice() {
    let r = rules(&script("nn.Linear(16 * 5 * 5, 120)"));
    for rule in ["EA201", "EA202", "EA204", "EA102"] {
        assert!(!r.iter().any(|x| x == rule), "{rule} in {r:?}");
    }
    // compiling still fuses a launch-bound step's kernels
    assert!(r.iter().any(|x| x == "EA203"), "{r:?}");
}

#[test]
fn a_large_or_unsized_model_keeps_the_advice() {
    let big = rules(&script("nn.Linear(16 * 5 * 5, 100000)"));
    assert!(big.iter().any(|x| x == "EA201"), "{big:?}");
    let unknown = rules(&script("nn.Linear(hidden, 120)"));
    assert!(unknown.iter().any(|x| x == "EA201"), "{unknown:?}");
}

#[test]
fn layer_sizes_by_keyword_and_inline_sequences_are_counted() {
    // `nn.Conv2d(3, 6, kernel_size=5)`: the kernel by keyword
    let r = rules(
        &script("nn.Linear(16 * 5 * 5, 120)")
            .replace("nn.Conv2d(3, 6, 5)", "nn.Conv2d(3, 6, kernel_size=5)"),
    );
    assert!(!r.iter().any(|x| x == "EA201"), "{r:?}");
    // an MLP built on the spot: 93·64 + 64 + 64 + 1 = 6,081 parameters
    let mlp = "import torch\nimport torch.nn as nn\ndevice = torch.device('cuda')\nmodel = nn.Sequential(nn.Linear(93, 64, bias=True), nn.ReLU(), nn.Linear(64, 1)).to(device)\nopt = torch.optim.Adam(model.parameters())\nfor x, y in loader:\n    loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))\n    loss.backward()\n    opt.step()\n";
    let r = rules(mlp);
    for rule in ["EA201", "EA202"] {
        assert!(!r.iter().any(|x| x == rule), "{rule} in {r:?}");
    }
    // the same shape at width 4096 is no toy
    let wide = mlp
        .replace("nn.Linear(93, 64, bias=True)", "nn.Linear(4096, 4096)")
        .replace("nn.Linear(64, 1)", "nn.Linear(4096, 1)");
    let r = rules(&wide);
    for rule in ["EA201", "EA202"] {
        assert!(r.iter().any(|x| x == rule), "{rule} not in {r:?}");
    }
}

/// The MNIST MLP of many tutorials: 784·512 + 512 + 512·512 + 512 + 512·10 + 10 = 669,706
/// parameters. On an H200 at batch 1024 a step of that size waits on kernel launches: TF32
/// changed nothing and bf16 autocast made it slower (BENCHMARKS.md, "Where the size exemptions
/// stand"); pinned copies are another matter and keep the 100,000 bar.
const MNIST_MLP: &str = "import torch
import torch.nn as nn
from torch.utils.data import DataLoader

device = torch.device('cuda')
model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(train_set, batch_size=1024, num_workers=2)
for epoch in range(10):
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
";

#[test]
fn a_model_under_a_million_parameters_gets_no_arithmetic_mode_advice() {
    let r = rules(MNIST_MLP);
    for rule in ["EA201", "EA202"] {
        assert!(!r.iter().any(|x| x == rule), "{rule} in {r:?}");
    }
    // pinned copies are judged by the 100,000-parameter bar, which this model is above
    assert!(r.iter().any(|x| x == "EA102"), "{r:?}");
    // at width 2048 (5.8 M parameters) the multiplies are what a step waits for
    let wide = MNIST_MLP
        .replace("nn.Linear(784, 512)", "nn.Linear(784, 2048)")
        .replace("nn.Linear(512, 512)", "nn.Linear(2048, 2048)")
        .replace("nn.Linear(512, 10)", "nn.Linear(2048, 10)");
    let r = rules(&wide);
    for rule in ["EA201", "EA202"] {
        assert!(r.iter().any(|x| x == rule), "{rule} not in {r:?}");
    }
}
