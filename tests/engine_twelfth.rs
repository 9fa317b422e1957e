//! The twelfth accuracy round: shapes from the blind wave g208– and from the agreement study
//! (two labellers, one file set) that the engine read wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A GCN script whose `__main__` block only prints: `main`, and the training it calls, never
/// run.
const MAIN_LEFT_UNCALLED: &str = "import torch
import torch.nn.functional as F
from models import GCN

def train(model, optimizer, features, adj, labels):
    model.train()
    optimizer.zero_grad()
    loss = F.nll_loss(model(features, adj), labels)
    loss.backward()
    optimizer.step()
    print('loss: {:.4f}'.format(loss.item()))

def main():
    features, adj, labels = torch.load('graph.pt')
    model = GCN(1433, 16, 7).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(200):
        train(model, optimizer, features.cuda(), adj.cuda(), labels.cuda())

if __name__ == '__main__':
    print('good')
";

// Ex) if __name__ == '__main__': print('good')   (main never called)
#[test]
fn a_script_whose_main_block_calls_nothing_runs_none_of_its_functions() {
    let a = run(MAIN_LEFT_UNCALLED);
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    // calling main from the block runs the training
    let called = MAIN_LEFT_UNCALLED.replace("print('good')", "main()");
    let a = run(&called);
    assert_eq!(lines_of(&a, "EA301"), vec![11]);
    assert_eq!(lines_of(&a, "EA203"), vec![15]);
}

// Ex) @hydra.main(config_name='config')
//     def main(cfg): ... train(...)
//     if __name__ == '__main__': main()
#[test]
fn a_decorated_main_reaches_the_functions_it_calls() {
    let hydra = MAIN_LEFT_UNCALLED
        .replace("import torch\n", "import hydra\nimport torch\n")
        .replace(
            "def main():",
            "@hydra.main(config_name='config')\ndef main(cfg):",
        )
        .replace("print('good')", "main()");
    let a = run(&hydra);
    assert_eq!(lines_of(&a, "EA301"), vec![12]);
    // the command line picks the function by name: any of them may run
    let dispatched = MAIN_LEFT_UNCALLED
        .replace("import torch\n", "import sys\nimport torch\n")
        .replace("print('good')", "globals()[sys.argv[1]]()");
    assert_eq!(lines_of(&run(&dispatched), "EA301"), vec![12]);
}

/// A Lightning script: the framework runs the training loop of the module `trainer.fit` is
/// handed; an inference placement follows.
const LIGHTNING: &str = "import pytorch_lightning as pl
import torch
import timm

class LitClassifier(pl.LightningModule):
    def __init__(self, lr):
        super().__init__()
        self.net = timm.create_model('resnet34', pretrained=True, num_classes=10)
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)

def main():
    dm = ImageDataModule('data/')
    model = LitClassifier(1e-3)
    trainer = pl.Trainer(accelerator='gpu', devices=1, precision=16, max_epochs=10)
    trainer.fit(model, dm)
    best = LitClassifier.load_from_checkpoint('best.ckpt').to('cuda').eval()
    return best

if __name__ == '__main__':
    main()
";

// Ex) model = LitClassifier(1e-3) ... trainer.fit(model, dm)
#[test]
fn a_lightning_script_compiles_the_module_it_fits_where_it_is_built() {
    let a = run(LIGHTNING);
    assert_eq!(lines_of(&a, "EA203"), vec![20]);
    assert_eq!(lines_of(&a, "EA204"), vec![20]);
    // rebuilt from a checkpoint: still where it is built
    let reloaded = LIGHTNING.replace(
        "    trainer = pl.Trainer(",
        "    if resume:\n        model = model.load_from_checkpoint('last.ckpt')\n    trainer = pl.Trainer(",
    );
    assert_eq!(lines_of(&run(&reloaded), "EA203"), vec![20]);
    // replaced behind a switch by a checkpoint of the class: still where it is built
    let from_ckpt = LIGHTNING.replace(
        "    trainer = pl.Trainer(",
        "    if ckpt:\n        model = LitClassifier.load_from_checkpoint(ckpt)\n    trainer = pl.Trainer(",
    );
    assert_eq!(lines_of(&run(&from_ckpt), "EA203"), vec![20]);
    // compiled in the module: nothing to say
    let compiled = LIGHTNING.replace(
        "        self.lr = lr\n",
        "        self.lr = lr\n        self.net = torch.compile(self.net)\n",
    );
    assert!(lines_of(&run(&compiled), "EA203").is_empty());
    // never fitted: the framework runs nothing
    let unfitted = LIGHTNING.replace("    trainer.fit(model, dm)\n", "");
    assert!(lines_of(&run(&unfitted), "EA203").is_empty());
}

