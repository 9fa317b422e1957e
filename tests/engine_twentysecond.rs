//! The twenty-second accuracy round: shapes from the blind waves g528– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A DQN agent on CUDA that steps its environment with the action the policy picked.
const DQN: &str = "import random
import torch
import torch.nn as nn
import gym

env = gym.make('CartPole-v1')
device = torch.device('cuda')


class Policy(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Linear(width, 2)

    def forward(self, x):
        return self.body(x)


net = Policy(env.observation_space.shape[0] * 400).to(device)
optimizer = torch.optim.Adam(net.parameters())

for episode in range(500):
    state = torch.tensor(env.reset(), device=device).float()
    done = False
    while not done:
        with torch.no_grad():
            action = net(state).argmax()
        obs, reward, done, info = env.step(action.item())
        q = net(state)[0]
        loss = (q - reward) ** 2
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())
        state = torch.tensor(obs, device=device).float()
";

// Ex) obs, reward, done, info = env.step(action.item())
#[test]
fn an_action_read_back_to_step_the_environment_is_the_interaction() {
    // the action handed to the simulator must be on the host; the loss printed is a read
    assert_eq!(lines_of(&run(DQN), "EA301"), vec![34]);
}

/// A GAN whose discriminator and generator loops run a number of times set to one, and whose
/// losses are printed on the last step of each epoch.
const ONE_PASS_INNER_LOOPS: &str = "import torch
import torch.nn as nn
from torch.utils.data import DataLoader

batch_size = 64
num_epochs = 100
num_d_steps = 1
num_g_steps = 1
latent = 100

device = torch.device('cuda')
G = nn.Sequential(nn.Linear(latent, 4096), nn.ReLU(), nn.Linear(4096, 12288)).to(device)
D = nn.Sequential(nn.Linear(12288, 4096), nn.ReLU(), nn.Linear(4096, 1)).to(device)
loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4,
                    pin_memory=True, persistent_workers=True)
criterion = nn.BCEWithLogitsLoss()
opt_d = torch.optim.Adam(D.parameters())
opt_g = torch.optim.Adam(G.parameters())
G = torch.compile(G)
torch.backends.cuda.matmul.allow_tf32 = True

for epoch in range(num_epochs):
    for i, real in enumerate(loader):
        real = real.to(device, non_blocking=True)
        ones = torch.ones(batch_size, 1, device=device)
        zeros = torch.zeros(batch_size, 1, device=device)
        for k in range(num_d_steps):
            fake = G(torch.randn(batch_size, latent, device=device))
            d_loss = criterion(D(real), ones) + criterion(D(fake.detach()), zeros)
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
        for j in range(num_g_steps):
            fake = G(torch.randn(batch_size, latent, device=device))
            g_loss = criterion(D(fake), ones)
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        if (i + 1) == len(loader):
            print(d_loss.item(), g_loss.item())
";

// Ex) for k in range(num_D_step): ... with num_D_step = 1, inside `for i, x in enumerate(loader)`
#[test]
fn a_loop_that_runs_once_is_a_block_of_the_step_loop_around_it() {
    let report = run(ONE_PASS_INNER_LOOPS);
    // mixed precision is missing from the loader's step loop, not from the one-pass blocks
    assert_eq!(lines_of(&report, "EA201"), vec![23]);
    // with several critic passes the inner loop steps on its own
    let critic = ONE_PASS_INNER_LOOPS
        .replace("num_d_steps = 1", "num_d_steps = 5")
        .replace("num_g_steps = 1", "num_g_steps = 2");
    assert_eq!(lines_of(&run(&critic), "EA201"), vec![27]);
}

// Ex) if (i+1) == num_steps - 1: print(d_loss.data.item(), ...), here `(i + 1) == len(loader)`
#[test]
fn the_counter_plus_one_against_the_count_is_the_last_step() {
    assert!(lines_of(&run(ONE_PASS_INNER_LOOPS), "EA301").is_empty());
    let every = ONE_PASS_INNER_LOOPS.replace("(i + 1) == len(loader)", "(i + 1) > 0");
    assert_eq!(lines_of(&run(&every), "EA301"), vec![40]);
}

