//! The twenty-ninth accuracy round: shapes from the blind waves of the twenty-ninth session
//! (g776 onward) that the engine read wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};
use efficiency_audit::analysis::model::CodeKind;

/// A SegFormer run on every frame of a video through the project's own `predict` helper.
const FRAME_HELPER: &str = "import argparse
import cv2 as cv
from transformers import SegformerForSemanticSegmentation
from utils.utils import predict, draw_segmentation_map

parser = argparse.ArgumentParser()
parser.add_argument('--device', default='cuda:0')
parser.add_argument('--model', default='outputs/model_iou')
args = parser.parse_args()

model = SegformerForSemanticSegmentation.from_pretrained(args.model)
model.to(args.device)

cap = cv.VideoCapture('video.mov')
out = cv.VideoWriter('out.mp4', cv.VideoWriter_fourcc(*'mp4v'), 30, (640, 480))
while cap.isOpened():
    ret, frame = cap.read()
    if not ret:
        break
    img = cv.cvtColor(frame, cv.COLOR_BGR2RGB)
    labels = predict(model, img, args.device)
    out.write(draw_segmentation_map(labels))
";

// Ex) labels = predict(model, extractor, img, args.device) in a frame loop
#[test]
fn an_imported_inference_helper_handed_the_model_in_a_frame_loop_runs_it() {
    let a = run(FRAME_HELPER);
    assert_eq!(a.kind, CodeKind::Infer);
    assert_eq!(lines_of(&a, "EA202"), vec![12]);
    // the helper's insides are not shown: no autograd finding rests on them
    assert!(lines_of(&a, "EA401").is_empty());
    // a helper of the file itself is read where it is defined, not taken on its name
    let local = FRAME_HELPER.replace(
        "from utils.utils import predict, draw_segmentation_map\n",
        "from utils.utils import draw_segmentation_map\n\n\ndef predict(model, img, device):\n    return img\n",
    );
    assert_eq!(run(&local).kind, CodeKind::Other);
    // nor does a call that is handed no input of the iteration
    let fixed = FRAME_HELPER.replace(
        "labels = predict(model, img, args.device)",
        "labels = predict(model, args.device)",
    );
    assert!(lines_of(&run(&fixed), "EA202").is_empty());
}

// Ex) model.to(args.device).eval() ... a model run per item
#[test]
fn a_placement_chained_before_eval_puts_the_model_in_eval_mode() {
    let src = "import torch
from transformers import AutoModel

device = 'cuda'
model = AutoModel.from_pretrained('bert-base-uncased')
model.to(device).eval()
";
    assert_eq!(run(src).kind, CodeKind::Infer);
    // without the `.eval()` the file only loads a model
    let loads = src.replace("model.to(device).eval()", "model.to(device)");
    assert_eq!(run(&loads).kind, CodeKind::Other);
}

/// Trains a ResNet whose optimizer gets the parameters a helper selects; `test()` places its
/// own copy first.
const PARAM_HELPER: &str = "import sys
import torch
import torch.nn as nn
from torchvision import models

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def init_model():
    return models.resnet18(pretrained=True)


def get_require_updated_params(model, is_fixed):
    return [p for p in model.parameters() if p.requires_grad]


def test(loader):
    model = init_model()
    model = model.to(device)
    model.load_state_dict(torch.load('resnet.pt'))
    model.eval()
    with torch.no_grad():
        for images, labels in loader:
            model(images.to(device))


def train(loader):
    model = init_model()
    model = model.to(device)
    params = get_require_updated_params(model, False)
    optimizer = torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    loss_func = nn.CrossEntropyLoss()
    for epoch in range(8):
        for images, labels in loader:
            optimizer.zero_grad()
            loss = loss_func(model(images.to(device)), labels.to(device))
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    if sys.argv[1] == 'train':
        train(None)
    if sys.argv[1] == 'test':
        test(None)
";

// Ex) optimizer = torch.optim.SGD(get_require_updated_params(model, is_fixed), lr=lr)
#[test]
fn an_optimizer_over_a_helpers_parameter_selection_trains_the_model_handed_to_it() {
    let a = run(PARAM_HELPER);
    assert_eq!(lines_of(&a, "EA203"), vec![29]);
    assert_eq!(lines_of(&a, "EA204"), vec![29]);
    // a helper named for something else is not read as selecting parameters
    let other = PARAM_HELPER
        .replace(
            "params = get_require_updated_params(model, False)",
            "params = collect(model, False)",
        )
        .replace("def get_require_updated_params", "def collect");
    assert_eq!(lines_of(&run(&other), "EA203"), vec![19]);
}