/// A batch classifier that copies the logits to the host once and reads its results there.
const HOST_RESULTS: &str = "import torch
device = torch.device('cuda')
model = Net().to(device)
for ids in range(0, 100):
    batch_img = torch.stack(load(ids))
    output = model(batch_img.to(device)).cpu()
    predict = torch.softmax(output, dim=1)
    probs, classes = torch.max(predict, dim=1)
    for idx, (pro, cla) in enumerate(zip(probs, classes)):
        print(cla.numpy(), pro.numpy())
    top = predict.argmax(1)
    print(top.tolist())
";

// Ex) output = model(x).cpu(); probs, classes = torch.max(torch.softmax(output, 1), 1)
#[test]
fn values_computed_from_a_host_copy_stay_on_the_host() {
    let a = run(HOST_RESULTS);
    assert_eq!(lines_of(&a, "EA301"), vec![6]);
    // the logits left on the GPU: every read waits
    let a = run(&HOST_RESULTS.replace(".to(device)).cpu()", ".to(device))"));
    assert_eq!(lines_of(&a, "EA301"), vec![10, 12]);
}

// Ex) def training_step(self, batch, batch_idx): ... self.log('loss', loss.item())
#[test]
fn a_read_in_the_step_a_framework_runs_is_a_host_sync() {
    let logged = LIGHTNING.replace(
        "        return torch.nn.functional.cross_entropy(self.net(x), y)\n",
        "        loss = torch.nn.functional.cross_entropy(self.net(x), y)\n        self.log('loss', loss.item())\n        return loss\n",
    );
    let a = run(&logged);
    assert_eq!(lines_of(&a, "EA301"), vec![14]);
    // every 50 batches only, or in the step run once after training: nothing per step
    let guarded = logged.replace(
        "        self.log('loss', loss.item())\n",
        "        if batch_idx % 50 == 0:\n            self.log('loss', loss.item())\n",
    );
    assert!(lines_of(&run(&guarded), "EA301").is_empty());
    let tested = logged.replace("def training_step(", "def test_step(");
    assert!(lines_of(&run(&tested), "EA301").is_empty());
    // Ignite: the process function handed to `Engine`
    let ignite = "import torch
from ignite.engine import Engine

def main():
    model = Net().cuda()
    optimizer = torch.optim.Adam(model.parameters())

    def step(engine, batch):
        x, y = batch[0].cuda(non_blocking=True), batch[1].cuda(non_blocking=True)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return {'loss': loss.item()}

    trainer = Engine(step)
    trainer.run(loader, max_epochs=10)

main()
";
    assert_eq!(lines_of(&run(ignite), "EA301"), vec![14]);
}

/// A tagger's dataset: windows of word ids held in lists, indexed per item after the
/// tutorial's `torch.is_tensor(idx)` check.
const ID_WINDOWS: &str = "import torch
from torch.utils.data import Dataset, DataLoader

class Windows(Dataset):
    def __init__(self, ids, labels):
        self.ids = ids
        self.labels = labels

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, idx):
        if torch.is_tensor(idx):
            idx = idx.tolist()
        return torch.tensor(self.ids[idx]), torch.tensor(self.labels[idx])

train_ids, train_labels = build_windows('train.txt')
loader = DataLoader(Windows(train_ids, train_labels), batch_size=32, shuffle=True)
model = Tagger().cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(5):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) def __getitem__(self, idx): if torch.is_tensor(idx): idx = idx.tolist() ...
#[test]
fn the_tutorial_index_check_costs_an_item_nothing() {
    let a = run(ID_WINDOWS);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    // an item read from disk is work a worker could overlap
    let read = ID_WINDOWS.replace(
        "return torch.tensor(self.ids[idx])",
        "return torch.tensor(np.load(self.ids[idx]))",
    );
    assert_eq!(lines_of(&run(&read), "EA101"), vec![18]);
}

