//! The twenty-first accuracy round: shapes from the blind waves g491– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// Loaders kept in a dict by phase; a nested function trains and validates one phase at a
/// time, and the test loader is read once after training.
const PHASE_FUNCTION: &str = "import torch
from torch import nn, optim
from torch.utils.data import DataLoader
from torchvision import models


def main(train_dataset, val_dataset, test_dataset, device):
    dataloaders = {
        'train': DataLoader(train_dataset, batch_size=32, shuffle=True, num_workers=4, pin_memory=True),
        'val': DataLoader(val_dataset, batch_size=32, shuffle=False, num_workers=4, pin_memory=True),
        'test': DataLoader(test_dataset, batch_size=32, shuffle=False, num_workers=4, pin_memory=True),
    }
    model = models.resnet50(weights=None).to(device)
    criterion = nn.BCEWithLogitsLoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)

    def run_epoch(phase):
        model.train() if phase == 'train' else model.eval()
        for inputs, labels in dataloaders[phase]:
            inputs = inputs.to(device)
            labels = labels.to(device).float()
            optimizer.zero_grad()
            with torch.set_grad_enabled(phase == 'train'):
                loss = criterion(model(inputs).squeeze(), labels)
                if phase == 'train':
                    loss.backward()
                    optimizer.step()

    for epoch in range(10):
        run_epoch('train')
        run_epoch('val')

    model.eval()
    preds = []
    with torch.no_grad():
        for inputs, labels in dataloaders['test']:
            inputs = inputs.to(device)
            preds.append(model(inputs))
    return preds
";

// Ex) run_epoch('train'); run_epoch('val') every epoch, dataloaders['test'] read once
#[test]
fn a_phase_passed_to_a_function_reads_only_the_loaders_it_names() {
    let report = run(PHASE_FUNCTION);
    assert_eq!(lines_of(&report, "EA103"), vec![9, 10]);
    // a phase the calls never pass is not read per epoch
    let any_phase = PHASE_FUNCTION.replace("run_epoch('val')", "run_epoch(phase_name)");
    assert_eq!(lines_of(&run(&any_phase), "EA103"), vec![9, 10, 11]);
}

// Ex) for inputs, labels in dataloaders['test']: inputs.to(device), every loader pinned
#[test]
fn an_entry_of_a_dict_of_pinned_loaders_gives_pinned_batches() {
    assert_eq!(lines_of(&run(PHASE_FUNCTION), "EA303"), vec![20, 21, 37]);
    let unpinned = PHASE_FUNCTION.replace(
        "shuffle=False, num_workers=4, pin_memory=True),\n    }",
        "shuffle=False, num_workers=4),\n    }",
    );
    assert_eq!(lines_of(&run(&unpinned), "EA303"), vec![20, 21]);
}
