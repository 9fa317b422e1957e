//! The seventeenth accuracy round: shapes from the blind waves g355– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A continual-learning driver: one evaluation pass per task, handed to an imported object.
const TASK_PASSES: &str = "import numpy as np
import torch

acc = np.zeros((n_tasks, n_tasks), dtype=np.float32)
for t in range(n_tasks):
    appr.train(t, data[t]['train loader'])
    for u in range(t + 1):
        test_loss, test_acc = appr.eval(u, data[u]['test loader'])
        acc[t, u] = test_acc
";

// Ex) for u in range(t + 1): test_loss, test_acc = appr.eval(u, data[u]['test loader'])
#[test]
fn a_loop_handing_passes_to_an_object_is_not_element_wise() {
    assert!(lines_of(&run(TASK_PASSES), "EA603").is_empty());
    // an element computed in the inner loop is element-wise work again (the outer loop still
    // hands a training pass on)
    let elementwise = TASK_PASSES.replace(
        "        test_loss, test_acc = appr.eval(u, data[u]['test loader'])\n",
        "        test_acc = scores[u] * 2.0\n",
    );
    assert_eq!(lines_of(&run(&elementwise), "EA603"), vec![7]);
}

/// A distillation step filling one row block per sample from a cache.
const BLOCK_WRITES: &str = "import numpy as np
import torch

teacher = torch.zeros(n, seq_len, k)
for i in range(n):
    entry = cache.get(i)
    start = lengths[i] - 1
    teacher[i, start : start + width] = entry[:width]
";

// Ex) teacher_ids[i, dist_start : dist_start + aligned_len] = ids_full[:aligned_len].to(device)
#[test]
fn a_loop_writing_a_block_per_iteration_is_not_element_wise() {
    assert!(lines_of(&run(BLOCK_WRITES), "EA603").is_empty());
    let element = BLOCK_WRITES.replace("teacher[i, start : start + width]", "teacher[i, start, 0]");
    assert_eq!(lines_of(&run(&element), "EA603"), vec![5]);
}

/// A lottery-ticket driver: the architecture is an option, `fc1` by default.
const ARCH_SWITCH: &str = "import argparse
import torch
from archs.cifar10 import AlexNet, LeNet5, fc1, resnet

parser = argparse.ArgumentParser()
parser.add_argument('--arch_type', default='fc1', type=str)
args = parser.parse_args()
device = torch.device('cuda')
if args.arch_type == 'fc1':
    model = fc1.fc1().to(device)
elif args.arch_type == 'resnet18':
    model = resnet.resnet18().to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) elif args.arch_type == "resnet18": model = resnet.resnet18().to(device)  <- not as shipped
#[test]
fn a_convolutional_family_built_in_a_dead_branch_builds_nothing() {
    assert!(lines_of(&run(ARCH_SWITCH), "EA204").is_empty());
    let resnet = ARCH_SWITCH.replace("default='fc1'", "default='resnet18'");
    assert_eq!(lines_of(&run(&resnet), "EA204"), vec![12]);
}

/// advertorch's tutorial: a mode option sets a flag in the branches of a switch.
const MODE_FLAG: &str = "import argparse
import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument('--mode', default='cln')
args = parser.parse_args()

if args.mode == 'cln':
    flag_advtrain = False
    nb_epoch = 10
elif args.mode == 'adv':
    flag_advtrain = True
    nb_epoch = 90
else:
    raise ValueError(args.mode)

device = torch.device('cuda')
model = Net().to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(nb_epoch):
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()
        if flag_advtrain:
            print(loss.item())
";

// Ex) if args.mode == "cln": flag_advtrain = False ... if flag_advtrain: print(loss.item())
#[test]
fn a_flag_set_in_the_branches_of_a_switch_holds_the_live_branch_value() {
    let a = run(MODE_FLAG);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA504").is_empty());
    let adv = MODE_FLAG.replace("default='cln'", "default='adv'");
    assert_eq!(lines_of(&run(&adv), "EA301"), vec![29]);
}

/// cleverhans' tutorial: the evaluation builds adversarial examples from the model.
const ADVERSARIAL_EVAL: &str = "import torch

device = torch.device('cuda')
net = CNN().to(device)
net.eval()
correct = 0
for x, y in test_loader:
    x, y = x.to(device), y.to(device)
    x_pgd = projected_gradient_descent(net, x, 0.3, 0.01, 40, float('inf'))
    _, y_pred = net(x).max(1)
    _, y_pred_pgd = net(x_pgd).max(1)
    correct += y_pred_pgd.eq(y).sum()
";

// Ex) x_pgd = projected_gradient_descent(net, x, FLAGS.eps, 0.01, 40, np.inf)
#[test]
fn an_evaluation_building_adversarial_examples_keeps_autograd() {
    assert!(lines_of(&run(ADVERSARIAL_EVAL), "EA401").is_empty());
    let clean = ADVERSARIAL_EVAL.replace(
        "    x_pgd = projected_gradient_descent(net, x, 0.3, 0.01, 40, float('inf'))\n",
        "    x_pgd = x + 0.1\n",
    );
    assert_eq!(lines_of(&run(&clean), "EA401"), vec![7]);
}