// Ex) tp = torch.sum(\n    (preds == 1) & (labels == 1)\n).item()
#[test]
fn a_read_closing_a_call_written_over_lines_is_reported_where_the_statement_starts() {
    let src = "import torch
model = Net().cuda()
for x, y in loader:
    preds = model(x.cuda()).argmax(1)
    tp = torch.sum(
        (preds == 1) & (y.cuda() == 1)
    ).item()
    boxes = (preds
             .detach()
             .cpu()
             .numpy())
";
    assert_eq!(lines_of(&run(src), "EA301"), vec![5, 10]);
}

// Ex) parser = configargparse.ArgParser(...); parser.add("--use_wandb", action="store_true")
#[test]
fn configargparse_options_have_their_defaults() {
    let src = "import configargparse
import torch
import wandb

def train(args, model, loader):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        if args.use_wandb:
            wandb.log({'loss': loss.item()})

if __name__ == '__main__':
    parser = configargparse.ArgParser(default_config_files=['config.txt'])
    parser.add('--use_wandb', action='store_true', default=False)
    args = parser.parse_args()
    train(args, Net().cuda(), make_loader())
";
    assert!(lines_of(&run(src), "EA301").is_empty());
    let on = src.replace("default=False", "default=True");
    assert_eq!(lines_of(&run(&on), "EA301"), vec![10]);
}

// Ex) data_collator = default_data_collator; DataLoader(train_dataset, collate_fn=data_collator)
#[test]
fn a_collate_that_joins_padded_ids_or_names_the_default_one_only_pads() {
    let src = "import torch
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, AutoModelForQuestionAnswering, default_data_collator

tokenizer = AutoTokenizer.from_pretrained('bert-base-chinese')
model = AutoModelForQuestionAnswering.from_pretrained('bert-base-chinese').cuda()
train_dataset = raw['train'].map(prepare_features, batched=True)
data_collator = default_data_collator
train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=data_collator, batch_size=8)
optimizer = torch.optim.AdamW(model.parameters())
for epoch in range(3):
    for batch in train_dataloader:
        loss = model(**{k: v.cuda() for k, v in batch.items()}).loss
        loss.backward()
        optimizer.step()
";
    assert!(lines_of(&run(src), "EA101").is_empty());
    // a collate of the file that joins what the dataset tokenized and padded
    let joined = src
        .replace(
            "data_collator = default_data_collator\n",
            "def join(batch):\n    ids, labels = [], []\n    for d, y in batch:\n        ids.append(d['input_ids'])\n        labels.append(y)\n    return torch.cat(ids), labels\n",
        )
        .replace("collate_fn=data_collator", "collate_fn=join");
    assert!(lines_of(&run(&joined), "EA101").is_empty());
    // a collate that augments each sample is work per item
    let augmented = joined.replace(
        "ids.append(d['input_ids'])",
        "ids.append(mask_tokens(d['input_ids']))",
    );
    assert_eq!(lines_of(&run(&augmented), "EA101"), vec![14]);
}