/// A song feature table: each file of a folder is loaded with librosa and its statistics set
/// into pandas Series by id.
const SONG_FEATURES: &str = "import librosa
import numpy as np
import pandas as pd
from os import listdir
from os.path import isfile, join


def extract(path):
    tempo_vector = pd.Series(dtype=float)
    rms_vector = pd.Series(dtype=float)
    song_id = 1
    names = [f for f in listdir(path) if isfile(join(path, f))]
    for name in names:
        song = path + name
        y, sr = librosa.load(song, duration=60)
        tempo, beats = librosa.beat.beat_track(y=y, sr=sr)
        tempo_vector._set_value(song_id, tempo)
        rms_vector._set_value(song_id, np.mean(librosa.feature.rms(y=y)))
        song_id = song_id + 1
    return pd.DataFrame({'tempo': tempo_vector, 'rms': rms_vector})


extract('music/')
";

// Ex) tempo_vector._set_value(id, tempo) per file
#[test]
fn a_result_set_into_a_series_per_file_is_collected() {
    assert_eq!(lines_of(&run(SONG_FEATURES), "EA602"), vec![13]);
    // a loop that only counts its files collects nothing
    let counted = SONG_FEATURES
        .replace("        tempo_vector._set_value(song_id, tempo)\n", "")
        .replace(
            "        rms_vector._set_value(song_id, np.mean(librosa.feature.rms(y=y)))\n",
            "",
        );
    assert!(lines_of(&run(&counted), "EA602").is_empty());
}

/// One-hot preparation: the distinct values of each column, counted a column at a time.
const COLUMN_UNIQUES: &str = "import numpy as np

data = np.loadtxt('houses.csv', delimiter=',', dtype=str)
columns = np.transpose(data)
counts_per_column = np.zeros(np.size(columns, axis=0))
values = []
for index in range(0, np.size(columns, axis=0)):
    distinct, counts = np.unique(columns[index], return_counts=True)
    counts_per_column[index] = len(counts)
    values.append(distinct)
print(counts_per_column, values)
";

// Ex) junk, counts = np.unique(temp_data_transpose[index], return_counts=True)
#[test]
fn a_column_reduced_by_unique_per_iteration_is_not_element_wise() {
    assert!(lines_of(&run(COLUMN_UNIQUES), "EA603").is_empty());
    // a value read element by element still is
    let element = COLUMN_UNIQUES.replace(
        "counts_per_column[index] = len(counts)",
        "counts_per_column[index] = float(data[index, 0]) * 2",
    );
    assert_eq!(lines_of(&run(&element), "EA603"), vec![7]);
}

/// A GPT-2 step timed for fifty iterations, in fp32 with TF32 on (the build-nanogpt shape).
const FIFTY_STEPS: &str = "import time
import torch
from model import GPT, GPTConfig

device = 'cuda'
torch.set_float32_matmul_precision('high')
model = GPT(GPTConfig(vocab_size=50304))
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for i in range(50):
    t0 = time.time()
    x, y = train_loader.next_batch()
    x, y = x.to(device), y.to(device)
    optimizer.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        logits, loss = model(x, y)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    print(f'step {i}, loss: {loss.item()}, dt: {(time.time() - t0) * 1000:.2f}ms')
";

// Ex) for i in range(50): ... a timed demo of fifty steps
#[test]
fn a_training_loop_of_a_hundred_known_steps_at_most_does_not_pay_for_compiling() {
    assert!(lines_of(&run(FIFTY_STEPS), "EA203").is_empty());
    let long = FIFTY_STEPS.replace("range(50)", "range(5000)");
    assert_eq!(lines_of(&run(&long), "EA203"), vec![8]);
}

/// A Lightning module whose hooks bind their loaders before returning them; only `fit` runs.
const LIGHTNING_HOOKS: &str = "import torch
import torchvision
import pytorch_lightning as pl
from torch.utils.data import DataLoader


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = torchvision.models.resnet18(num_classes=2)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def train_dataloader(self):
        train_set = torchvision.datasets.ImageFolder('data/train')
        train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
        return train_loader

    def val_dataloader(self):
        val_set = torchvision.datasets.ImageFolder('data/val')
        val_loader = DataLoader(val_set, batch_size=32, num_workers=4, pin_memory=True)
        return val_loader

    def test_dataloader(self):
        test_set = torchvision.datasets.ImageFolder('data/test')
        test_loader = DataLoader(test_set, batch_size=8, num_workers=4)
        return test_loader


