//! Rules stay silent where the waste they describe costs nothing as the script runs (a tensor
//! built once, precision advice for an fp64 model, compiling a loop of a few iterations), and
//! file-level findings land on the line that places the model.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines};

const TRAIN_HEAD: &str = "\
import torch
import torch.nn as nn
device = torch.device('cuda')
model = nn.Linear(4, 4).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
";

#[test]
fn cpu_tensor_built_once_is_not_reported() {
    // module-level setup and a once-per-epoch sample
    let src = format!(
        "{TRAIN_HEAD}\
idx = torch.randperm(100).to(device)
def train(epoch):
    for x, y in loader:
        loss = model(x.to(device)).sum()
        loss.backward()
        optimizer.step()
for epoch in range(10):
    train(epoch)
    sample = torch.randn(64, 20).to(device)
"
    );
    let a = run(&src);
    assert!(lines(&a, "EA304").is_empty(), "{:?}", a.findings);
}

#[test]
fn cpu_tensor_built_every_step_is_reported() {
    let src = format!(
        "{TRAIN_HEAD}\
for x, y in loader:
    mask = torch.zeros(4, 4).to(device)
    loss = model(x.to(device) * mask).sum()
    loss.backward()
    optimizer.step()
"
    );
    assert_eq!(lines(&run(&src), "EA304"), [7]);
}

#[test]
fn cpu_tensor_in_forward_or_a_per_step_helper_is_reported() {
    let src = "\
import torch
import torch.nn as nn
device = torch.device('cuda')
class Net(nn.Module):
    def forward(self, x):
        h = torch.zeros(x.size(0), 8).to(device)
        return x + self.bias(h)
    def bias(self, h):
        return h + torch.ones(8).to(device)
def make_noise(n):
    return torch.randn(n, 4).to(device)
def init_state(n):
    return torch.zeros(n, 4).to(device)
model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
state = init_state(4)
for x in loader:
    loss = model(x.to(device) + make_noise(4)).sum()
    loss.backward()
    optimizer.step()
";
    // forward (6), a method forward calls (9), a function the step loop calls (11); not the
    // one called once before the loop (13)
    assert_eq!(lines(&run(src), "EA304"), [6, 9, 11]);
}

const CONV_NET: &str = "\
import torch
import torch.nn as nn
device = torch.device('cuda')
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 256, 3)
        self.fc = nn.Linear(4096, 1000)
";

const CONV_TRAIN: &str = "\
model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = model(x.to(device)).sum()
    loss.backward()
    optimizer.step()
";

#[test]
fn no_tf32_is_silent_on_a_conv_net_whose_convolutions_already_run_tf32() {
    let a = run(&format!("{CONV_NET}{CONV_TRAIN}"));
    assert!(lines(&a, "EA202").is_empty(), "{:?}", a.findings);
    // the conv advice still stands
    assert_eq!(lines(&a, "EA204"), [9]);
}

#[test]
fn no_tf32_still_fires_on_a_conv_net_with_attention_or_cudnn_tf32_off() {
    let attn = CONV_NET.replace(
        "self.fc = nn.Linear(4096, 1000)",
        "self.attn = nn.MultiheadAttention(16, 4)",
    );
    assert_eq!(lines(&run(&format!("{attn}{CONV_TRAIN}")), "EA202"), [9]);
    let off = format!("{CONV_NET}torch.backends.cudnn.allow_tf32 = False\n{CONV_TRAIN}");
    assert_eq!(lines(&run(&off), "EA202"), [10]);
    let vit = "\
import torch
import torchvision
device = torch.device('cuda')
model = torchvision.models.vit_b_16().to(device)
model.eval()
with torch.no_grad():
    for x in loader:
        out = model(x.to(device))
";
    assert_eq!(lines(&run(vit), "EA202"), [4]);
}

#[test]
fn no_tf32_still_fires_where_the_script_may_build_a_transformer_instead() {
    let src = "\
import torch
import torchvision
import vision_transformer as vits
device = torch.device('cuda')
if 'vit' in arch:
    model = vits.__dict__[arch]()
else:
    model = torchvision.models.__dict__[arch]()
model.cuda()
model.eval()
with torch.no_grad():
    for x in loader:
        out = model(x.cuda())
";
    assert_eq!(lines(&run(src), "EA202"), [9]);
}

#[test]
fn precision_advice_is_silent_on_a_float64_model() {
    let model = "\
import torch
import torch.nn as nn
device = torch.device('cuda')
class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4096, 4096)
";
    let train = "\
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = model(x.to(device)).sum()
    loss.backward()
    optimizer.step()