// Ex) model = DETR(num_classes=10, hidden_dim=256).to(device)
//     model = SentenceTransformer(args.model_name); model.encode(batch, device=device)
#[test]
fn detection_transformers_and_sentence_encoders_do_matmul_work() {
    let detr = "import torch
from models import DETR
device = torch.device('cuda')
model = DETR(num_classes=10, hidden_dim=256).to(device)
optimizer = torch.optim.AdamW(model.parameters())
for images, targets in loader:
    loss = criterion(model(images.to(device)), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";
    assert_eq!(lines_of(&run(detr), "EA202"), vec![4]);
    // the same loop over an imported model the file does not name: it may be convolutional
    assert!(lines_of(&run(&detr.replace("DETR", "Net")), "EA202").is_empty());
    let encoder = "import pandas as pd
import torch
from sentence_transformers import SentenceTransformer

def encode(texts, name):
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    model = SentenceTransformer(name)
    model = model.to(device)
    out = []
    for i in range(0, len(texts), 64):
        out.extend(model.encode(texts[i:i + 64], device=device))
    return out

if __name__ == '__main__':
    df = pd.read_csv('passages.tsv', sep='\\t')
    pd.to_pickle(encode(df['text'].tolist(), 'all-MiniLM-L6-v2'), 'emb.pkl')
";
    assert_eq!(lines_of(&run(encoder), "EA202"), vec![8]);
}

// Ex) import torchvision_sunner.data as sunnerData; loader = sunnerData.DataLoader(...)
#[test]
fn a_library_sharing_torchs_prefix_builds_no_torch_loader() {
    let src = "import torch
import torchvision_sunner.data as sunnerData
loader = sunnerData.DataLoader(sunnerData.ImageDataset(root=['faces/']), batch_size=4)
model = StyleGAN().cuda()
opt = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for img in loader:
        loss = model(img.cuda()).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
";
    assert!(lines_of(&run(src), "EA101").is_empty());
    let torch_loader = src.replace(
        "import torchvision_sunner.data as sunnerData\n",
        "import torchvision_sunner.data as sunnerData\nfrom torch.utils.data import DataLoader\n",
    ).replace("loader = sunnerData.DataLoader(", "loader = DataLoader(");
    assert_eq!(lines_of(&run(&torch_loader), "EA101"), vec![4]);
}

/// A conditional VAE for MNIST whose decoder sizes come from attributes `__init__` binds from
/// its parameters' defaults: about 370,000 parameters.
const SMALL_CVAE: &str = "import torch
import torch.nn as nn
device = torch.device('cuda')

class Model(nn.Module):
    def __init__(self, latent_size=32, num_classes=10):
        super().__init__()
        self.latent_size = latent_size
        self.num_classes = num_classes
        self.conv1 = nn.Conv2d(2, 16, kernel_size=5, stride=2)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=5, stride=2)
        self.linear1 = nn.Linear(4*4*32, 300)
        self.mu = nn.Linear(300, self.latent_size)
        self.linear2 = nn.Linear(self.latent_size + self.num_classes, 300)
        self.linear3 = nn.Linear(300, 4*4*32)
        self.conv3 = nn.ConvTranspose2d(32, 16, kernel_size=5, stride=2)

model = Model().to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(100):
    for x, y in train_loader:
        loss = model(x.to(device), y.to(device)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) self.latent_size = latent_size ... nn.Linear(self.latent_size + self.num_classes, 300)
#[test]
fn layer_sizes_read_through_attributes_init_binds() {
    let a = run(SMALL_CVAE);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA204").is_empty(), "{:?}", a.findings);
    // a wide latent space makes it a model whose arithmetic matters
    let wide = SMALL_CVAE.replace("latent_size=32", "latent_size=4096");
    assert_eq!(lines_of(&run(&wide), "EA201"), vec![21]);
}

/// A translation script that keeps its training under `if False:` and its loss helper class for
/// it, and as shipped loads a model and decodes.
const TRAINING_KEPT_OFF: &str = "import torch

class LossCompute:
    def __init__(self, opt):
        self.opt = opt

    def __call__(self, out, y):
        for i in range(0, out.size(1), 5):
            loss = (out[:, i] - y).pow(2).mean()
            loss.backward()
        self.opt.step()

model = Net().cuda()
if False:
    opt = torch.optim.Adam(model.parameters())
    for x, y in loader:
        LossCompute(opt)(model(x.cuda()), y.cuda())
else:
    model = torch.load('m.pt')
for x, y in loader:
    with torch.no_grad():
        print(model(x.cuda()).sum().item())
";

// Ex) if False: ... MultiGPULossCompute(model.generator, criterion, opt=model_opt)
#[test]
fn code_under_if_false_and_the_class_only_it_builds_do_not_run() {
    let a = run(TRAINING_KEPT_OFF);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA203").is_empty(), "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA301"), vec![22]);
    // switched on, it trains
    let on = TRAINING_KEPT_OFF.replace("if False:", "if True:");
    assert_eq!(lines_of(&run(&on), "EA201"), vec![8]);
}