if __name__ == '__main__':
    model = Classifier()
    trainer = pl.Trainer(max_epochs=50, accelerator='gpu', precision='16-mixed')
    trainer.fit(model)
";

// Ex) def train_dataloader(self): loader = DataLoader(..., num_workers=4); return loader
#[test]
fn lightning_restarts_the_loaders_its_fit_hooks_return_every_epoch() {
    let report = run(LIGHTNING_HOOKS);
    assert_eq!(lines_of(&report, "EA103"), vec![24, 29]);
    // the test hook runs only when the trainer tests
    assert!(lines_of(&report, "EA102").is_empty());
    let tested = LIGHTNING_HOOKS.replace(
        "    trainer.fit(model)\n",
        "    trainer.fit(model)\n    trainer.test(model)\n",
    );
    assert_eq!(lines_of(&run(&tested), "EA102"), vec![34]);
}

/// A DDP launcher: the model is built and wrapped here, and a trainer class of the
/// repository's own package, handed the model, runs the training.
const OWN_TRAINER: &str = "import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

from src.transformer import Transformer
from src.trainer_ddp import Trainer


def worker(rank, world_size, config):
    dist.init_process_group('nccl', rank=rank, world_size=world_size)
    device = torch.device(f'cuda:{rank}')
    model = Transformer(config).to(device)
    model = DDP(model, device_ids=[rank])
    trainer = Trainer(model=model, config=config, device=device)
    trainer.train()
    dist.destroy_process_group()


if __name__ == '__main__':
    world_size = torch.cuda.device_count()
    mp.spawn(worker, args=(world_size, {}), nprocs=world_size)
";

// Ex) trainer = Trainer(model=model, config=cfg, device=device); trainer.train()
#[test]
fn a_trainer_of_the_repository_handed_the_model_runs_the_training() {
    assert!(lines_of(&run(OWN_TRAINER), "EA202").is_empty());
    // Hugging Face's Trainer is a library's: its precision is the file's arguments
    let hf = OWN_TRAINER
        .replace(
            "from src.trainer_ddp import Trainer",
            "from transformers import Trainer, TrainingArguments",
        )
        .replace(
            "Trainer(model=model, config=config, device=device)",
            "Trainer(model=model, args=TrainingArguments('out'), train_dataset=config)",
        );
    assert!(!lines_of(&run(&hf), "EA202").is_empty());
}

/// A module that tests a name before the statement binding it, whose value is read from a
/// dict bound in the tested branch (found by `cargo fuzz`: the resolution of the key asked the
/// branch's condition, which resolved the name again, without end).
const CONDITION_READS_ITS_OWN_BINDING: &str = "if epoch == 1:
    new_pct_pruned = checkpoint = load_checkpoint(args.resume)
model.train()
epoch = checkpoint['epoch'] % args.max_epochs + 1
";

