//! The eleventh accuracy round: shapes from the blind waves g179– that the engine read wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A signal regressor whose collate stacks the samples and moves the batch to the GPU itself.
const COLLATE_ON_GPU: &str = "import torch
from torch.utils.data import DataLoader
from data import SignalDataset
from model import ResNet1d

device = torch.device('cuda')

def collate(batch):
    xs = torch.stack([x for x, _ in batch])
    ys = torch.stack([y for _, y in batch])
    return xs.to(device), ys.to(device)

train_loader = DataLoader(SignalDataset('train.h5'), shuffle=True, batch_size=64, collate_fn=collate)
model = ResNet1d(12, 512).to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for x, y in train_loader:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) def collate(batch): ...; return xs.to(device), ys.to(device)
#[test]
fn a_collate_that_builds_its_batch_on_the_gpu_needs_no_workers_or_pinning() {
    let a = run(COLLATE_ON_GPU);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    // the same collate building CPU tensors leaves the loading to the training process
    let cpu = COLLATE_ON_GPU.replace("xs.to(device), ys.to(device)", "xs, ys");
    let a = run(&cpu);
    assert_eq!(lines_of(&a, "EA101"), vec![13]);
    assert_eq!(lines_of(&a, "EA102"), vec![13]);
}
