//! The tenth accuracy round: shapes from the blind wave g152–g157 that the engine read wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A world-model trainer whose dataset loads its next buffer of rollouts at the start of each
/// epoch's pass, in the function each epoch hands the loader to.
const NEXT_BUFFER: &str = "import torch
from data import RolloutDataset
from models import MDRNN

def train(model, train_loader, optimizer):
    train_loader.dataset.load_next_buffer()
    for ix, data in enumerate(train_loader):
        loss = model(data.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def main():
    model = MDRNN().cuda()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(RolloutDataset('rollouts'), batch_size=16, num_workers=2, pin_memory=True)
    for epoch in range(100):
        train(model, loader, optimizer)

main()
";

// Ex) def train(..., train_loader, ...): train_loader.dataset.load_next_buffer()
#[test]
fn a_dataset_changed_in_the_function_each_epoch_calls_keeps_restarting_workers() {
    let a = run(NEXT_BUFFER);
    assert!(lines_of(&a, "EA103").is_empty(), "{:?}", a.findings);
    // without the per-epoch change the workers are worth keeping
    let plain = NEXT_BUFFER.replace("    train_loader.dataset.load_next_buffer()\n", "");
    assert_eq!(lines_of(&run(&plain), "EA103"), vec![15]);
}

/// A flow trainer that, after each epoch, draws samples from ten validation batches.
const TEN_BATCHES: &str = "import torch
from model import Glow

model = Glow(3, 32, 4).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for epoch in range(100):
    for image, _ in train_loader:
        loss = model(image.cuda(non_blocking=True)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        for ind, image_attr in enumerate(val_loader):
            if ind >= 10: break
            image = image_attr[0].to('cuda')
            fake_image = model.reverse(model(image)).detach().cpu()[0]
            images.append(fake_image)
";

// Ex) for ind, image_attr in enumerate(val_loader): if ind >= 10: break
#[test]
fn a_loop_that_breaks_off_after_a_few_batches_is_no_step_loop() {
    let a = run(TEN_BATCHES);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // a cap of a thousand batches is a pass like any other
    let long = run(&TEN_BATCHES.replace("ind >= 10", "ind >= 1000"));
    assert_eq!(lines_of(&long, "EA301"), vec![16]);
}

/// A Kaggle trainer whose helper module re-exports NVIDIA Apex's `amp`.
const STAR_APEX: &str = "import torch
from utils import *
from model import PlantModel

model = PlantModel().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-5)
model, optimizer = amp.initialize(model, optimizer, opt_level='O1', verbosity=0)
for step, (images, labels) in enumerate(data_train):
    loss = criterion(model(images.cuda()), labels.cuda())
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
    optimizer.zero_grad()
";

// Ex) from utils import *  ...  amp.initialize(model, optimizer, opt_level="O1")
#[test]
fn apex_amp_through_a_star_import_is_mixed_precision() {
    let a = run(STAR_APEX);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    // "O0" is Apex's fp32
    let o0 = run(&STAR_APEX.replace("'O1'", "'O0'"));
    assert_eq!(lines_of(&o0, "EA201"), vec![8]);
}

/// A DCGAN whose options are copied from `vars(args)` into a config dict.
const CONFIG_DICT: &str = "import argparse
import torch
from utils import get_gan, get_loader

def train(training_config):
    netG, opt = get_gan('cuda')
    loader = get_loader(training_config['batch_size'])
    for epoch in range(training_config['num_epochs']):
        for batch_idx, (x, _) in enumerate(loader):
            loss = netG(x.cuda()).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if training_config['enable_tensorboard']:
                writer.add_scalar('loss', loss.item())

parser = argparse.ArgumentParser()
parser.add_argument('--num_epochs', type=int, default=8)
parser.add_argument('--batch_size', type=int, default=128)
parser.add_argument('--enable_tensorboard', type=bool, default=False)
args = parser.parse_args()
training_config = dict()
for arg in vars(args):
    training_config[arg] = getattr(args, arg)
train(training_config)
";

// Ex) if training_config['enable_tensorboard']: writer.add_scalar('loss', loss.item())
#[test]
fn an_entry_of_a_config_dict_built_from_the_arguments_is_read_as_shipped() {
    let a = run(CONFIG_DICT);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // switched on by default, the sync runs every step
    let on = run(&CONFIG_DICT.replace("type=bool, default=False", "type=bool, default=True"));
    assert_eq!(lines_of(&on, "EA301"), vec![15]);
    // a dict the file does not build from the arguments stays unknown: the sync may run
    let other = run(&CONFIG_DICT.replace("for arg in vars(args):", "for arg in ['num_epochs']:"));
    assert_eq!(lines_of(&other, "EA301"), vec![15]);
}

/// DDPM sampling: a thousand denoising steps, counted down.
const COUNTDOWN: &str = "import torch
from diffusers import UNet2DModel

unet = UNet2DModel().cuda()
seed = torch.randn(16, 1, 28, 28, device='cuda')
with torch.no_grad():
    for i in range(1000, 0, -1):
        z = torch.randn(16, 1, 28, 28).to('cuda')
        seed = seed - unet(seed, i)[0] + z
";

// Ex) for i in range(T, 0, -1): z = torch.randn(*img_shape).to(device)
#[test]
fn a_range_counted_down_runs_as_many_steps_as_it_counts() {
    let a = run(COUNTDOWN);
    assert_eq!(lines_of(&a, "EA304"), vec![8], "{:?}", a.findings);
    // ten steps down are a few
    let few = run(&COUNTDOWN.replace("range(1000, 0, -1)", "range(10, 0, -1)"));
    assert!(lines_of(&few, "EA304").is_empty(), "{:?}", few.findings);
    // a step the file does not state says nothing about the count
    let unknown = run(&COUNTDOWN.replace("range(1000, 0, -1)", "range(1000, 0, stride)"));
    assert_eq!(lines_of(&unknown, "EA304"), vec![8]);
}

/// A recommender trainer left in a debugging state: its step loop quits after the first step.
const EXIT_IN_LOOP: &str = "import torch
from model import NCF

model = NCF().cuda()
optimizer = torch.optim.Adam(model.parameters())
while epoch < epochs:
    x, y = loader.get_batch(256)
    loss = model(x.cuda(), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(loss.item())
    exit()
    steps += 1
";

// Ex) while epoch < epochs: ...; hr = metrics(y.cpu().numpy()); exit(); running_loss += loss
#[test]
fn a_loop_that_exits_in_its_body_runs_once() {
    let a = run(EXIT_IN_LOOP);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // the exit under a test leaves the loop running
    let guarded =
        run(&EXIT_IN_LOOP.replace("    exit()\n", "    if steps > limit:\n        exit()\n"));
    assert_eq!(lines_of(&guarded, "EA301"), vec![12]);
}

/// A CTC speech model of the PyTorch 0.3 era, moved to the GPU by casting to a CUDA tensor type.
const CUDA_TYPE: &str = "import torch
import torch.nn as nn
from model import Layered_RNN

gpu_dtype = torch.cuda.FloatTensor

def train_one_epoch(model, optimizer, loader):
    for data in loader:
        inputs, targets = data
        out = model(inputs.type(gpu_dtype))
        loss = nn.functional.ctc_loss(out, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

if __name__ == '__main__':
    model = Layered_RNN(rnn_input_size=40, nb_layers=4, rnn_hidden_size=256)
    model = model.type(gpu_dtype)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(20):
        train_one_epoch(model, optimizer, loader)
";

// Ex) gpu_dtype = torch.cuda.FloatTensor ... model = model.type(gpu_dtype)
#[test]
fn casting_to_a_cuda_tensor_type_places_the_model_on_the_gpu() {
    let a = run(CUDA_TYPE);
    // the file runs on CUDA, and the cast is where the model is placed
    assert_eq!(lines_of(&a, "EA203"), vec![18], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA201"), vec![8]);
    // a CPU tensor type moves nothing
    let cpu = run(&CUDA_TYPE.replace("torch.cuda.FloatTensor", "torch.FloatTensor"));
    assert!(lines_of(&cpu, "EA201").is_empty(), "{:?}", cpu.findings);
}

/// An MAE pretraining script whose loader options travel as a dict into the function that
/// builds the loaders.
const KWARGS_PARAM: &str = "import torch
from torch.utils.data import DataLoader
from torchvision import datasets
from models import MAE

def get_loaders(data_dir, loader_kwargs):
    train_dataset = datasets.CIFAR10(data_dir, train=True)
    train_loader = DataLoader(train_dataset, shuffle=True, **loader_kwargs)
    return train_loader

def run(data_dir, batch_size, num_epochs):
    loader_kwargs = {'batch_size': batch_size, 'num_workers': 4, 'pin_memory': True}
    train_loader = get_loaders(data_dir, loader_kwargs)
    model = MAE().to('cuda')
    optimizer = torch.optim.AdamW(model.parameters())
    for epoch in range(num_epochs):
        for images, _ in train_loader:
            loss = model(images.to('cuda', non_blocking=True)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

run('data', 256, 100)
";

// Ex) def get_loaders(data_dir, loader_kwargs): DataLoader(ds, **loader_kwargs)  with  get_loaders(d, {'num_workers': 4})
#[test]
fn loader_options_handed_to_the_builder_as_a_dict_are_read_at_its_call() {
    let a = run(KWARGS_PARAM);
    // four workers, restarted every epoch; pinned, so no pinning finding
    assert_eq!(lines_of(&a, "EA103"), vec![8], "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    // callers that disagree leave the options unknown
    let two = run(&KWARGS_PARAM.replace(
        "    train_loader = get_loaders(data_dir, loader_kwargs)\n",
        "    train_loader = get_loaders(data_dir, loader_kwargs)\n    other = get_loaders(data_dir, {'num_workers': 0})\n",
    ));
    assert!(lines_of(&two, "EA103").is_empty(), "{:?}", two.findings);
}

/// A forecasting trainer on Accelerate whose DeepSpeed plugin reads its precision from JSON.
const DS_PLUGIN: &str = "import torch
from accelerate import Accelerator, DeepSpeedPlugin
from models import TimeLLM

deepspeed_plugin = DeepSpeedPlugin(hf_ds_config='./ds_config_zero2.json')
accelerator = Accelerator(deepspeed_plugin=deepspeed_plugin)
model = TimeLLM()
optimizer = torch.optim.Adam(model.parameters())
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for epoch in range(10):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        accelerator.backward(loss)
        optimizer.step()
";

// Ex) Accelerator(deepspeed_plugin=DeepSpeedPlugin(hf_ds_config='./ds_config_zero2.json'))
#[test]
fn a_deepspeed_plugin_with_a_json_config_leaves_the_precision_unknown() {
    let a = run(DS_PLUGIN);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    // a plugin configured in the file itself says nothing of precision: Accelerate's default
    // ("no") stands
    let plain = run(&DS_PLUGIN.replace("hf_ds_config='./ds_config_zero2.json'", "zero_stage=2"));
    assert_eq!(lines_of(&plain, "EA201"), vec![11]);
}

/// A CIFAR-10 CNN of a course, 145,578 parameters, moved by reassignment.
const SMALL_CNN: &str = "import torch
from torch import nn
from torch.nn import Sequential

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.model = Sequential(
            nn.Conv2d(3, 32, 5, 1, 2), nn.MaxPool2d(2),
            nn.Conv2d(32, 32, 5, 1, 2), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 5, 1, 2), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 4 * 4, 64), nn.Linear(64, 10))
    def forward(self, x):
        return self.model(x)

model = Model(); model = model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
for epoch in range(10):
    for imgs, targets in train_dataloader:
        loss = nn.functional.cross_entropy(model(imgs.cuda()), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = Model(); model = model.cuda()
#[test]
fn a_model_moved_by_reassignment_is_sized_where_it_is_built() {
    let a = run(SMALL_CNN);
    for rule in ["EA201", "EA204"] {
        assert!(lines_of(&a, rule).is_empty(), "{rule}: {:?}", a.findings);
    }
    // a Linear of 64·4·4 → 4096 makes it a 4.4 M-parameter network
    let big = run(&SMALL_CNN.replace(
        "nn.Linear(64 * 4 * 4, 64), nn.Linear(64, 10)",
        "nn.Linear(64 * 4 * 4, 4096), nn.Linear(4096, 10)",
    ));
    assert_eq!(lines_of(&big, "EA201"), vec![19], "{:?}", big.findings);
}

/// A PPO agent of the cleanrl family: two 64-wide MLPs over the environment's observation.
const PPO_AGENT: &str = "import numpy as np
import torch
import torch.nn as nn

def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer

class Agent(nn.Module):
    def __init__(self, envs):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0))
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 64)), nn.Tanh(),
            layer_init(nn.Linear(64, np.prod(envs.single_action_space.shape)), std=0.01))
        self.actor_logstd = nn.Parameter(torch.zeros(1, np.prod(envs.single_action_space.shape)))