// Ex) a stack overflow in `analyze` on a mutated public script
#[test]
fn a_condition_that_reads_its_own_binding_resolves_to_unknown() {
    let report = run(CONDITION_READS_ITS_OWN_BINDING);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

/// A classifier whose architecture an option picks, through a parameter of `main`; the
/// vision transformer is imported beside the ResNet that runs as shipped.
const ARCH_BY_PARAMETER: &str = "import argparse
import torch
from models import resnet50, vit


def main(loader, model_arch, device):
    if model_arch == 'resnet50':
        model = resnet50(2)
    elif model_arch == 'vit':
        model = vit(2)
    model.cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for x, y in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        optimizer.step()


parser = argparse.ArgumentParser()
parser.add_argument('--model_arch', type=str, default='resnet50', choices=['resnet50', 'vit'])
args = parser.parse_args()
main(loader, args.model_arch, 'cuda')
";

// Ex) from models import demo, resnet50, vit ... elif model_arch == 'vit': model = vit(...)
#[test]
fn a_transformer_imported_beside_the_model_that_runs_shows_no_matmul_work() {
    assert!(lines_of(&run(ARCH_BY_PARAMETER), "EA202").is_empty());
    let vit = ARCH_BY_PARAMETER.replace("default='resnet50'", "default='vit'");
    assert_eq!(lines_of(&run(&vit), "EA202"), vec![11]);
}

/// The transfer-learning tutorial's phase loop with its `set_grad_enabled` left out.
const PHASES_WITHOUT_GRAD_SWITCH: &str = "import torch
from torch import nn, optim
from torchvision import models

device = torch.device('cuda')
model = models.resnet18(num_classes=4).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(model.parameters(), lr=0.01)
for epoch in range(25):
    for phase in ['train', 'valid']:
        if phase == 'train':
            model.train()
        else:
            model.eval()
        for inputs, labels in dataloaders[phase]:
            inputs = inputs.to(device)
            labels = labels.to(device)
            optimizer.zero_grad()
            # with torch.set_grad_enabled(phase == 'train'):
            outputs = model(inputs)
            loss = criterion(outputs, labels)
            if phase == 'train':
                loss.backward()
                optimizer.step()
";

// Ex) for phase in ['train', 'valid']: ... for inputs, labels in dataloaders[phase]: (no set_grad_enabled)
#[test]
fn a_validation_phase_of_the_training_loop_without_a_grad_switch_keeps_autograd_on() {
    let report = run(PHASES_WITHOUT_GRAD_SWITCH);
    assert_eq!(lines_of(&report, "EA401"), vec![15]);
    // no fix: wrapping the loop in no_grad would stop its training phase
    assert!(
        report
            .findings
            .iter()
            .filter(|f| f.rule == "EA401")
            .all(|f| f.fix.is_none())
    );
    let switched = PHASES_WITHOUT_GRAD_SWITCH
        .replace(
            "            # with torch.set_grad_enabled(phase == 'train'):\n            outputs = model(inputs)\n            loss = criterion(outputs, labels)\n",
            "            with torch.set_grad_enabled(phase == 'train'):\n                outputs = model(inputs)\n                loss = criterion(outputs, labels)\n",
        );
    assert!(lines_of(&run(&switched), "EA401").is_empty());
    let train_only = PHASES_WITHOUT_GRAD_SWITCH.replace("['train', 'valid']", "['train']");
    assert!(lines_of(&run(&train_only), "EA401").is_empty());
}

/// Spectra held in memory by a dataset class the file defines, made by a function that
/// returns it beside the sample names, and split into one-out subsets.
const SUBSETS_OF_A_RETURNED_DATASET: &str = "import torch
import pandas as pd
from torch.utils.data import Dataset, DataLoader, Subset


class Spectra(Dataset):
    def __init__(self, data, labels):
        self.data = data
        self.labels = labels

    def __getitem__(self, index):
        spectrum = torch.tensor(self.data[index], dtype=torch.float32)
        return spectrum, self.labels[index]

    def __len__(self):
        return len(self.data)


def load(path):
    df = pd.read_excel(path)
    names = df['Sample']
    dataset = Spectra(df.drop(columns=['Sample']).values, torch.arange(len(names)))
    return dataset, names


dataset, names = load('spectra.xlsx')
model = torch.nn.Sequential(torch.nn.Conv1d(1, 64, 9), torch.nn.Flatten(), torch.nn.LazyLinear(899))
optimizer = torch.optim.Adam(model.parameters())
for i in range(len(dataset)):
    train_part = Subset(dataset, [j for j in range(len(dataset)) if j != i])
    train_loader = DataLoader(train_part, batch_size=8, shuffle=True)
    for x, y in train_loader:
        loss = torch.nn.functional.cross_entropy(model(x.unsqueeze(1)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) dataset, sample_names = preprocess_excel(path) ... DataLoader(Subset(dataset, idx))
#[test]
fn a_dataset_a_function_binds_and_returns_beside_others_is_read_through() {
    assert!(lines_of(&run(SUBSETS_OF_A_RETURNED_DATASET), "EA101").is_empty());
    let decoding = SUBSETS_OF_A_RETURNED_DATASET.replace(
        "spectrum = torch.tensor(self.data[index], dtype=torch.float32)",
        "spectrum = torch.tensor(load_image(self.data[index]), dtype=torch.float32)",
    );
    assert_eq!(lines_of(&run(&decoding), "EA101"), vec![31]);
}

/// Rows sent to a prediction service; a demo frame of three rows written out.
const ROWS_TO_A_SERVICE: &str = "import pandas as pd
from demo import test_api_request

to_predict = pd.read_csv('credit.csv')
to_predict['Y'] = to_predict.apply(lambda row: test_api_request(row.tolist())['prediction'], axis=1)
to_predict.to_csv('credit.csv')

df = pd.DataFrame({'c1': [10, 11, 12], 'c2': [100, 110, 120]})
for index, row in df.iterrows():
    print(row['c1'], row['c2'])
";

// Ex) df.apply(lambda row: test_api_request(row.tolist())['prediction'], axis=1)
#[test]
fn rows_sent_to_a_service_or_a_frame_written_out_cost_nothing_to_vectorise() {
    assert!(lines_of(&run(ROWS_TO_A_SERVICE), "EA601").is_empty());
    let local = ROWS_TO_A_SERVICE
        .replace(
            "test_api_request(row.tolist())['prediction']",
            "score(row.tolist())",
        )
        .replace("'c1': [10, 11, 12]", "'c1': list(range(100000))");
    assert_eq!(lines_of(&run(&local), "EA601"), vec![5, 9]);
}

/// A driver that hands its loaders to the repository's own trainer, whose `fit` may run one
/// pass or many.
const OWN_TRAINER_FIT: &str = "import torch
from torch.utils.data import DataLoader
from trainer import Trainer
from models.rqvae import RQVAE

model = RQVAE(in_dim=768)
train_loader = DataLoader(train_data, num_workers=4, batch_size=1024, pin_memory=True)
trainer = Trainer(args, model)
trainer.fit(train_data=train_loader)
";

// Ex) trainer = Trainer(args, model, ...) from the repository's trainer.py; trainer.fit(train_data=loader)
#[test]
fn a_loader_handed_to_a_repository_trainer_is_not_lightning_s() {
    assert!(lines_of(&run(OWN_TRAINER_FIT), "EA103").is_empty());
    let lightning = OWN_TRAINER_FIT
        .replace(
            "from trainer import Trainer",
            "from pytorch_lightning import Trainer",
        )
        .replace("Trainer(args, model)", "Trainer(max_epochs=10)")
        .replace(
            "trainer.fit(train_data=train_loader)",
            "trainer.fit(model, train_loader)",
        );
    assert_eq!(lines_of(&run(&lightning), "EA103"), vec![7]);
}

/// A folder listed at module level and resized by a function that reads the listing.
const LISTING_READ_BY_A_FUNCTION: &str = "from PIL import Image
import os

path = 'raw/'
dirs = os.listdir(path)
dest = 'resized/'


def resize():
    for item in dirs:
        if os.path.isfile(path + item):
            im = Image.open(path + item)
            im.resize((224, 224)).save(dest + item, 'JPEG', quality=90)


resize()
";

// Ex) dirs = os.listdir(path) ... def resize(): for item in dirs: Image.open(path+item) ... .save(...)
#[test]
fn a_module_listing_read_in_a_function_is_a_per_file_loop() {
    assert_eq!(
        lines_of(&run(LISTING_READ_BY_A_FUNCTION), "EA602"),
        vec![10]
    );
    // a function that binds the name itself reads its own value
    let local = LISTING_READ_BY_A_FUNCTION
        .replace("def resize():\n", "def resize():\n    dirs = ['a.jpg']\n");
    assert!(lines_of(&run(&local), "EA602").is_empty());
}

/// Heatmap targets built row by row, reading each landmark column of the row in a loop
/// over the columns.
const ROWS_BY_COLUMN_LOOP: &str = "import numpy as np
import pandas as pd

df = pd.read_csv('training.csv')
columns = [c[:-2] for c in df.columns[:-1]]
y_train = []
for i in range(df.shape[0]):
    landmarks = []
    for col in columns:
        x = df[col + '_x'].iloc[i]
        y = df[col + '_y'].iloc[i]
        landmarks.append([x, y])
    y_train.append(landmarks)
print(np.array(y_train).shape)
";

// Ex) for i in range(df.shape[0]): for colnm in columns_lm: x = df[colnm + "_x"].iloc[i]
#[test]
fn a_row_read_in_a_loop_over_its_columns_is_a_row_loop() {
    assert_eq!(lines_of(&run(ROWS_BY_COLUMN_LOOP), "EA601"), vec![7]);
}

/// A character model whose checkpoint and its message come every `save_every` steps, counted
/// by a counter the branch resets.
const COUNTER_RESET: &str = "import torch

save_every = 500
cnt = 0
for epoch in range(10):
    for x, y in loader:
        optimizer.zero_grad()
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        cnt += 1
        if cnt == save_every:
            cnt = 0
            torch.save(model.state_dict(), 'ckpt.pt')
            print('saved at epoch', epoch)
";

// Ex) cnt += 1; if cnt == save_per_num_steps: cnt = 0; torch.save(...); print(...)
#[test]
fn an_equality_test_whose_branch_resets_its_counter_runs_every_n_steps() {
    assert!(lines_of(&run(COUNTER_RESET), "EA504").is_empty());
    // the reset is what makes it periodic: a test the branch leaves alone holds from then on
    let every = COUNTER_RESET.replace("if cnt == save_every:", "if cnt >= save_every:");
    let every = every.replace("            cnt = 0\n", "");
    assert_eq!(lines_of(&run(&every), "EA504"), vec![14]);
}

/// Depth maps for a folder of photos from a hub model, stopped after a couple of dozen.
const HUB_MODEL_PER_IMAGE: &str = "import os
import torch
from PIL import Image

zoe = torch.hub.load('isl-org/ZoeDepth', 'ZoeD_N', pretrained=True).to('cuda')
zoe.eval()
for i, f in enumerate(os.listdir('images')):
    image = Image.open(os.path.join('images', f)).convert('RGB')
    depth = zoe.infer_pil(image)
    Image.fromarray(depth).save(f'depth/{f}')
    if i == 20:
        break
";

// Ex) zoe = torch.hub.load(repo, "ZoeD_N", pretrained=True) ... depth = zoe.infer_pil(image)
#[test]
fn a_hub_entry_point_is_a_model_its_methods_run() {
    assert_eq!(lines_of(&run(HUB_MODEL_PER_IMAGE), "EA502"), vec![8]);
}

/// A PyTorch 0.3-era training step: the batch's parts wrapped in `Variable` over continued
/// lines, then moved to the GPU one by one from a pinned loader.
const VARIABLE_WRAPPED_PINNED_BATCH: &str = "import torch
from torch.autograd import Variable
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True)
model = Net().cuda()
for epoch in range(10):
    for i, batch in enumerate(loader, 1):
        data, label = \\
            Variable(batch[0]), \\
            Variable(batch[1], requires_grad=False)
        data = data.cuda()
        label = Variable(label)
        label = label.cuda()
        loss = model(data, label)
        loss.backward()
";

// Ex) data, label = \ Variable(batch[0]), \ Variable(batch[1], requires_grad=False) ... data.cuda()
#[test]
fn a_batch_wrapped_in_variable_over_continued_lines_is_still_the_pinned_batch() {
    assert_eq!(
        lines_of(&run(VARIABLE_WRAPPED_PINNED_BATCH), "EA303"),
        vec![12, 14]
    );
}

/// mp3 files of a folder converted to wav one at a time with pydub.
const PYDUB_CONVERSION: &str = "import glob
import os
import pydub

files = glob.glob('data/mp3/*')
os.makedirs('data/wav', exist_ok=True)
for file in files:
    base = os.path.splitext(os.path.basename(file))[0]
    audio = pydub.AudioSegment.from_mp3(file)
    audio.export(os.path.join('data/wav', base + '.wav'), format='wav')
";

// Ex) audio = pydub.AudioSegment.from_mp3(file); audio.export(wav, format="wav")
#[test]
fn a_file_exported_per_entry_is_written_per_file() {
    assert_eq!(lines_of(&run(PYDUB_CONVERSION), "EA602"), vec![7]);
}

/// A benchmark that times fifty steps of a loader and stops.
const FIFTY_LOADER_STEPS: &str = "import torch
from torch.utils.data import DataLoader
from model import get_model

model = get_model().cuda()
opt = torch.optim.AdamW(model.parameters())
loader = DataLoader(ToyDataset(), batch_size=2)
for step, batch in enumerate(loader):
    batch = {k: v.cuda() for k, v in batch.items()}
    loss = model(**batch).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    if step == 50:
        break
";

// Ex) for step, batch in enumerate(loader): ... if step == 50: break
#[test]
fn a_loader_loop_that_breaks_off_at_a_known_step_runs_that_many() {
    assert!(lines_of(&run(FIFTY_LOADER_STEPS), "EA203").is_empty());
    let long = FIFTY_LOADER_STEPS.replace("step == 50", "step == 5000");
    assert_eq!(lines_of(&run(&long), "EA203"), vec![5]);
}

/// A GAN script whose training loop is commented out: it builds its networks at module
/// level and never reads the loader it made.
const LOOP_COMMENTED_OUT: &str = "import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
train_ds = datasets.STL10('data', split='train', download=True, transform=transforms.ToTensor())
train_dl = DataLoader(train_ds, batch_size=64, shuffle=True)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.ConvTranspose2d(100, 512, 4), nn.ReLU(), nn.ConvTranspose2d(512, 3, 4))

    def forward(self, z):
        return self.net(z)