// Ex) if pretrained: model.fc = nn.Linear(...)  (off)   ... index=["T1", ..., "T5", ...]
#[test]
fn a_layer_built_in_a_branch_that_is_off_or_a_task_label_shows_no_matmul_work() {
    let src = "import torch
import torch.nn as nn
from models import VC3D

def build(pretrained=False):
    if pretrained:
        model = PRETRAINED
        model.fc = nn.Linear(model.fc.in_features, 9)
    else:
        model = VC3D()
    return model.to('cuda')

model = build()
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
tasks = ['T1', 'T2', 'T3', 'T4', 'T5']
";
    assert!(lines_of(&run(src), "EA202").is_empty());
    // the branch on as shipped: a Linear head given to a body the file does not show says
    // nothing of that body, which may be convolutional (the twenty-seventh session's reading,
    // tests/engine_twentyseventh.rs)
    let on = src.replace("pretrained=False", "pretrained=True");
    assert!(lines_of(&run(&on), "EA202").is_empty());
    // a T5 model by name is one
    let t5 = src.replace(
        "tasks = ['T1', 'T2', 'T3', 'T4', 'T5']",
        "name = 't5-small'",
    );
    assert_eq!(lines_of(&run(&t5), "EA202"), vec![11]);
}

/// A classifier trained with class proxies that get their own optimizer step once per epoch.
const PROXY_STEP_PER_EPOCH: &str = "import torch
from torch.utils.data import DataLoader
model = Net().cuda()
proxies = Proxies().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer_proxies = torch.optim.SGD(proxies.parameters(), lr=0.1)
loader = DataLoader(ImageSet('train'), batch_size=64, shuffle=True, num_workers=4)
for e in range(100):
    print('Epoch:{}'.format(e))
    optimizer_proxies.zero_grad()
    for x, y in loader:
        loss = criterion(model(x.cuda()), proxies(), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    optimizer_proxies.step()
";

// Ex) for e in range(epochs): for x, y in loader: ... optimizer.step(); optimizer_proxies.step()
#[test]
fn a_loop_around_a_training_pass_is_an_epoch_loop_whatever_it_steps_per_pass() {
    let a = run(PROXY_STEP_PER_EPOCH);
    assert_eq!(lines_of(&a, "EA201"), vec![11]);
    assert!(lines_of(&a, "EA504").is_empty(), "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA103"), vec![7]);
    // a WGAN's critic iterations broken off the loader: the loop around them is the step
    let wgan = PROXY_STEP_PER_EPOCH.replace(
        "    for x, y in loader:\n",
        "    for i, (x, y) in enumerate(loader):\n        if i == n_critic:\n            break\n",
    );
    assert_eq!(lines_of(&run(&wgan), "EA201"), vec![8]);
}

// Ex) dataset = PretrainDataset(data_path, tokenizer_path="./tokenizer.model", max_length=512)
#[test]
fn a_dataset_handed_a_tokenizer_by_its_path_feeds_token_ids() {
    let src = "import torch
from torch.utils.data import DataLoader
from model import Transformer, ModelArgs
from dataset import PretrainDataset

dataset = PretrainDataset('data/pretrain.jsonl', tokenizer_path='./tokenizer.model', max_length=512)
dataloader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=0)
model = Transformer(ModelArgs(vocab_size=32000)).cuda()
optimizer = torch.optim.AdamW(model.parameters())
for epoch in range(2):
    for x, y in dataloader:
        loss = model(x.cuda(), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";
    let a = run(src);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA102").is_empty(), "{:?}", a.findings);
    // a dataset of images keeps both findings
    let images = src.replace("tokenizer_path='./tokenizer.model'", "image_dir='./images'");
    assert_eq!(lines_of(&run(&images), "EA101"), vec![7]);
}

/// A TD3 script whose training and testing both sit behind switches that are off by default:
/// as shipped it builds its networks and stops.
const TRAIN_AND_TEST_OFF: &str = "import argparse
import torch
import torch.nn as nn
from torchvision.models import resnet18
parser = argparse.ArgumentParser()
parser.add_argument('--train', action='store_true')
parser.add_argument('--test', action='store_true')
args = parser.parse_args()
device = torch.device('cuda')

class Critic(nn.Module):
    def __init__(self, state_dim, hidden):
        super().__init__()
        self.encoder = resnet18()
        self.attn = nn.MultiheadAttention(hidden, 8)
        self.head = nn.Linear(hidden, 1)