/// R-GCN link prediction: loaders over a dataset of triple indices.
const INDEX_SET: &str = "import torch
from torch.utils.data import DataLoader
from rgcn_utils import IndexSet

device = torch.device('cuda')
model = RGCN().to(device)
optimizer = torch.optim.Adam(model.parameters())
train_index_set = IndexSet(num_indices=n_train)
train_loader = DataLoader(dataset=train_index_set, batch_size=1024, shuffle=True)
for epoch in range(100):
    for batch in train_loader:
        triples = torch.index_select(train_triples, 0, batch.to(device))
        loss = model(triples)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) train_index_loader = DataLoader(dataset=IndexSet(num_indices=n), batch_size=b)
#[test]
fn a_loader_over_a_dataset_of_indices_needs_no_workers() {
    let a = run(INDEX_SET);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty());
    // a dataset of samples does
    let samples = INDEX_SET.replace(
        "IndexSet(num_indices=n_train)",
        "TripleSet(num_indices=n_train)",
    );
    assert_eq!(lines_of(&run(&samples), "EA101"), vec![9]);
}

/// NetVLAD's feature cache: encodings written into an HDF5 dataset batch by batch.
const HDF5_CACHE: &str = "import h5py
import torch

device = torch.device('cuda')
model = Net().to(device)
model.eval()
with h5py.File(cache, mode='w') as h5:
    h5feat = h5.create_dataset('features', [n, dim], dtype='float32')
    with torch.no_grad():
        for input, indices in loader:
            enc = model(input.to(device))
            h5feat[indices.numpy(), :] = enc.cpu().numpy()
";

// Ex) h5feat[indices.detach().numpy(), :] = vlad_encoding.detach().cpu().numpy()
#[test]
fn a_copy_stored_into_an_array_on_disk_is_the_loop_product() {
    let a = run(HDF5_CACHE);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    let in_memory = HDF5_CACHE.replace(
        "h5.create_dataset('features', [n, dim], dtype='float32')",
        "torch.zeros(n, dim)",
    );
    assert_eq!(lines_of(&run(&in_memory), "EA301"), vec![12]);
}

/// RAFT-Stereo's validation: metrics computed from a prediction copied to the host.
const HOST_METRICS: &str = "import torch

model = Net().cuda()
model.eval()

@torch.no_grad()
def validate(model):
    epe_list = []
    for val_id in range(len(val_dataset)):
        _, image1, image2, flow_gt, valid_gt = val_dataset[val_id]
        _, flow_pr = model(image1[None].cuda(), image2[None].cuda())
        flow_pr = flow_pr.float().cpu().squeeze(0)
        epe = torch.sum((flow_pr - flow_gt)**2, dim=0).sqrt()
        out = (epe.flatten() > 1.0)
        image_out = out.float().mean().item()
        epe_list.append(image_out)
    return epe_list

validate(model)
";

// Ex) flow_pr = padder.unpad(flow_pr.float()).cpu().squeeze(0) ... out[val].float().mean().item()
#[test]
fn reads_of_values_computed_from_a_host_copy_do_not_wait() {
    let a = run(HOST_METRICS);
    // the copy itself is the one wait
    assert_eq!(lines_of(&a, "EA301"), vec![12], "{:?}", a.findings);
    // computed from the prediction on the device, the read waits again
    let on_device = HOST_METRICS.replace(
        "flow_pr.float().cpu().squeeze(0)",
        "flow_pr.float().squeeze(0)",
    );
    assert_eq!(lines_of(&run(&on_device), "EA301"), vec![15]);
}

/// A triplet loss indexing a loader's counts, never moved, with Python integers.
const HOST_COUNTS: &str = "import torch

device = torch.device('cuda')
model = Net().to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for query, negCounts in loader:
        out = model(query.to(device))
        loss = 0
        for i, negCount in enumerate(negCounts):
            negIx = (torch.sum(negCounts[:i]) + 1).item()
            loss += out[negIx].sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) negIx = (torch.sum(negCounts[:i]) + n).item()
#[test]
fn arithmetic_on_a_batch_value_never_moved_stays_on_the_host() {
    assert!(lines_of(&run(HOST_COUNTS), "EA301").is_empty());
    let moved = HOST_COUNTS.replace("torch.sum(negCounts[:i])", "torch.sum(out[:i])");
    assert_eq!(lines_of(&run(&moved), "EA301"), vec![11]);
}

/// UniMatch: a loss divided by a count read back is still a device tensor.
const DIVIDED_LOSS: &str = "import torch

device = torch.device('cuda')
model = Net().to(device)
optimizer = torch.optim.Adam(model.parameters())
total = 0.0
for epoch in range(10):
    for x, mask in loader:
        x, mask = x.to(device), mask.to(device)
        loss_u = criterion(model(x), mask)
        loss_u = torch.sum(loss_u) / torch.sum(mask != 255).item()
        optimizer.zero_grad()
        loss_u.backward()
        optimizer.step()
        total += loss_u.item()
";

// Ex) loss_u_s1 = torch.sum(loss_u_s1) / torch.sum(ignore_mask_cutmixed1 != 255).item()
#[test]
fn a_value_divided_by_a_number_read_back_is_not_a_host_copy() {
    assert_eq!(lines_of(&run(DIVIDED_LOSS), "EA301"), vec![11, 15]);
}