model_gen = Generator().to(device)
# for epoch in range(num_epochs):
#     for xb, yb in train_dl:
#         loss = train_step(model_gen, xb.to(device))
torch.save(model_gen.state_dict(), 'gen.pt')
";

// Ex) train_dl = DataLoader(train_ds, batch_size=batch_size, shuffle=True)  # read only in comments
#[test]
fn a_loader_a_script_never_reads_costs_nothing() {
    let report = run(LOOP_COMMENTED_OUT);
    assert!(lines_of(&report, "EA101").is_empty());
    assert!(lines_of(&report, "EA102").is_empty());
    let read = LOOP_COMMENTED_OUT.replace(
        "torch.save(model_gen",
        "for xb, yb in train_dl:\n    model_gen(xb.to(device))\ntorch.save(model_gen",
    );
    assert_eq!(lines_of(&run(&read), "EA101"), vec![8]);
}

/// A module of a GAN class whose methods call helpers of the module: other files build it.
const GAN_CLASS_MODULE: &str = "import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from architecture import Generator, Discriminator


def fid(a, b):
    return float(((a - b) ** 2).mean())


class GAN(object):
    def __init__(self):
        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        self.loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True,
                                 persistent_workers=True)
        self.G = Generator().to(self.device)
        self.D = Discriminator().to(self.device)
        self.opt = torch.optim.Adam(self.D.parameters())

    def train(self):
        for epoch in range(100):
            for x, _ in self.loader:
                x = x.to(self.device, non_blocking=True)
                loss = self.D(x).mean()
                loss.backward()
                self.opt.step()
                print(fid(x, x), loss.item())
