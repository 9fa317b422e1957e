//! The sixth accuracy round: shapes from the blind wave g73–g78 that the engine read wrongly —
//! a loader batch read on the host before it is moved, features collected per window and saved
//! once per video, datasets a helper function returns, a batch rebuilt before its copy, and a
//! padding buffer filled from host rows before its move.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, assert_silent, rule_lines as lines_of};

/// Video feature extraction: the loader's clip is sliced on the host per window, the features
/// of each window collected and saved once per video.
const FEATURES_PER_VIDEO: &str = "import os
import numpy as np
import torch
from pytorch_i3d import InceptionI3d

def run(dataset, save_dir):
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=1, num_workers=4, pin_memory=True)
    dataloaders = {'train': dataloader}
    i3d = InceptionI3d(400, in_channels=3)
    i3d.cuda()
    i3d.train(False)
    with torch.no_grad():
        for phase in ['train']:
            for data in dataloaders[phase]:
                inputs, labels, name = data
                b, c, t, h, w = inputs.shape
                features = []
                for start in range(0, t, 16):
                    ip = torch.from_numpy(inputs.numpy()[:, :, start:start + 16]).cuda(non_blocking=True)
                    features.append(i3d.extract_features(ip).squeeze(0).cpu().numpy())
                np.save(os.path.join(save_dir, name[0]), np.concatenate(features, axis=0))

run(None, 'out')
";

// Ex) for data in dataloaders[phase]: inputs, labels, name = data
//         for start in windows: ip = torch.from_numpy(inputs.numpy()[..., start:end]).cuda()
//                               features.append(net(ip).cpu().numpy())
//         np.save(path, np.concatenate(features))
#[test]
fn host_reads_of_an_unmoved_batch_and_of_features_saved_per_item_are_not_syncs() {
    assert_silent(FEATURES_PER_VIDEO, &["EA301"]);
    // collected over the whole dataset and saved once at the end: a read every step that could
    // wait, still reported
    let collected_for_the_end = FEATURES_PER_VIDEO.replace(
        "                np.save(os.path.join(save_dir, name[0]), np.concatenate(features, axis=0))\n",
        "",
    );
    let a = run(&collected_for_the_end);
    assert_eq!(lines_of(&a, "EA301"), vec![20], "{:?}", a.findings);
    // the batch once moved is a CUDA tensor: its read waits
    let moved = FEATURES_PER_VIDEO.replace(
        "                inputs, labels, name = data\n",
        "                inputs, labels, name = data\n                inputs = inputs.cuda(non_blocking=True)\n",
    );
    let a = run(&moved);
    assert_eq!(lines_of(&a, "EA301"), vec![20], "{:?}", a.findings);
}

/// Features of a whole dataset collected per model and saved once per model: the step loop
/// walks the data, so each read is one per step that could wait.
const FEATURES_PER_MODEL: &str = "import numpy as np
import torch
import torchvision

def extract(models, dataset, device):
    for key in models:
        model = key(pretrained=True).to(device)
        feats = []
        for i in range(len(dataset)):
            image, label = dataset[i]
            features = model(image.unsqueeze(0).to(device))
            feats.append(features.cpu().detach().numpy())
        np.save(key.__name__, np.array(feats))

extract([torchvision.models.resnet18], None, 'cuda')
";

// Ex) for key in models: for i in range(len(ds)): feats.append(model(x).cpu().numpy())
//                        np.save(name, np.array(feats))
#[test]
fn features_of_a_whole_dataset_saved_per_model_are_still_syncs() {
    let a = run(FEATURES_PER_MODEL);
    assert_eq!(lines_of(&a, "EA301"), vec![12], "{:?}", a.findings);
}

const CPU_WITH_CACHE_CLEARING: &str = "import torch
from transformers import T5ForConditionalGeneration

device = 'cpu'

def train(epoch, model, loader, optimizer):
    model.train()
    torch.cuda.empty_cache()
    for batch in loader:
        ids = batch['ids'].to(device)
        loss = model(input_ids=ids, labels=ids).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

