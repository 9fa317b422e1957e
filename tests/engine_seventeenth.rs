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

/// A BiDAF reader on SQuAD: batches of word and character ids from a dataset of another module.
const SQUAD_READER: &str = "import torch
import torch.utils.data as data
from util import SQuAD, collate_fn

device = torch.device('cuda')
model = BiDAF(word_vectors).to(device)
optimizer = torch.optim.Adadelta(model.parameters())
train_dataset = SQuAD(args.train_record_file, args.use_squad_v2)
train_loader = data.DataLoader(train_dataset, batch_size=64, shuffle=True, num_workers=4, collate_fn=collate_fn)
for epoch in range(30):
    for cw_idxs, cc_idxs, qw_idxs, qc_idxs, y1, y2, ids in train_loader:
        log_p1, log_p2 = model(cw_idxs.to(device), qw_idxs.to(device))
        loss = criterion(log_p1, y1.to(device)) + criterion(log_p2, y2.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) train_dataset = SQuAD(args.train_record_file, args.use_squad_v2)
#[test]
fn a_reading_comprehension_dataset_feeds_ids_pinning_cannot_speed() {
    assert!(lines_of(&run(SQUAD_READER), "EA102").is_empty());
    let images = SQUAD_READER.replace("SQuAD(", "CocoCaptions(");
    assert_eq!(lines_of(&run(&images), "EA102"), vec![9]);
}

/// MuseMorphose: a dataset class named for the transformer it feeds, and a VAE built elsewhere.
const DATASET_NAMED_FOR_MODEL: &str = "import torch
from model.musemorphose import MuseMorphose
from dataloader import REMIFullSongTransformerDataset

device = torch.device('cuda')
dset = REMIFullSongTransformerDataset(data_dir, vocab)
model = MuseMorphose(enc_n_layer, enc_n_head).to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for batch in loader:
        loss = model(batch['enc_input'].to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) dset = REMIFullSongTransformerDataset(...)   <- names the data, not the model
#[test]
fn a_data_class_named_for_a_model_names_no_model() {
    assert!(lines_of(&run(DATASET_NAMED_FOR_MODEL), "EA202").is_empty());
    let transformer = DATASET_NAMED_FOR_MODEL.replace(
        "model = MuseMorphose(enc_n_layer, enc_n_head)",
        "model = MusicTransformer(enc_n_layer, enc_n_head)",
    );
    assert_eq!(lines_of(&run(&transformer), "EA202"), vec![7]);
}

/// QANet's evaluation: the answer span's ends scored by an outer product of probabilities.
const SCORING_MATMUL: &str = "import torch
from models import QANet

device = torch.device('cuda')
model = QANet(word_mat, char_mat).to(device)
optimizer = torch.optim.Adam(model.parameters())

def test(model, dataset):
    for Cwid, Qwid, y1, y2 in dataset:
        p1, p2 = model(Cwid.to(device), Qwid.to(device))
        outer = torch.matmul(p1.unsqueeze(2), p2.unsqueeze(1))
        spans.append(outer)