/// Fine-tunes a clinical BERT with the Hugging Face Trainer; the checkpoint is loaded with
/// `trust_remote_code=True`.
const REMOTE_CODE: &str = "from transformers import AutoModelForTokenClassification, TrainingArguments, Trainer

model_name = 'emilyalsentzer/Bio_ClinicalBERT'
model = AutoModelForTokenClassification.from_pretrained(model_name, num_labels=7, trust_remote_code=True)
training_args = TrainingArguments(output_dir='./results', num_train_epochs=8, per_device_train_batch_size=4)
trainer = Trainer(model=model, args=training_args, train_dataset=None)
trainer.train()
";

// Ex) from_pretrained('emilyalsentzer/Bio_ClinicalBERT', trust_remote_code=True)
#[test]
fn remote_code_on_a_built_in_encoder_checkpoint_leaves_its_precision_known() {
    let a = run(REMOTE_CODE);
    assert_eq!(lines_of(&a, "EA201"), vec![5]);
    assert_eq!(lines_of(&a, "EA202"), vec![5]);
    // a checkpoint whose code comes from the hub may pick its own dtype (Qwen's picks bf16)
    let qwen = REMOTE_CODE.replace("emilyalsentzer/Bio_ClinicalBERT", "Qwen/Qwen-7B");
    let q = run(&qwen);
    assert!(lines_of(&q, "EA201").is_empty());
    assert!(lines_of(&q, "EA202").is_empty());
}

// Ex) for i, f in enumerate(fnames): df = pd.read_csv(f); ... df1 = pd.concat([df1, df])
#[test]
fn a_table_grown_by_concat_file_by_file_collects_per_file_results() {
    let src = "import glob as gl
import pandas as pd

fnames = sorted(gl.glob('*.csv'))
for i, f in enumerate(fnames):
    df = pd.read_csv(f)
    if i == 0:
        df1 = df
    else:
        df1 = pd.concat([df1, df])
df1.to_parquet('all.parquet')
";
    assert_eq!(lines_of(&run(src), "EA602"), vec![5]);
    // a table concatenated with something else keeps nothing of each file
    let other = src.replace("pd.concat([df1, df])", "pd.concat([df, df])");
    assert!(lines_of(&run(&other), "EA602").is_empty());
}

/// A DQN agent class (not a module) building two tiny networks on the device.
const DQN_AGENT: &str = "import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self, state_dim=8, action_dim=4, hidden_dim=32):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, hidden_dim)
        self.fc3 = nn.Linear(hidden_dim, action_dim)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class DQN:
    def __init__(self, args):
        self._behavior_net = Net().to(args.device)
        self._target_net = Net().to(args.device)
        self._optimizer = optim.Adam(self._behavior_net.parameters(), lr=args.lr)

    def update(self, state, target):
        loss = F.mse_loss(self._behavior_net(state), target)
        self._optimizer.zero_grad()
        loss.backward()
        self._optimizer.step()


def train(args, agent, batches):
    for state, target in batches:
        agent.update(state.to(args.device), target.to(args.device))


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-d', '--device', default='cuda')
    parser.add_argument('--lr', default=0.0005, type=float)
    args = parser.parse_args()
    train(args, DQN(args), [])
";

// Ex) class DQN: def __init__(self, args): self._behavior_net = Net().to(args.device)
#[test]
fn the_networks_an_agent_class_builds_are_sized_for_the_small_model_exemption() {
    assert!(lines_of(&run(DQN_AGENT), "EA202").is_empty());
    // the same agent over a wide network is no small model
    let wide = DQN_AGENT.replace("hidden_dim=32", "hidden_dim=2048");
    assert_eq!(lines_of(&run(&wide), "EA202"), vec![21]);
}

/// Exports a trained ResNet: the model is placed, switched to eval mode and handed to the
/// ONNX exporter and the tracer, one pass each.
const EXPORT: &str = "import torch
import torchvision


def main():
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = torchvision.models.resnet18(num_classes=10)
    model.load_state_dict(torch.load('best.pt', map_location='cpu'))
    model = model.to(device).eval()
    dummy = torch.randn(1, 3, 224, 224, device=device)
    torch.onnx.export(model, dummy, 'model.onnx', opset_version=17)
    traced = torch.jit.trace(model, dummy)
    traced.save('model.ts')