model = T5ForConditionalGeneration.from_pretrained('t5-small').to(device)
optimizer = torch.optim.AdamW(model.parameters())
for epoch in range(3):
    train(epoch, model, loader, optimizer)
";

// Ex) device = 'cpu'  # the CUDA line commented out
//     torch.cuda.empty_cache()
#[test]
fn clearing_the_cuda_cache_does_not_put_a_cpu_file_on_the_gpu() {
    assert_silent(CPU_WITH_CACHE_CLEARING, &["EA201", "EA202", "EA203"]);
    // without the CPU device, clearing the cache says the file means CUDA (as before)
    let a = run(&CPU_WITH_CACHE_CLEARING.replace("device = 'cpu'", "device = get_device()"));
    assert_eq!(lines_of(&a, "EA201"), vec![9], "{:?}", a.findings);
}

const DATASETS_FROM_A_HELPER: &str = "import torch
from torch.utils.data import Dataset, DataLoader

class StockDataset(Dataset):
    def __init__(self, X, y):
        self.X = X.to(torch.float32)
        self.y = y

    def __len__(self):
        return len(self.X)

    def __getitem__(self, idx):
        return self.X[idx], self.y[idx]

def process_data():
    x = torch.load('features.pt')
    y = torch.load('targets.pt')
    return StockDataset(x[:800], y[:800]), StockDataset(x[800:], y[800:])

def train():
    train_dataset, valid_dataset = process_data()
    train_loader = DataLoader(train_dataset, batch_size=32, shuffle=True)
    val_loader = DataLoader(valid_dataset, batch_size=32, shuffle=False)
    model = torch.nn.LSTM(16, 64).cuda()
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(10):
        for x, y in train_loader:
            out, _ = model(x.cuda())
            loss = (out[-1, :, 0] - y.cuda()).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        for x, y in val_loader:
            pass

train()
";

// Ex) train_dataset, valid_dataset = process_data()   # returns StockDataset(...), StockDataset(...)
//     train_loader = DataLoader(train_dataset, batch_size=32)
#[test]
fn datasets_a_function_of_the_file_returns_are_followed_to_their_class() {
    assert_silent(DATASETS_FROM_A_HELPER, &["EA101"]);
    // a dataset class whose items cost work keeps the finding
    let decoding = DATASETS_FROM_A_HELPER.replace(
        "        return self.X[idx], self.y[idx]",
        "        return torch.load(f'clip_{idx}.pt'), self.y[idx]",
    );
    let a = run(&decoding);
    assert_eq!(lines_of(&a, "EA101"), vec![22, 23], "{:?}", a.findings);
}

const STACKED_BATCH: &str = "import torch
from torch.utils.data import DataLoader

def train(model, dataset, optimizer, device):
    data_loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=4, pin_memory=True)
    for epoch in range(3):
        for data in data_loader:
            optimizer.zero_grad()
            data = torch.stack(data)
            data = data.transpose(1, 0)
            data = data.to(device)
            loss = model(data, labels=data)[0]
            loss.backward()
            optimizer.step()

train(torch.nn.Linear(4, 4).cuda(), None, None, 'cuda')
";

// Ex) for data in pinned_loader: data = torch.stack(data); data = data.to(device)
#[test]
fn a_batch_rebuilt_before_its_copy_is_not_the_pinned_batch() {
    assert_silent(STACKED_BATCH, &["EA303"]);
    let a = run(&STACKED_BATCH.replace("            data = torch.stack(data)\n", ""));
    assert_eq!(lines_of(&a, "EA303"), vec![10], "{:?}", a.findings);
}

const PADDED_BUFFER: &str = "import torch

def perplexity(model, tokenizer, batches):
    total = 0.0
    for batch in batches:
        ids_list = [tokenizer(x)['input_ids'] for x in batch]
        max_len = max(len(ids) for ids in ids_list)
        input_ids = torch.full((len(batch), max_len), tokenizer.pad_token_id, dtype=torch.long)
        for i, ids in enumerate(ids_list):
            input_ids[i, :len(ids)] = torch.tensor(ids, dtype=torch.long)
        input_ids = input_ids.to(model.device)
        with torch.no_grad():
            out = model(input_ids=input_ids, labels=input_ids)
        total += out.loss.item()
    return total