agent = Agent(envs).to('cuda')
optimizer = torch.optim.Adam(agent.parameters(), lr=3e-4)
for update in range(1, 1000):
    for start in range(0, 2048, 64):
        loss = agent.critic(b_obs[start:start + 64]).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 64))
#[test]
fn a_policy_mlp_over_an_environment_observation_is_small() {
    let a = run(PPO_AGENT);
    for rule in ["EA201", "EA202"] {
        assert!(lines_of(&a, rule).is_empty(), "{rule}: {:?}", a.findings);
    }
    // 2048-wide hidden layers make a network whose multiplies count
    let wide = run(&PPO_AGENT.replace("64", "2048"));
    assert!(!lines_of(&wide, "EA201").is_empty(), "{:?}", wide.findings);
}

/// Offline behaviour cloning (CORL): the actor handed to a trainer object and read back.
const ALIAS: &str = "import torch
import torch.nn as nn

class Actor(nn.Module):
    def __init__(self, state_dim: int, action_dim: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, action_dim), nn.Tanh())

class BC:
    def __init__(self, actor, actor_optimizer):
        self.actor = actor
        self.actor_optimizer = actor_optimizer

actor = Actor(state_dim, action_dim).to('cuda')
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4)
trainer = BC(actor, actor_optimizer)
for t in range(1000000):
    states, actions = replay_buffer.sample(256)
    loss = ((actor(states) - actions) ** 2).mean()
    actor_optimizer.zero_grad()
    loss.backward()
    actor_optimizer.step()