";
    let fp32 = run(&format!("{model}model = Seq().to(device)\n{train}"));
    assert_eq!(lines(&fp32, "EA201"), [10]);
    assert_eq!(lines(&fp32, "EA202"), [8]);
    for placement in [
        "model = Seq().to(device).double()\n",
        "model = Seq().to(device)\nmodel.double()\n",
        "torch.set_default_dtype(torch.float64)\nmodel = Seq().to(device)\n",
        "model = Seq().to(device, dtype=torch.float64)\n",
    ] {
        let a = run(&format!("{model}{placement}{train}"));
        for rule in ["EA201", "EA202"] {
            assert!(lines(&a, rule).is_empty(), "{placement}: {:?}", a.findings);
        }
    }
    // a float64 tensor is not a float64 model
    let loss64 = run(&format!(
        "{model}model = Seq().to(device)\nw = torch.ones(3).double()\n{train}"
    ));
    assert_eq!(lines(&loss64, "EA202"), [8]);
}

#[test]
fn no_compile_is_silent_when_training_runs_a_few_known_steps() {
    let few = "\
import argparse
import torch
import torch.nn as nn
parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=15)
opt = parser.parse_args()
device = torch.device('cuda')
model = nn.Linear(4, 4).to(device)
optimizer = torch.optim.LBFGS(model.parameters())
for i in range(opt.steps):
    def closure():
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        return loss
    optimizer.step(closure)
";
    let a = run(few);
    assert!(lines(&a, "EA203").is_empty(), "{:?}", a.findings);
    // a thousand steps amortise the compilation
    let many = few.replace("default=15", "default=1000");
    assert_eq!(lines(&run(&many), "EA203"), [8]);
}

#[test]
fn python_loop_numeric_needs_element_writes_into_an_array() {
    let head = "import numpy as np\nout = np.zeros((n, k))\n";
    // a dict keyed by strings, one whole column per key
    let dict = format!(
        "{head}cols = {{}}\nfor i in range(out.shape[-1]):\n    cols[f'p_{{i}}'] = out[:, i]\n"
    );
    let a = run(&dict);
    assert!(lines(&a, "EA603").is_empty(), "{:?}", a.findings);
    // a column per iteration into an array: vectorised per column
    let cols =
        format!("{head}src = np.ones((n, k))\nfor i in range(k):\n    out[:, i] = src[:, i] * 2\n");
    let a = run(&cols);
    assert!(lines(&a, "EA603").is_empty(), "{:?}", a.findings);
    // element writes still fire: `a[i, j]` and the chained `a[i][j]`
    let tuple =
        format!("{head}for i in range(n):\n    for j in range(k):\n        out[i, j] = i * j\n");
    assert_eq!(lines(&run(&tuple), "EA603"), [3]);
    let chained =
        format!("{head}for i in range(n):\n    for j in range(k):\n        out[i][j] = i * j\n");
    assert_eq!(lines(&run(&chained), "EA603"), [3]);
}

#[test]
fn a_local_module_built_and_placed_in_a_list_anchors_the_model_findings() {
    let src = "\
import torch
import torch.nn as nn
device = torch.device('cuda')
class Layer(nn.Linear):
    def __init__(self, a, b):
        super().__init__(a, b)
        self.relu = nn.ReLU()
        self.opt = torch.optim.Adam(self.parameters())
    def fit(self, x):
        for i in range(1000):
            loss = self.relu(self.forward(x)).sum()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
class Net(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device)]
net = Net([784, 500])
";
    let a = run(src);
    // the placement (20), never the submodule attribute `self.relu = nn.ReLU()` (7)
    assert_eq!(lines(&a, "EA203"), [20], "{:?}", a.findings);
    assert_eq!(lines(&a, "EA202"), [20]);
}

#[test]
fn a_placement_that_runs_as_shipped_anchors_over_one_behind_a_default_off_flag() {
    let src = "\
import argparse
import torch
import torchvision
parser = argparse.ArgumentParser()
parser.add_argument('--sync-bn', action='store_true')
parser.add_argument('--arch', default='resnet18')
args = parser.parse_args()
model = torchvision.models.resnet18()
if args.sync_bn:
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model).cuda()
else:
    if args.arch.startswith('vgg'):
        model.features = torch.nn.DataParallel(model.features)
        model.cuda()
    else:
        model = torch.nn.DataParallel(model).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = model(x.cuda()).sum()
    loss.backward()
    optimizer.step()
";
    let a = run(src);
    assert_eq!(lines(&a, "EA203"), [16], "{:?}", a.findings);
}