for epoch in range(10):
    for Cwid, Qwid, y1, y2 in train_dataset:
        p1, p2 = model(Cwid.to(device), Qwid.to(device))
        loss = criterion(p1, y1.to(device)) + criterion(p2, y2.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    test(model, dev_dataset)
";

// Ex) outer = torch.matmul(p1.unsqueeze(2), p2.unsqueeze(1))   <- scoring, not the model
#[test]
fn a_product_that_scores_outputs_is_not_the_model_arithmetic() {
    assert!(lines_of(&run(SCORING_MATMUL), "EA202").is_empty());
    let in_training = SCORING_MATMUL.replace(
        "        loss = criterion(p1, y1.to(device))",
        "        p1 = torch.matmul(p1, proj)\n        loss = criterion(p1, y1.to(device))",
    );
    assert_eq!(lines_of(&run(&in_training), "EA202"), vec![5]);
}

/// A video diffusion trainer whose `--device` defaults to the CPU, with CUDA's AMP helpers.
const CPU_DEFAULT_WITH_CUDA_AMP: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--device', choices=['cpu', 'cuda'], type=str, default='cpu')
args = vars(parser.parse_args())
device = args['device']
scaler = torch.cuda.amp.GradScaler()
model = UNet3D().to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for x in loader:
        with torch.cuda.amp.autocast():
            loss = model(x.to(device))
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(loss.item())
";

// Ex) device = args["device"] with default="cpu"; scaler = torch.cuda.amp.GradScaler()
#[test]
fn cuda_amp_helpers_in_a_file_placing_work_on_the_cpu_put_nothing_on_the_gpu() {
    let a = run(CPU_DEFAULT_WITH_CUDA_AMP);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA203").is_empty());
    let cuda = CPU_DEFAULT_WITH_CUDA_AMP.replace("default='cpu'", "default='cuda'");
    assert_eq!(lines_of(&run(&cuda), "EA301"), vec![19]);
}

/// GwcNet's disparity export: the test step is decorated by the project's own no-grad wrapper.
const NOGRAD_DECORATOR: &str = "import torch
from utils import make_nograd_func

model = GwcNet(192).cuda()
model.eval()

@make_nograd_func
def test_sample(sample):
    return model(sample['left'].cuda(), sample['right'].cuda())

def test():
    for batch_idx, sample in enumerate(TestImgLoader):
        disp_est = test_sample(sample)
        save(disp_est)

test()
";

// Ex) @make_nograd_func def test_sample(sample): ...
#[test]
fn a_decorator_named_for_no_grad_disables_autograd() {
    assert!(lines_of(&run(NOGRAD_DECORATOR), "EA401").is_empty());
    let plain = NOGRAD_DECORATOR.replace("@make_nograd_func\n", "");
    assert_eq!(lines_of(&run(&plain), "EA401"), vec![11]);
}

/// Federated clients: a loader built in each pass's loop header, and one only counted.
const CLIENT_LOADERS: &str = "import torch
from torch.utils.data import DataLoader

def train_client(model, client_data, epochs=10, batch_size=32):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    device = torch.device('cuda')
    model.to(device)
    total_loss = 0.0
    for epoch in range(epochs):
        for data, target in DataLoader(client_data, batch_size=batch_size, shuffle=True, num_workers=2, pin_memory=True, persistent_workers=True):
            data, target = data.to(device, non_blocking=True), target.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()
            optimizer.step()
    return total_loss / len(DataLoader(client_data, batch_size=batch_size))

for client in clients:
    train_client(model, data[client])
";

// Ex) for data, target in DataLoader(client_data, ...)   /   len(DataLoader(client_data, ...))
#[test]
fn a_loader_in_the_loop_header_or_only_counted_is_not_per_step_work() {
    let a = run(CLIENT_LOADERS);
    assert!(lines_of(&a, "EA701").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA101").is_empty());
    assert!(lines_of(&a, "EA102").is_empty());
    // built in the loop body, every step, it is
    let per_step = CLIENT_LOADERS.replace(
        "            optimizer.zero_grad()\n",
        "            probe = DataLoader(client_data, batch_size=1)\n            optimizer.zero_grad()\n",
    );
    assert_eq!(lines_of(&run(&per_step), "EA701"), vec![12]);
}

/// An Accelerate demo choosing between a timm and a torchvision model by a flag, off by default.
const PREPARED_BUILD_SWITCH: &str = "import argparse
import timm
import torch
import torchvision
from accelerate import Accelerator

parser = argparse.ArgumentParser()
parser.add_argument('--timm', action='store_true')
args = parser.parse_args()
accelerator = Accelerator()
if args.timm:
    model = timm.create_model('resnet18', num_classes=10)
else:
    model = torchvision.models.resnet18(num_classes=10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for epoch in range(10):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        accelerator.backward(loss)
        optimizer.step()
";

// Ex) if args.timm: model = timm.create_model(...) else: model = torchvision.models.resnet18(...)
#[test]
fn a_prepared_model_is_anchored_where_it_is_built_as_shipped() {
    assert_eq!(lines_of(&run(PREPARED_BUILD_SWITCH), "EA203"), vec![14]);
    let on = PREPARED_BUILD_SWITCH.replace("action='store_true'", "action='store_false'");
    assert_eq!(lines_of(&run(&on), "EA203"), vec![12]);
}

/// DreamBooth: the text encoder is trained only behind a flag that is off.
const DREAMBOOTH_PARAMS: &str = "import argparse
import itertools
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel
from transformers import CLIPTextModel

parser = argparse.ArgumentParser()
parser.add_argument('--train_text_encoder', action='store_true')
args = parser.parse_args()
accelerator = Accelerator()
text_encoder = CLIPTextModel.from_pretrained(name, subfolder='text_encoder')
unet = UNet2DConditionModel.from_pretrained(name, subfolder='unet')
params_to_optimize = (
    itertools.chain(unet.parameters(), text_encoder.parameters()) if args.train_text_encoder else unet.parameters()
)
optimizer = torch.optim.AdamW(params_to_optimize, lr=5e-6)
unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
if not args.train_text_encoder:
    text_encoder.to(accelerator.device)
for epoch in range(10):
    for batch in loader:
        loss = unet(batch['x'], text_encoder(batch['ids'])[0])
        optimizer.zero_grad()
        accelerator.backward(loss)
        optimizer.step()
";

// Ex) params_to_optimize = chain(unet..., text_encoder...) if args.train_text_encoder else unet.parameters()
#[test]
fn parameters_chosen_by_a_flag_off_as_shipped_train_only_the_other_model() {
    assert_eq!(lines_of(&run(DREAMBOOTH_PARAMS), "EA203"), vec![13]);
}

/// A ControlNet trainer's validation preview over the first four images of a folder.
const PREVIEW: &str = "import torch
from PIL import Image

device = torch.device('cuda')
model = Net().to(device)

@torch.no_grad()
def validate():
    sample_files = list(cond_dir.glob('*.png'))[:4]
    for sample_file in sample_files:
        cond_img = Image.open(sample_file).convert('RGB')
        latents = model(to_tensor(cond_img).to(device))
        outputs.append(latents[0].cpu().numpy())

for step in range(steps):
    validate()
";

// Ex) sample_files = list(cond_dir.glob("*.png"))[:4] ... Image.open(sample_file)
#[test]
fn a_preview_over_a_few_sliced_items_decodes_a_few_images() {
    assert!(lines_of(&run(PREVIEW), "EA502").is_empty());
    let all = PREVIEW.replace("[:4]", "");
    assert_eq!(lines_of(&run(&all), "EA502"), vec![11]);
}

/// A CIFAR trainer choosing its loaders by an integer option whose default is written as a string.
const STRING_INT_DEFAULT: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('-ct', '--cifar-type', default='10', type=int)
args = parser.parse_args()
if args.cifar_type == 10:
    loader = torch.utils.data.DataLoader(cifar10, batch_size=128, num_workers=2)
else:
    loader = torch.utils.data.DataLoader(cifar100, batch_size=128, num_workers=2)
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) parser.add_argument('--cifar-type', default='10', type=int) ... if args.cifar_type == 10:
#[test]
fn a_string_default_of_an_int_option_is_the_integer() {
    assert_eq!(lines_of(&run(STRING_INT_DEFAULT), "EA102"), vec![8]);
    let hundred = STRING_INT_DEFAULT.replace("default='10'", "default='100'");
    assert_eq!(lines_of(&run(&hundred), "EA102"), vec![10]);
}

/// A segmentation demo colouring each mask of a batch with masked writes.
const MASKED_WRITES: &str = "import numpy as np
import torch

output = torch.sigmoid(model(image)).cpu().numpy()
for i in range(len(output)):
    viz = np.zeros((size, size, 3))
    for c in range(output.shape[1]):
        viz[np.where(output[i, c] > 0)] = [0, 255, 255]
    save(viz)
";

// Ex) viz_mask_bgr[np.where(output[i, c] > 0)] = [0, 255, 255]
#[test]
fn a_masked_write_per_iteration_is_not_element_wise() {
    assert!(lines_of(&run(MASKED_WRITES), "EA603").is_empty());
    let elements = MASKED_WRITES.replace("viz[np.where(output[i, c] > 0)]", "viz[i, c]");
    assert_eq!(lines_of(&run(&elements), "EA603"), vec![5]);
}

/// Inference over NIfTI volumes, each prediction written out as a volume.
const NIFTI_OUT: &str = "import nibabel as nib
import numpy as np
import torch

device = torch.device('cuda')
model = AE().to(device)
model.eval()
with torch.no_grad():
    for p in paths:
        image = torch.FloatTensor(nib.load(p).get_fdata()).unsqueeze(0).to(device)
        out_img = torch.squeeze(model(image)).cpu().numpy()
        nib_img = nib.Nifti1Image(out_img, np.eye(4))
        nib_img.to_filename(out_dir + p)
";

// Ex) nib.Nifti1Image(out_img, np.eye(4)).to_filename(path)
#[test]
fn a_volume_written_out_is_the_loop_product() {
    assert!(lines_of(&run(NIFTI_OUT), "EA301").is_empty());
    let kept = NIFTI_OUT.replace(
        "        nib_img.to_filename(out_dir + p)\n",
        "        volumes.append(nib_img)\n",
    );
    assert_eq!(lines_of(&run(&kept), "EA301"), vec![11]);
}

/// DenseFusion's evaluation: host arrays moved back to the GPU before the distance is read.
const MOVED_BACK: &str = "import numpy as np
import torch

model = PoseNet().cuda()
model.eval()
for i, data in enumerate(testdataloader):
    pred_r, pred_t = model(data[0].cuda())
    pred = np.dot(points, quaternion_matrix(pred_r.view(-1).cpu().numpy()).T)
    target = data[1][0].numpy()
    pred = torch.from_numpy(pred.astype(np.float32)).cuda()
    target = torch.from_numpy(target.astype(np.float32)).cuda()
    dis = torch.mean(torch.norm(pred - target, dim=1)).item()
    results.append(dis)
";

// Ex) pred = torch.from_numpy(pred).cuda() ... torch.mean(torch.norm(pred - target)).item()
#[test]
fn a_name_rebound_to_a_device_copy_is_no_longer_a_host_value() {
    assert_eq!(lines_of(&run(MOVED_BACK), "EA301"), vec![8, 12]);
}

/// DreamBooth's class-image sampler: a loader over a dataset of prompts.
const PROMPTS: &str = "import torch
from diffusers import StableDiffusionPipeline

device = torch.device('cuda')
pipeline = StableDiffusionPipeline.from_pretrained(name).to(device)
sample_dataset = PromptDataset(args.class_prompt, num_new_images)
sample_dataloader = torch.utils.data.DataLoader(sample_dataset, batch_size=4)
for example in sample_dataloader:
    images = pipeline(example['prompt']).images
    for i, image in enumerate(images):
        image.save(f'{i}.jpg')
";

// Ex) sample_dataloader = DataLoader(PromptDataset(args.class_prompt, n), batch_size=4)
#[test]
fn a_loader_over_prompts_has_nothing_to_pin() {
    assert!(lines_of(&run(PROMPTS), "EA102").is_empty());
    let images = PROMPTS.replace("PromptDataset(", "ImageDataset(");
    assert_eq!(lines_of(&run(&images), "EA102"), vec![7]);
}