critic = Critic(STATE_DIM, HIDDEN).to(device)
optimizer = torch.optim.Adam(critic.parameters())
if args.train:
    for step in range(1000000):
        loss = critic(sample_batch().to(device)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
if args.test:
    for episode in range(10):
        print(critic(observe().to(device)))
";

// Ex) if args.train: for step in ...  /  if args.test: for episode in ...  (both off)
#[test]
fn a_script_whose_every_step_loop_is_switched_off_computes_nothing() {
    let a = run(TRAIN_AND_TEST_OFF);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA204").is_empty(), "{:?}", a.findings);
    // with training on by default, the model trains in fp32
    let on = TRAIN_AND_TEST_OFF.replace(
        "parser.add_argument('--train', action='store_true')",
        "parser.add_argument('--train', type=bool, default=True)",
    );
    let a = run(&on);
    assert_eq!(lines_of(&a, "EA202"), vec![18]);
    assert_eq!(lines_of(&a, "EA204"), vec![18]);
}

// Ex) images = Variable(images).cuda()  (a batch, not a module: the small CNN stays small)
#[test]
fn a_batch_wrapped_in_variable_and_moved_is_no_model() {
    let src = "import torch
import torch.nn as nn
from torch.autograd import Variable

class CNN(nn.Module):
    def __init__(self):
        super(CNN, self).__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(1, 16, kernel_size=5, padding=2), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(7*7*32, 10)

cnn = CNN()
cnn.cuda()
optimizer = torch.optim.Adam(cnn.parameters(), lr=0.001)
for epoch in range(5):
    for i, (images, labels) in enumerate(train_loader):
        images = Variable(images).cuda()
        labels = Variable(labels).cuda()
        loss = criterion(cnn(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";
    let a = run(src);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA204").is_empty(), "{:?}", a.findings);
    // a wide head makes it a model whose arithmetic matters
    let wide = src.replace("nn.Linear(7*7*32, 10)", "nn.Linear(7*7*32, 4096)");
    assert_eq!(lines_of(&run(&wide), "EA201"), vec![15]);
}

// Ex) pred = torch.tensor(tokenizer.decode(ids.cpu().numpy())); l1 = F.l1_loss(pred, gt); l1.item()
#[test]
fn a_tensor_built_from_host_data_without_a_device_is_on_the_host() {
    let src = "import torch
import torch.nn.functional as F
model = Policy().cuda()
optimizer = torch.optim.AdamW(model.parameters())
for batch in loader:
    out = model(batch['pixels'].cuda())
    out.loss.backward()
    optimizer.step()
    pred = torch.tensor(decode(out.logits.argmax(-1).cpu().numpy()))
    gt = torch.tensor(decode(batch['labels'].numpy()))
    l1 = F.l1_loss(pred, gt)
    history.append(l1.item())
";
    // the `.cpu()` of the logits waits once; the loss of host tensors does not
    assert_eq!(lines_of(&run(src), "EA301"), vec![9]);
    let on_gpu = src.replace(
        "pred = torch.tensor(decode(out.logits.argmax(-1).cpu().numpy()))",
        "pred = torch.tensor(decode(out.logits.argmax(-1).cpu().numpy()), device='cuda')",
    );
    assert_eq!(lines_of(&run(&on_gpu), "EA301"), vec![9, 12]);
}

// Ex) trainer = create_supervised_trainer(model, optimizer, criterion, device=device)
//     trainer.run(train_loader, max_epochs=100)
#[test]
fn an_ignite_trainer_runs_the_training_loop() {
    let src = "import torch
from ignite.engine import create_supervised_trainer
from models import get_cls_net

def main():
    device = torch.device('cuda')
    model = get_cls_net(cfg).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = torch.nn.CrossEntropyLoss()
    trainer = create_supervised_trainer(model, optimizer, criterion, device=device)
    trainer.run(train_loader, max_epochs=100)

main()
";
    assert_eq!(lines_of(&run(src), "EA203"), vec![7]);
    // built and never run: nothing trains
    let idle = src.replace("    trainer.run(train_loader, max_epochs=100)\n", "");
    assert!(lines_of(&run(&idle), "EA203").is_empty());
}