";

// Ex) class GAN(object): ... def train(self): ... w2_mod(v1, v2) — a module, nothing at module level
#[test]
fn a_module_whose_class_methods_call_its_helpers_is_still_a_module() {
    assert_eq!(lines_of(&run(GAN_CLASS_MODULE), "EA301"), vec![27]);
    // a script (a `__main__` block) that never builds the class runs none of it
    let script =
        format!("{GAN_CLASS_MODULE}\n\nif __name__ == '__main__':\n    print(fid(1, 2))\n");
    assert!(lines_of(&run(&script), "EA301").is_empty());
}

/// A LoRA fine-tune through the Hugging Face Trainer, kept on the CPU by its arguments.
const TRAINER_ON_CPU: &str =
    "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained('gpt2')
args = TrainingArguments(output_dir='out', num_train_epochs=3, no_cuda=True)
trainer = Trainer(model=model, args=args, train_dataset=dataset)
trainer.train()
";

// Ex) TrainingArguments(..., no_cuda=True)
#[test]
fn training_arguments_that_keep_the_trainer_on_the_cpu_make_no_gpu_file() {
    let report = run(TRAINER_ON_CPU);
    assert!(lines_of(&report, "EA201").is_empty());
    assert!(lines_of(&report, "EA202").is_empty());
    let gpu = TRAINER_ON_CPU.replace(", no_cuda=True", "");
    assert_eq!(lines_of(&run(&gpu), "EA201"), vec![4]);
}