model = load_model().cuda()
perplexity(model, tok, data)
";

// Ex) input_ids = torch.full((b, n), pad); input_ids[i, :k] = torch.tensor(ids); input_ids.to(dev)
#[test]
fn a_buffer_filled_from_host_rows_before_its_move_is_host_data() {
    assert_silent(PADDED_BUFFER, &["EA304"]);
    // a constant mask built and moved, with no host rows written into it, is still reported
    let a = run(&PADDED_BUFFER.replace(
        "            input_ids[i, :len(ids)] = torch.tensor(ids, dtype=torch.long)\n",
        "            pass\n",
    ));
    assert_eq!(lines_of(&a, "EA304"), vec![8], "{:?}", a.findings);
}

const OWN_TRAINING_ARGUMENTS: &str = "import torch
from transformers import AutoModelForSeq2SeqLM
from .trainer import Trainer
from .trainer_utils import TrainingArguments

def main(config):
    model = AutoModelForSeq2SeqLM.from_pretrained('facebook/bart-base')
    training_args = TrainingArguments(
        device='cuda',
        num_epochs=config['epochs'],
        f16_precision=config['f16_precision'],
    )
    trainer = Trainer(model=model, args=training_args)
    trainer.train()

main({})
";

// Ex) from .trainer_utils import TrainingArguments   # the project's own class, not transformers'
#[test]
fn a_project_class_named_training_arguments_is_not_the_hugging_face_one() {
    assert_silent(OWN_TRAINING_ARGUMENTS, &["EA201", "EA203", "EA101"]);
    let hf = OWN_TRAINING_ARGUMENTS.replace(
        "from .trainer_utils import TrainingArguments",
        "from transformers import TrainingArguments",
    );
    let a = run(&hf);
    assert_eq!(lines_of(&a, "EA201"), vec![8], "{:?}", a.findings);
}

const GROUPED_PARAMETERS: &str = "import torch
from pytorch_pretrained_bert import BertModel
from pytorch_pretrained_bert.optimization import BertAdam

