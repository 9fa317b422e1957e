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