if __name__ == '__main__':
    main()
";

// Ex) model = model.to(device).eval(); torch.onnx.export(model, dummy, args.out)
#[test]
fn an_export_script_that_runs_no_forward_pass_of_its_own_needs_no_autotuner() {
    let a = run(EXPORT);
    assert_eq!(a.kind, CodeKind::Infer);
    assert!(lines_of(&a, "EA204").is_empty());
    // the same file also running the model on its own is reported
    let runs = EXPORT.replace(
        "    traced.save('model.ts')\n",
        "    traced.save('model.ts')\n    print(model(dummy).argmax(1))\n",
    );
    assert_eq!(lines_of(&run(&runs), "EA204"), vec![9]);
}

/// The IMDb reader and evaluation helper of *Dive into Deep Learning*, around a BiRNN trained
/// on the GPU.
const D2L: &str = "import os
import random
import torch
import torch.nn as nn

DATA_ROOT = 'data'


def read_imdb(folder='train', data_root=DATA_ROOT + '/aclImdb'):
    data = []
    for label in ['pos', 'neg']:
        folder_name = os.path.join(data_root, folder, label)
        for file in os.listdir(folder_name):
            with open(os.path.join(folder_name, file), 'r', encoding='utf-8') as f:
                content = f.read().replace('\\n', ' ').lower()
                data.append([content, 1 if label == 'pos' else 0])
    random.shuffle(data)
    return data


class BiRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4096, 4096)

    def forward(self, x):
        return self.fc(x)


train_data = read_imdb('train')
net = BiRNN()


def evaluate_accuracy(test_iter, net, device=None):
    acc, n = 0.0, 0
    with torch.no_grad():
        for x, y in test_iter:
            x, y = x.to(device), y.to(device)
            if isinstance(net, torch.nn.Module):
                net.eval()
                acc += (net(x).argmax(dim=1) == y).sum().cpu().item()
                net.train()
            else:
                acc += (net(x).argmax(dim=1) == y).sum().cpu().item()
            n += x.shape[0]
    return acc / n


def train(train_iter, test_iter, net, optimizer, device, num_epochs):
    net = net.to(device)
    for epoch in range(num_epochs):
        for X, y in train_iter:
            loss = net(X.to(device)).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(evaluate_accuracy(test_iter, net))


train(None, None, net, torch.optim.SGD(net.parameters(), lr=0.1), 'cuda', 5)
";

// Ex) if isinstance(net, torch.nn.Module): ... else: y_hat = net(x, is_training=False)
#[test]
fn the_branch_for_nets_that_are_not_modules_does_not_run_for_a_model() {
    let a = run(D2L);
    assert_eq!(lines_of(&a, "EA301"), vec![41]);
    // a test of another class decides nothing
    let other = D2L.replace("isinstance(net, torch.nn.Module)", "isinstance(net, MyNet)");
    assert_eq!(lines_of(&run(&other), "EA301"), vec![41, 44]);
}

// Ex) with open(os.path.join(folder_name, file)) as f: content = f.read().lower(); data.append([content, label])
#[test]
fn files_only_read_as_text_and_kept_are_no_per_file_work() {
    assert!(lines_of(&run(D2L), "EA602").is_empty());
    // the text parsed is work per file
    let parsed = D2L.replace(
        "data.append([content, 1 if label == 'pos' else 0])",
        "data.append([json.loads(content), 1 if label == 'pos' else 0])",
    );
    assert_eq!(lines_of(&run(&parsed), "EA602"), vec![11]);
}

// Ex) for file in os.listdir(folder): img = Image.open(path).convert('RGB'); feat = model.encode(img)
#[test]
fn a_sentence_transformers_encode_per_image_is_an_inference_step() {
    let src = "import os
import numpy as np
from PIL import Image
from sentence_transformers import SentenceTransformer

model = SentenceTransformer('clip-ViT-B-32')
embeddings = []
for file in os.listdir('data/images'):
    path = os.path.join('data/images', file)
    img = Image.open(path).convert('RGB')
    embeddings.append(model.encode(img))
np.save('emb.npy', np.array(embeddings))
";
    let a = run(src);
    assert_eq!(lines_of(&a, "EA502"), vec![10]);
    assert!(lines_of(&a, "EA602").is_empty());
    // the library's own autograd-free batching is no forward pass of this code
    assert!(lines_of(&a, "EA401").is_empty());
}