#[test]
fn row_loop_over_a_handful_of_rows_is_not_reported() {
    // a frame cut to a few known rows, directly or through its variable
    let few = "\
import pandas as pd
df = pd.read_csv('visits.csv')
test = df[:5]
for i, row in test.iterrows():
    print(row)
for row in df.head().itertuples():
    print(row)
top = df.sample(10)
top['s'] = top.apply(lambda r: r['a'] + r['b'], axis=1)
";
    assert_eq!(lines(&run(few), "EA601"), Vec::<usize>::new());
    // the whole frame, a long cut, a cut of unknown size, a name also assigned the whole frame
    let many = "\
import pandas as pd
df = pd.read_csv('visits.csv')
for i, row in df.iterrows():
    print(row)
for row in df[:5000].itertuples():
    print(row)
for row in df.head(n_rows).itertuples():
    print(row)
part = df[:5]
part = df
for i, row in part.iterrows():
    print(row)
";
    assert_eq!(lines(&run(many), "EA601"), vec![3, 5, 7, 11]);
}

#[test]
fn tf32_advice_needs_matmul_work_the_file_shows() {
    let head = "\
import torch
import torch.nn as nn
device = torch.device('cuda')
";
    let step = "\
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
    loss.backward()
    optimizer.step()
";
    let at = |model: &str| {
        let src = format!("{head}{model}{step}");
        lines(&run(&src), "EA202")
    };
    // layers out of view, or a convolutional family by name: silent
    assert_eq!(
        at("from models import Net\nmodel = Net().to(device)\n"),
        Vec::<usize>::new()
    );
    assert_eq!(
        at("from models.resnet import CAResNet18\nmodel = CAResNet18(num_classes=10).to(device)\n"),
        Vec::<usize>::new()
    );
    // a recurrent decoder named so: silent (cuDNN runs its LSTM in TF32 by default)
    assert_eq!(
        at("from model import EncoderCNN, DecoderRNN\nmodel = DecoderRNN(512, 10000).to(device)\n"),
        Vec::<usize>::new()
    );
    // a transformer named so, an MLP of Linear layers: reported
    assert_eq!(
        at("from model import GPT\nmodel = GPT(cfg).to(device)\n"),
        vec![5]
    );
    assert_eq!(
        at("from basicsr.archs import CodeFormer\nmodel = CodeFormer(dim=512).to(device)\n"),
        vec![5]
    );
    assert_eq!(
        at(
            "model = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 512)).to(device)\n"
        ),
        vec![4]
    );
}

#[test]
fn precision_decided_elsewhere_or_a_transformers_utility_gives_no_tf32_advice() {
    let step = "\
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
for x in loader:
    loss = model(x.to('cuda')).sum()
    loss.backward()
    optimizer.step()
";
    let ea202 = |head: &str| lines(&run(&format!("import torch\n{head}{step}")), "EA202");
    // OpenAI CLIP's weights load in fp16 on CUDA
    assert_eq!(
        ea202("import clip\nmodel, preprocess = clip.load('ViT-L/14', device='cuda')\n"),
        Vec::<usize>::new()
    );
    // a hub model with its own code picks its dtype; naming one makes it known again
    let remote = "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(path, trust_remote_code=True).to('cuda')\n";
    assert_eq!(ea202(remote), Vec::<usize>::new());
    assert_eq!(
        ea202(&remote.replace(
            "trust_remote_code=True",
            "trust_remote_code=True, torch_dtype=torch.float32"
        )),
        vec![3]
    );
    // a scheduler imported from transformers does not make a timm backbone a transformer
    let timm = "import timm\nfrom transformers import get_cosine_schedule_with_warmup\nmodel = timm.create_model(cfg['name']).to('cuda')\n";
    assert_eq!(ea202(timm), Vec::<usize>::new());
}

#[test]
fn a_convolutional_family_by_name_gets_cudnn_autotuning_advice() {
    let src = |model: &str| {
        format!(
            "import torch\n{model}optimizer = torch.optim.Adam(model.parameters())\nfor x, y in loader:\n    loss = (model(x.cuda()) - y.cuda()).abs().mean()\n    loss.backward()\n    optimizer.step()\n"
        )
    };
    let unet = src("from unet import UNet\nmodel = UNet(n_channels=3, n_classes=1).cuda()\n");
    assert_eq!(lines(&run(&unet), "EA204"), vec![3]);
    // a model named for nothing in particular: its layers are out of view, no advice
    let net = src("from models import Net\nmodel = Net().cuda()\n");
    assert_eq!(lines(&run(&net), "EA204"), Vec::<usize>::new());
}

#[test]
fn int8_weights_get_no_compile_advice() {
    let src = "\
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
model = AutoModelForCausalLM.from_pretrained('llama', load_in_8bit=True, device_map='auto')
args = TrainingArguments('out', per_device_train_batch_size=4, fp16=True)
Trainer(model=model, args=args, train_dataset=ds).train()
";
    assert_eq!(lines(&run(src), "EA203"), Vec::<usize>::new());
    let full = src.replace(", load_in_8bit=True", "");
    assert_eq!(lines(&run(&full), "EA203"), vec![3]);
}