device = torch.device('cuda')
bert_model = BertModel.from_pretrained('bert-base-uncased').to(device)
model = Classifier(bert_model).to(device)
param_optimizer = list(model.named_parameters())
no_decay = ['bias', 'gamma', 'beta']
grouped = [
    {'params': [p for n, p in param_optimizer if not any(nd in n for nd in no_decay)]},
    {'params': [p for n, p in param_optimizer if any(nd in n for nd in no_decay)]},
]
optimizer = BertAdam(grouped, lr=2e-5)
for x, y in loader:
    loss = model(x.to(device), y.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) param_optimizer = list(model.named_parameters()); grouped = [{'params': [p for n, p in
//     param_optimizer ...]}]; optimizer = BertAdam(grouped)
#[test]
fn the_model_trained_through_grouped_parameters_anchors_the_file_level_findings() {
    let a = run(GROUPED_PARAMETERS);
    assert_eq!(lines_of(&a, "EA203"), vec![7], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA202"), vec![7], "{:?}", a.findings);
}

const IMAGE_WRITTEN_FROM_ITS_OBJECT: &str = "import torch
from torchvision import transforms

model = Net().cuda().eval()
with torch.no_grad():
    for i, (lr, name) in enumerate(test_loader):
        sr = model(lr.cuda())
        img = transforms.ToPILImage()(torch.squeeze(sr.data.cpu(), 0))
        img.save('results/' + name[0] + '.png')
        transforms.ToPILImage()(sr[0].cpu()).save('results/direct_' + name[0] + '.png')
";

// Ex) img = transforms.ToPILImage()(out.cpu()); img.save(path)
#[test]
fn a_read_whose_object_is_saved_is_the_loops_product() {
    assert_silent(IMAGE_WRITTEN_FROM_ITS_OBJECT, &["EA301"]);
}

const ROWS_TO_A_POOL: &str = "import pandas as pd
from multiprocessing import Pool

def write_imgs(row):
    idx, r = row
    return r['path']

df = pd.read_csv('data.csv')
with Pool(15) as p:
    for res in p.imap(write_imgs, df.iterrows()):
        pass
for idx, r in df.iterrows():
    print(r['path'])
";

// Ex) for res in pool.imap(write_row, df.iterrows()):
#[test]
fn rows_handed_to_a_process_pool_are_not_a_row_loop() {
    let a = run(ROWS_TO_A_POOL);
    assert_eq!(lines_of(&a, "EA601"), vec![12], "{:?}", a.findings);
}

const SMALL_MLP_SIZED_BY_A_CONSTANT: &str = "import torch
import torch.nn as nn
from torch.utils.data import DataLoader

WINDOW_SIZE = 7
DEVICE = torch.device('cuda')

class DemandModel(nn.Module):
    def __init__(self, input_size):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(input_size, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        return self.fc(x)

train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=2)
model = DemandModel(WINDOW_SIZE).to(DEVICE)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(50):
    for x, y in train_loader:
        loss = (model(x.to(DEVICE)) - y.to(DEVICE)).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) WINDOW_SIZE = 7 ... model = DemandModel(WINDOW_SIZE)   # nn.Linear(input_size, 64)
#[test]
fn a_small_model_sized_by_a_constant_of_the_file_is_small() {
    assert_silent(SMALL_MLP_SIZED_BY_A_CONSTANT, &["EA201", "EA202", "EA102"]);
    // a size the file cannot read keeps the findings
    let a =
        run(&SMALL_MLP_SIZED_BY_A_CONSTANT.replace("WINDOW_SIZE = 7", "WINDOW_SIZE = cfg.window"));
    assert_eq!(lines_of(&a, "EA201"), vec![20], "{:?}", a.findings);
}

const UNREAD_MODULE_LOADER: &str = "import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
train_loader = DataLoader(train_data, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
val_loader = DataLoader(val_data, batch_size=32, shuffle=False)
model = build().to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for images, labels in train_loader:
        loss = model(images.to(device, non_blocking=True)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) val_loader = DataLoader(val_data, ...)   # never read, in a script that trains at module level
#[test]
fn an_unread_loader_of_a_script_that_trains_at_module_level_loads_nothing() {
    assert_silent(UNREAD_MODULE_LOADER, &["EA101", "EA102"]);
    // in a module without steps of its own, another file may import it: still reported
    let library = UNREAD_MODULE_LOADER
        .split("model = build()")
        .next()
        .unwrap()
        .to_string();
    let a = run(&library);
    assert_eq!(lines_of(&a, "EA101"), vec![6], "{:?}", a.findings);
}

const JOBLIB_FOR_DUMP: &str = "import os
import joblib
import librosa
import numpy as np

def extract(path):
    y, sr = librosa.load(path)
    return np.mean(librosa.feature.mfcc(y=y, sr=sr), axis=1)

features = []
for root, dirs, files in os.walk('data'):
    for file in files:
        features.append(extract(os.path.join(root, file)))
joblib.dump(np.array(features), 'features.pkl')
";

// Ex) import joblib ... joblib.dump(features, 'features.pkl')   # no Parallel / delayed
#[test]
fn joblib_imported_to_dump_a_result_runs_nothing_in_parallel() {
    let a = run(JOBLIB_FOR_DUMP);
    assert_eq!(lines_of(&a, "EA602"), vec![12], "{:?}", a.findings);
    let parallel = JOBLIB_FOR_DUMP.replace(
        "joblib.dump(np.array(features), 'features.pkl')",
        "paths = [os.path.join(r, f) for r, _, fs in os.walk('data') for f in fs]\nfeatures = joblib.Parallel(n_jobs=-1)(joblib.delayed(extract)(p) for p in paths)",
    );
    assert_silent(&parallel, &["EA602"]);
}

const BUILT_WITH_DEVICE_THEN_MOVED: &str = "import torch
from models import Seq2Seq

device = torch.device('cuda')
model = Seq2Seq(256, 512, vocab_size, device=device,
                dropout=0.1)
model = model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(10):
    for src, tgt in train_loader:
        loss = model(src.to(device), tgt.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = Seq2Seq(..., device=device)  ...  model = model.to(device)
#[test]
fn an_explicit_move_anchors_before_a_constructor_handed_the_device() {
    let a = run(BUILT_WITH_DEVICE_THEN_MOVED);
    assert_eq!(lines_of(&a, "EA203"), vec![7], "{:?}", a.findings);
    // without the explicit move, the constructor handed the device is the placement
    let a = run(&BUILT_WITH_DEVICE_THEN_MOVED.replace("model = model.to(device)\n", ""));
    assert_eq!(lines_of(&a, "EA203"), vec![5], "{:?}", a.findings);
}

const PATCHES_THROUGH_THE_MODEL: &str = "import numpy as np
import torch

def train_epoch(net, loader):
    for x, y in loader:
        net(x.cuda()).sum().backward()
    return 0.0

model = build().cuda().eval()
result = np.zeros((h, w), dtype=np.uint8)
with torch.no_grad():
    for i in range(h // 256 + 1):
        patch = image[:, :, i * 256:(i + 1) * 256]
        result[i] = model(patch.cuda()).argmax().item()
losses = np.zeros(epochs)
for epoch in range(epochs):
    losses[epoch] = train_epoch(model, loader)
scores = np.zeros(n)
for i in range(n):
    scores[i] = 1.0 / (1.0 + np.exp(-logits[i]))
";

// Ex) for i in range(tiles): result[i] = model(patch)   /   for e in range(epochs): loss[e] = train_epoch()
#[test]
fn loops_whose_iterations_run_the_model_or_an_epoch_are_not_element_wise() {
    let a = run(PATCHES_THROUGH_THE_MODEL);
    assert_eq!(lines_of(&a, "EA603"), vec![19], "{:?}", a.findings);
}

const SWA_EPOCHS: &str = "import torch
from torch.optim.swa_utils import AveragedModel, SWALR

def train_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return correct.double() / len(loader)

model = build().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
swa_model = AveragedModel(model)
swa_scheduler = SWALR(optimizer, swa_lr=2e-5)
for epoch in range(10):
    train_loss = train_epoch(model, train_loader, optimizer)
    print(f'Train loss {train_loss:.4f}')
    swa_model.update_parameters(model)
    swa_scheduler.step()
";

// Ex) swa_scheduler = SWALR(optimizer, ...) ... for epoch: ...; swa_scheduler.step()
#[test]
fn a_swa_scheduler_step_does_not_make_the_epoch_loop_a_step_loop() {
    // the kind of each loop of `src`, by line
    let kinds = |src: &str| {
        let a = run(src);
        let kinds: Vec<(usize, String)> = a
            .facts
            .loops
            .iter()
            .map(|l| (l.line, l.kind.to_string()))
            .collect();
        kinds
    };
    let expect = |v: &[(usize, &str)]| -> Vec<(usize, String)> {
        v.iter().map(|(l, k)| (*l, (*k).to_string())).collect()
    };
    assert_eq!(kinds(SWA_EPOCHS), expect(&[(5, "step"), (16, "epoch")]));
    // an optimizer of torch.optim stepped in the loop still makes it a step loop, unless the
    // loop also runs a whole training pass (`train_epoch(...)`): then it steps once per pass
    // (the sixteenth session, an FSDP script stepping once more after each pass)
    let own_step = SWA_EPOCHS
        .replace("    swa_scheduler.step()", "    optimizer.step()")
        .replace(
            "    train_loss = train_epoch(model, train_loader, optimizer)",
            "    train_loss = model(next(iter(train_loader))).mean()\n    train_loss.backward()",
        );
    assert_eq!(kinds(&own_step), expect(&[(5, "step"), (16, "step")]));
    let per_pass = SWA_EPOCHS.replace("    swa_scheduler.step()", "    optimizer.step()");
    assert_eq!(kinds(&per_pass), expect(&[(5, "step"), (16, "epoch")]));
}