/// A module of functions: `train` hands its `use_gpu` switch (off by default) to the helper
/// that picks the device.
const PASSED_SWITCH: &str = "import torch
import torch.nn as nn


def build_device(use_gpu=False):
    device = torch.device('cpu')
    if use_gpu:
        if torch.cuda.is_available():
            device = torch.device('cuda')
    return device


def train(loader, epochs=300, use_gpu=False):
    device = build_device(use_gpu)
    model = nn.Linear(4096, 4096).to(device)
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        for x, y in loader:
            loss = model(x.to(device)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
";

// Ex) def train(..., use_gpu=False): device = build_device(use_gpu)
#[test]
fn a_switch_handed_through_a_parameter_holds_the_callers_default() {
    let a = run(PASSED_SWITCH);
    assert!(lines_of(&a, "EA201").is_empty());
    assert!(lines_of(&a, "EA203").is_empty());
    // on by default, the GPU rules apply
    let on = PASSED_SWITCH.replace("epochs=300, use_gpu=False", "epochs=300, use_gpu=True");
    assert_eq!(lines_of(&run(&on), "EA203"), vec![15]);
}

/// Continual learning whose options come from the project's own parser module.
const EXTERNAL_CUDA: &str = "import torch
import parser as file_parser


def eval_tasks(model, tasks, args):
    model.eval()
    result = []
    for t, loader in enumerate(tasks):
        rt = 0
        for x, y in loader:
            if args.cuda:
                x = x.cuda()
            _, p = torch.max(model(x, t).data.cpu(), 1)
            rt += (p == y).float().sum()
        result.append(rt)
    return result


if __name__ == '__main__':
    args = file_parser.get_parser().parse_args()
    model = torch.load(args.model)
    if args.cuda:
        model.cuda()
    print(eval_tasks(model, [], args))
";

// Ex) parser = file_parser.get_parser(); args = parser.parse_args(); if args.cuda: x = x.cuda()
#[test]
fn a_cuda_flag_of_a_command_line_parsed_elsewhere_is_opt_in() {
    let a = run(EXTERNAL_CUDA);
    assert!(lines_of(&a, "EA301").is_empty());
    assert!(lines_of(&a, "EA401").is_empty());
    // a configuration object's field may be on: both branches stay possible
    let config = EXTERNAL_CUDA.replace("args.cuda", "config.cuda").replace(
        "    print(eval_tasks(model, [], args))",
        "    config = load_config()\n    print(eval_tasks(model, [], config))",
    );
    let c = run(&config.replace(
        "def eval_tasks(model, tasks, args)",
        "def eval_tasks(model, tasks, config)",
    ));
    assert_eq!(lines_of(&c, "EA401"), vec![10]);
}

// Ex) model = CRNN(32, 1, 37, 256).cuda() (also VoxNet, FCOS, PSENet, DBNet)
#[test]
fn text_recognisers_voxel_networks_and_fcos_are_convolutional() {
    for (family, expected) in [
        ("CRNN", vec![4]),
        ("VoxNet", vec![4]),
        ("FCOSDetector", vec![4]),
        ("PSENet", vec![4]),
        ("DBNet", vec![4]),
        ("Seq2Seq", vec![]),
    ] {
        let src = format!(
            "import torch
from models import {family}

model = {family}(num_classes=37).cuda()
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = model(x.cuda()).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"
        );
        assert_eq!(lines_of(&run(&src), "EA204"), expected, "{family}");
    }
}

// Ex) lnnet = model(num_resblocks=[6, 6]).to(device); lnnet.load_state_dict(...); d4 = lnnet(x)
#[test]
fn what_a_factory_builds_places_and_loads_weights_into_is_a_model() {
    let src = "import os
import torch
from PIL import Image
from torchvision import transforms
from models import model

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
torch.backends.cudnn.benchmark = True


def main():
    lnnet = model(num_resblocks=[6, 6, 6, 6]).to(device)
    lnnet.load_state_dict(torch.load('net.pth'))
    for name in os.listdir('samples'):
        with torch.no_grad():
            x = transforms.ToTensor()(Image.open('samples/' + name).convert('RGB')).unsqueeze(0).to(device)
            out = lnnet(x)
            torch.save(out, name + '.pt')


if __name__ == '__main__':
    main()
";
    let a = run(src);
    assert_eq!(lines_of(&a, "EA502"), vec![16]);
    assert!(lines_of(&a, "EA602").is_empty());
    // placed but never loaded nor switched to evaluation: nothing says it is a network
    let plain = src.replace("    lnnet.load_state_dict(torch.load('net.pth'))\n", "");
    assert!(lines_of(&run(&plain), "EA502").is_empty());
}

/// A two-layer graph network over six named columns of a table.
const COLUMNS: &str = "import pandas as pd
import torch
import torch.nn as nn
from torch_geometric.nn import GCNConv

df = pd.read_csv('community.csv')
feature_cols = ['ba001', 'ba002', 'da001', 'da002', 'ca001', 'gb001']
x = torch.tensor(df[feature_cols].values, dtype=torch.float)


class GNN(nn.Module):
    def __init__(self, in_dim, hidden_dim=32):
        super().__init__()
        self.conv1 = GCNConv(in_dim, hidden_dim)
        self.head = nn.Linear(hidden_dim, 1)

    def forward(self, x, edge_index):
        x = self.conv1(x, edge_index)
        return self.head(x)


device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
model = GNN(in_dim=x.shape[1]).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(1, 201):
    optimizer.zero_grad()
    loss = model(x.to(device), None).sum()
    loss.backward()
    optimizer.step()
";

// Ex) x = torch.tensor(df[feature_cols].values); model = GNN(in_dim=x.shape[1])
#[test]
fn a_feature_matrix_of_named_columns_is_as_wide_as_the_columns_named() {
    let a = run(COLUMNS);
    assert!(lines_of(&a, "EA202").is_empty());
    assert!(lines_of(&a, "EA201").is_empty());
    // columns the file does not name leave the width unknown
    let unknown = COLUMNS.replace(
        "feature_cols = ['ba001', 'ba002', 'da001', 'da002', 'ca001', 'gb001']",
        "feature_cols = load_columns()",
    );
    assert_eq!(lines_of(&run(&unknown), "EA202"), vec![23]);
}

// Ex) model = BaseModel(); optimizer = Adam(model.parameters()); infer_model = train(model, optimizer, ..., device=device)
#[test]
fn a_training_function_handed_the_model_and_the_device_is_no_loader_that_places_it() {
    let src = "import torch
import timm
from trainer import train

device = torch.device('cuda')
loader = None
model = timm.create_model('densenet161', pretrained=True)
model.eval()
optimizer = torch.optim.Adam(params=model.parameters(), lr=3e-4)
infer_model = train(model, optimizer, loader, device=device)
";
    let a = run(src);
    assert_eq!(lines_of(&a, "EA203"), vec![7]);
    assert_eq!(lines_of(&a, "EA204"), vec![7]);
}

// Ex) label_ids = b_labels.to('cpu').numpy() in a BERT evaluation loop
#[test]
fn a_numpy_read_after_a_copy_to_the_host_is_a_sync() {
    let src = "import torch
from transformers import BertForSequenceClassification

device = torch.device('cuda')
model = BertForSequenceClassification.from_pretrained('bert-base-uncased').to(device)
model.eval()
for batch in loader:
    b_input_ids, b_labels = tuple(t.to(device) for t in batch)
    with torch.no_grad():
        logits = model(b_input_ids).logits
    label_ids = b_labels.to('cpu').numpy()
    results.append(label_ids)
";
    assert_eq!(lines_of(&run(src), "EA301"), vec![11]);
}

// Ex) probs = torch.softmax(output, dim=1).cpu().numpy()[0]; print(f"{file} -> {label} | {probs}")
#[test]
fn printing_a_result_already_read_to_the_host_is_the_loops_report() {
    let src = "import os
import torch
from PIL import Image

model = torch.load('model.pt').cuda()
model.eval()
for file in os.listdir('data'):
    image = preprocess(Image.open(file)).unsqueeze(0).cuda()
    with torch.no_grad():
        output = model(image)
        probs = torch.softmax(output, dim=1).cpu().numpy()[0]
        print(f'{file}: {probs}')
        scores = torch.softmax(output, dim=1)
        print(f'{file}: {scores}')
";
    assert_eq!(lines_of(&run(src), "EA504"), vec![14]);
}

/// Fine-tunes a frozen ResNet's new head; the evaluation helper runs without `no_grad`.
const THAWED: &str = "import torch
import torch.nn as nn
import torchvision.models as tm

device = torch.device('cuda')


def evaluate(model, loader):
    correct = 0
    model.eval()
    for images, labels in loader:
        outs = model(images.to(device))
        correct += (outs.argmax(1) == labels.to(device)).sum()
    return correct


resnet = tm.resnet18(pretrained=True)
for p in resnet.parameters():
    p.requires_grad = False
for p in resnet.layer4.parameters():
    p.requires_grad = True
resnet = resnet.to(device)
optimizer = torch.optim.Adam(resnet.parameters())
for epoch in range(10):
    for images, labels in train_loader:
        loss = nn.functional.cross_entropy(resnet(images.to(device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(evaluate(resnet, test_loader))
";

// Ex) for p in resnet.parameters(): p.requires_grad=False ... for p in resnet.fc.parameters(): p.requires_grad=True
#[test]
fn a_frozen_model_with_a_part_thawed_again_records_a_graph() {
    assert_eq!(lines_of(&run(THAWED), "EA401"), vec![11]);
    // frozen throughout, it records none
    let frozen = THAWED.replace(
        "for p in resnet.layer4.parameters():\n    p.requires_grad = True\n",
        "",
    );
    assert!(lines_of(&run(&frozen), "EA401").is_empty());
}

// Ex) def update(self, total_steps): if total_steps % self.freq == 0: self._update_behavior_network()
#[test]
fn a_method_calling_its_class_training_step_through_self_is_a_training_step() {
    let src = DQN_AGENT
        .replace(
            "    def update(self, state, target):\n",
            "    def update(self, state, target, t):\n        if t % 4 == 0:\n            self._learn(state, target)\n\n    def _learn(self, state, target):\n",
        )
        .replace(
            "agent.update(state.to(args.device), target.to(args.device))",
            "agent.update(state.to(args.device), target.to(args.device), 0)",
        );
    let a = run(&src);
    assert_eq!(lines_of(&a, "EA203"), vec![21]);
    // an `update` that never reaches the training step trains nothing
    let idle = src.replace(
        "        if t % 4 == 0:\n            self._learn(state, target)\n",
        "        if t % 4 == 0:\n            self.steps = t\n",
    );
    assert!(lines_of(&run(&idle), "EA203").is_empty());
}

// Ex) h5_file = h5py.File(path, 'w'); lr = h5_file.create_dataset(...); for lr_path in lr_images: ... lr[-n:] = patches
#[test]
fn a_function_writing_decoded_images_into_an_hdf5_file_is_data_work() {
    let src = "import glob
import h5py
import numpy as np
import torch
import PIL.Image as pil_image


def prepare(lr_images, out):
    h5_file = h5py.File(out, 'w')
    lr_dataset = h5_file.create_dataset('lr', shape=(0, 33, 33, 3), maxshape=(None, 33, 33, 3))
    for lr_path in lr_images:
        lr = np.array(pil_image.open(lr_path).convert('RGB')).astype(np.float32)
        lr_dataset.resize(lr_dataset.shape[0] + 1, axis=0)
        lr_dataset[-1:] = lr[None, :33, :33]
    h5_file.close()


if __name__ == '__main__':
    prepare(sorted(glob.glob('train/*')), 'train.h5')
    model = torch.nn.Conv2d(3, 3, 3).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(10):
        for x, y in loader:
            loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
";
    assert_eq!(lines_of(&run(src), "EA602"), vec![11]);
    // the same loop writing a plain Python list keeps the function's kind `other`
    let list = src.replace(
        "    lr_dataset = h5_file.create_dataset('lr', shape=(0, 33, 33, 3), maxshape=(None, 33, 33, 3))\n",
        "    lr_dataset = h5_file.require('lr')\n",
    );
    assert!(lines_of(&run(&list), "EA602").is_empty());
}

// Ex) if (i == sample_idx) and log_to_wandb: fields = [gen[0, 0].detach().cpu().numpy()]
#[test]
fn a_branch_for_the_iteration_a_fixed_name_picks_runs_once() {
    let src = "import random
import torch

model = torch.load('model.pt').cuda()
model.eval()
sample_idx = random.randint(0, 10)
fields = None
with torch.no_grad():
    for i, (inp, tar) in enumerate(valid_loader):
        gen = model(inp.cuda())
        if (i == sample_idx) and log_to_wandb:
            fields = [gen[0, 0].detach().cpu().numpy()]
        if i >= j:
            last = gen.cpu()
";
    assert_eq!(lines_of(&run(src), "EA301"), vec![14]);
    // a name the loop changes picks many iterations
    let moving = src.replace(
        "            fields = [gen[0, 0].detach().cpu().numpy()]\n",
        "            fields = [gen[0, 0].detach().cpu().numpy()]\n            sample_idx += 5\n",
    );
    assert_eq!(lines_of(&run(&moving), "EA301"), vec![12, 15]);
}

// Ex) import modules.fit as fit ... for epoch in range(EPOCHS): train_loss = fit.run(device, loader, model, optimizer)
#[test]
fn a_function_of_a_module_named_for_training_handed_the_optimizer_trains() {
    let src = "import torch
from torchvision import models
import modules.fit as fit
import modules.file as files

device = torch.device('cuda')
model = models.detection.fasterrcnn_resnet50_fpn_v2(weights='DEFAULT')
model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.005)
for epoch in range(10):
    train_loss = fit.run(device, train_loader, model, optimizer)
";
    assert_eq!(lines_of(&run(src), "EA203"), vec![8]);
    // a checkpoint helper of a module named otherwise trains nothing
    let saves = src.replace(
        "train_loss = fit.run(device, train_loader, model, optimizer)",
        "files.run(model, optimizer)",
    );
    assert!(lines_of(&run(&saves), "EA203").is_empty());
}

// Ex) model, preprocess = clip.load(base_model, device=device, jit=False); model.float()
#[test]
fn a_clip_model_cast_back_to_fp32_trains_in_fp32() {
    let src = "import clip
import torch

device = 'cuda'
model, preprocess = clip.load('ViT-B/32', device=device, jit=False)
model.float()
_, preprocess = clip.load('ViT-B/32', device=device, jit=False)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
for images, texts in loader:
    logits_per_image, logits_per_text = model(images.to(device), texts.to(device))
    loss = logits_per_image.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";
    let a = run(src);
    assert_eq!(lines_of(&a, "EA201"), vec![9]);
    // as loaded, CLIP's weights are fp16 on CUDA
    let half = src.replace("model.float()\n", "");
    assert!(lines_of(&run(&half), "EA201").is_empty());
}

// Ex) torch.set_default_device(my_device) ... DataLoader(train_dataset, batch_size=3, generator=torch.Generator(device=my_device))
#[test]
fn loaders_built_after_the_gpu_becomes_the_default_device_hold_gpu_tensors() {
    let src = "import torch
from torch.utils.data import DataLoader, TensorDataset

my_device = 'cuda'


def train():
    torch.set_default_device(my_device)
    x = torch.stack([torch.randn(40, 128) for _ in range(100)])
    dataset = MyDataset(x, torch.zeros(100))
    loader = DataLoader(dataset, batch_size=3, shuffle=True, generator=torch.Generator(device=my_device))
    model = CNNv2()
    optimizer = torch.optim.Adam(model.parameters())
    for xb, yb in loader:
        loss = model(xb).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


train()
";
    let a = run(src);
    assert!(lines_of(&a, "EA101").is_empty());
    assert!(lines_of(&a, "EA102").is_empty());
    // the CPU as the default device leaves the dataset on the host
    let host = src.replace(
        "torch.set_default_device(my_device)",
        "torch.set_default_device('cpu')",
    );
    assert_eq!(lines_of(&run(&host), "EA101"), vec![11]);
}

/// A small spectrogram classifier with padding layers and kernels written per dimension.
const SMALL_AUDIO: &str = "import torch
import torch.nn as nn


class AudioClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 8, kernel_size=(5, 5), stride=(2, 2), padding=(2, 2))
        self.batch1 = nn.BatchNorm2d(8)
        self.pad1 = nn.ZeroPad2d(2)
        self.conv2 = nn.Conv2d(8, 32, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))
        self.act = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(output_size=1)
        self.linear1 = nn.Linear(in_features=32, out_features=10)

    def forward(self, x):
        x = self.pad1(self.batch1(self.act(self.conv1(x))))
        x = self.pool(self.act(self.conv2(x)))
        return self.linear1(x.view(x.shape[0], -1))


device = torch.device('cuda')
model = AudioClassifier().to(device)
optimizer = torch.optim.Adam(model.parameters())
for x, y in train_loader:
    loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) nn.Conv2d(2, 8, kernel_size=(5, 5)); nn.ZeroPad2d(2)