actor = trainer.actor
";

// Ex) trainer = BC(**kwargs) ... actor = trainer.actor
#[test]
fn a_model_read_back_from_an_object_of_the_file_is_the_same_model() {
    let a = run(ALIAS);
    for rule in ["EA201", "EA202"] {
        assert!(lines_of(&a, rule).is_empty(), "{rule}: {:?}", a.findings);
    }
    // read back from an object the file does not build, it may be anything
    let foreign = run(&ALIAS.replace("actor = trainer.actor", "actor = pretrained.actor"));
    assert!(
        !lines_of(&foreign, "EA201").is_empty(),
        "{:?}",
        foreign.findings
    );
}

/// Cross-validated training whose per-fold report runs the model once on the test split.
const FOLDS: &str = "import torch
import torch.nn as nn
from models import NeuralNetwork

def train_nn(dataloader, model, loss_fn, optimizer):
    for X, y in dataloader:
        loss = loss_fn(model(X.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def report(model, test_loader):
    with torch.no_grad():
        x = test_loader.dataset.tensors[0].cuda()
        pred = model(x)
        print(nn.MSELoss()(pred, test_loader.dataset.tensors[1].cuda()).item())

for fold in range(n_folds):
    model = NeuralNetwork().cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for t in range(200):
        train_nn(loaders[fold], model, nn.MSELoss(), optimizer)
    report(model, test_loaders[fold])
";

// Ex) for fold in range(n_folds): ... for t in range(epochs): train_nn(...) ... report(model, ...)
#[test]
fn an_evaluation_once_per_fold_is_no_step() {
    let a = run(FOLDS);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // moved into the epoch loop, the report runs once per epoch: still no per-step read
    let per_epoch = run(&FOLDS.replace(
        "        train_nn(loaders[fold], model, nn.MSELoss(), optimizer)\n",
        "        train_nn(loaders[fold], model, nn.MSELoss(), optimizer)\n        report(model, test_loaders[fold])\n",
    ));
    assert!(
        lines_of(&per_epoch, "EA301").is_empty(),
        "{:?}",
        per_epoch.findings
    );
}

/// A Kaggle DeBERTa fold trainer: the dataset of another module gets the tokenizer by name.
const TOKENIZER_KW: &str = "import torch
import config
from dataset import PhraseDataset
from model import PhraseModel

trainset = PhraseDataset(anchor=df['anchor'].values, tokenizer=config.deberta_tokenizer, max_len=config.max_len)
trainloader = torch.utils.data.DataLoader(trainset, batch_size=config.batch_size, num_workers=4)
model = PhraseModel(dropout=0.1).to('cuda')
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for epoch in range(5):
    for batch in trainloader:
        loss = model(batch['ids'].to('cuda'), batch['mask'].to('cuda')).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) PhraseDataset(..., tokenizer=config.deberta_tokenizer)
#[test]
fn a_tokenizer_handed_to_a_dataset_makes_a_file_of_token_ids() {
    let a = run(TOKENIZER_KW);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    // without it the loader's batches may be anything
    let other =
        run(&TOKENIZER_KW.replace("tokenizer=config.deberta_tokenizer", "transform=config.aug"));
    assert_eq!(lines_of(&other, "EA102"), vec![7]);
}

/// A trainer whose `--log` option has choices and no default: run as shipped, the branch on
/// it never runs.
const MODE: &str = "import argparse
import torch
from model import Seq2Seq

parser = argparse.ArgumentParser()
parser.add_argument('--log', type=str, choices=['debug', 'quiet'], help='how much to print')
args = parser.parse_args()

model = Seq2Seq().cuda()
opt = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if args.log == 'debug':
            print(loss.item())
";

// Ex) parser.add_argument("--mode", type=str, choices=['train', 'test']) ... if args.mode == 'train': train(...)
#[test]
fn a_branch_on_an_option_nobody_sets_does_not_run() {
    let a = run(MODE);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // with a default of 'debug' it runs
    let dflt = run(&MODE.replace("help='how much to print'", "default='debug'"));
    assert_eq!(lines_of(&dflt, "EA301"), vec![18]);
    // `!=` reads the same None: `if args.log != 'quiet':` runs
    let ne = run(&MODE.replace("if args.log == 'debug':", "if args.log != 'quiet':"));
    assert_eq!(lines_of(&ne, "EA301"), vec![18]);
}

/// A BiLSTM-CRF tagger: its recurrent layers run in cuDNN, whose TF32 switch is on by default.
const LSTM_TAGGER: &str = "import torch
import torch.nn as nn

class Tagger(nn.Module):
    def __init__(self, vocab, tags, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim // 2, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(dim, tags)

model = Tagger(vocab_size, num_tags, args.dim).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(30):
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.cuda()).flatten(0, 1), y.cuda().flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) self.lstm = nn.LSTM(dim, dim // 2, num_layers=2, bidirectional=True)
#[test]
fn a_recurrent_network_runs_in_tf32_through_cudnn_already() {
    let a = run(LSTM_TAGGER);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
    // an LSTMCell steps through matmuls, which the matmul switch governs
    let cell = run(&LSTM_TAGGER.replace(
        "nn.LSTM(dim, dim // 2, num_layers=2, bidirectional=True, batch_first=True)",
        "nn.LSTMCell(dim, dim)",
    ));
    assert_eq!(lines_of(&cell, "EA202"), vec![11], "{:?}", cell.findings);
    // with cuDNN's TF32 switched off, the recurrent layers lose it
    let off = run(&LSTM_TAGGER.replace(
        "model = Tagger(",
        "torch.backends.cudnn.allow_tf32 = False\nmodel = Tagger(",
    ));
    assert_eq!(lines_of(&off, "EA202"), vec![12], "{:?}", off.findings);
}

/// FSDP2 training whose parameters are cast to bf16 by its mixed-precision policy.
const FSDP_POLICY: &str = "import torch
from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
from model import Transformer

torch.distributed.init_process_group('nccl')
model = Transformer(dim=5120, n_layers=40).to('cuda')
mp_policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
for layer in model.layers:
    fully_shard(layer, mp_policy=mp_policy)
fully_shard(model, mp_policy=mp_policy)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step, batch in enumerate(loader):
    loss = model(batch.to('cuda')).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
";

// Ex) MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
#[test]
fn an_fsdp_policy_casting_parameters_to_bf16_is_reduced_precision() {
    let a = run(FSDP_POLICY);
    for rule in ["EA201", "EA202"] {
        assert!(lines_of(&a, rule).is_empty(), "{rule}: {:?}", a.findings);
    }
    // a policy that keeps fp32 parameters leaves the file in fp32
    let fp32 = run(&FSDP_POLICY.replace("param_dtype=torch.bfloat16", "param_dtype=torch.float32"));
    assert!(!lines_of(&fp32, "EA202").is_empty(), "{:?}", fp32.findings);
}

// Ex) from pyner.io.data_transformer import DataTransformer
#[test]
fn a_data_transformer_names_no_transformer_model() {
    // the tagger above, its vocabulary built by a `DataTransformer` of its package
    let src = LSTM_TAGGER.replace(
        "import torch.nn as nn\n",
        "import torch.nn as nn\nfrom pyner.io.data_transformer import DataTransformer\n\ndata_transformer = DataTransformer(vocab_path='vocab.pkl')\ndata_transformer.build_vocab()\n",
    );
    let a = run(&src);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
    // a Transformer encoder beside the LSTM is attention, which cuDNN does not cover
    let attn = run(&src.replace(
        "        self.out = nn.Linear(dim, tags)",
        "        self.enc = nn.TransformerEncoderLayer(dim, 8)\n        self.out = nn.Linear(dim, tags)",
    ));
    assert!(!lines_of(&attn, "EA202").is_empty(), "{:?}", attn.findings);
}