#[test]
fn padding_layers_and_per_dimension_kernels_are_sized() {
    let a = run(SMALL_AUDIO);
    assert!(lines_of(&a, "EA201").is_empty());
    assert!(lines_of(&a, "EA204").is_empty());
    // a wide kernel per dimension is counted as written
    let wide = SMALL_AUDIO.replace(
        "nn.Conv2d(8, 32, kernel_size=(3, 3)",
        "nn.Conv2d(8, 4096, kernel_size=(9, 9)",
    );
    assert_eq!(lines_of(&run(&wide), "EA204"), vec![23]);
}

/// A Lightning script whose Trainer settings come from a dict of the options.
const TRAINER_DICT: &str = "import argparse
import pytorch_lightning as pl
import torch


class ASRTrainer(pl.LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.model(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())


def main(args):
    model = torch.nn.Transformer(d_model=512)
    module = ASRTrainer(model=model)
    trainer_args = {'accelerator': 'gpu', 'max_epochs': 100, 'precision': args.precision}
    trainer = pl.Trainer(**trainer_args)
    trainer.fit(module)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--precision', default='16-mixed', type=str)
    main(parser.parse_args())
";

// Ex) trainer_args = {'precision': args.precision} (default '16-mixed'); pl.Trainer(**trainer_args)
#[test]
fn a_lightning_precision_handed_in_a_dict_is_read_as_shipped() {
    let a = run(TRAINER_DICT);
    assert!(lines_of(&a, "EA201").is_empty());
    assert!(lines_of(&a, "EA202").is_empty());
    // full precision as shipped leaves the matmuls in fp32
    let full = TRAINER_DICT.replace("default='16-mixed'", "default='32-true'");
    assert_eq!(lines_of(&run(&full), "EA202").len(), 1);
}

/// Multi-scale training of a pyramid vision transformer: three passes over each batch.
const MULTI_SCALE: &str = "import torch
from lib.pvt import PolypPVT


def train(train_loader, model, optimizer):
    model.train()
    size_rates = [0.75, 1, 1.25]
    for i, pack in enumerate(train_loader, start=1):
        for rate in size_rates:
            optimizer.zero_grad()
            images, gts = pack
            loss = model(images.cuda(), rate).sum()
            loss.backward()
            optimizer.step()


model = PolypPVT().cuda()
optimizer = torch.optim.AdamW(model.parameters(), 1e-4)
for epoch in range(100):
    train(train_loader, model, optimizer)
";

// Ex) for i, pack in enumerate(train_loader, start=1): for rate in size_rates: ... loss.backward()
#[test]
fn multi_scale_passes_over_a_batch_are_anchored_on_the_loaders_loop() {
    let a = run(MULTI_SCALE);
    assert_eq!(lines_of(&a, "EA201"), vec![8]);
    // a pyramid vision transformer is matmul work
    assert_eq!(lines_of(&a, "EA202"), vec![17]);
    // a step loop of its own over the loader is reported where it is
    let plain = MULTI_SCALE.replace(
        "        for rate in size_rates:\n",
        "        for rate in [1]:\n",
    );
    assert_eq!(lines_of(&run(&plain), "EA201"), vec![8]);
    let long = MULTI_SCALE.replace("size_rates = [0.75, 1, 1.25]", "size_rates = range(100)");
    assert_eq!(lines_of(&run(&long), "EA201"), vec![9]);
}

// Ex) for file_name in os.listdir(input_dir): image = sitk.ReadImage(...); sitk.WriteImage(resampled, out)
#[test]
fn a_simpleitk_volume_read_and_written_per_file_is_serial_work() {
    let src = "import os
import SimpleITK as sitk

input_dir = 'dicom/'
output_dir = 'nii/'
for file_name in os.listdir(input_dir):
    if file_name.endswith('.dcm'):
        image = sitk.ReadImage(os.path.join(input_dir, file_name))
        resample = sitk.ResampleImageFilter()
        resample.SetSize([224, 224, 16])
        resampled_image = resample.Execute(image)
        sitk.WriteImage(resampled_image, os.path.join(output_dir, file_name))
";
    assert_eq!(lines_of(&run(src), "EA602"), vec![6]);
    // a volume only inspected keeps nothing per file
    let inspect = src.replace(
        "        sitk.WriteImage(resampled_image, os.path.join(output_dir, file_name))\n",
        "        print(resampled_image.GetSize())\n",
    );
    assert!(lines_of(&run(&inspect), "EA602").is_empty());
}
