//! The fourteenth accuracy round: shapes from the blind wave g265– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// ALBEF's VQA evaluation: the question ids come from the loader and are never moved; an inner
/// loop zips them with the model's outputs.
const ZIPPED_IDS: &str = "import torch

model = torch.load('vqa.pt').cuda().eval()
result = []
with torch.no_grad():
    for image, question_id in loader:
        image = image.to('cuda', non_blocking=True)
        topk_ids, topk_probs = model(image)
        for ques_id, topk_id, topk_prob in zip(question_id, topk_ids, topk_probs):
            ques_id = int(ques_id.item())
            score = topk_prob.max().item()
            result.append((ques_id, score))
";

// Ex) for ques_id, topk_id in zip(question_id, topk_ids): ques_id.item()   <- a CPU tensor
#[test]
fn an_inner_loop_over_a_batch_value_never_moved_reads_host_memory() {
    let a = run(ZIPPED_IDS);
    // `ques_id` is a CPU tensor from the loader; `topk_prob` is the model's output
    assert_eq!(lines_of(&a, "EA301"), vec![11], "{:?}", a.findings);
    // moved in the loop, the ids are on the device: both reads wait
    let moved = ZIPPED_IDS.replace(
        "        image = image.to('cuda', non_blocking=True)\n",
        "        image = image.to('cuda', non_blocking=True)\n        question_id = question_id.to('cuda')\n",
    );
    let a = run(&moved);
    assert_eq!(lines_of(&a, "EA301"), vec![11, 12], "{:?}", a.findings);
}

/// A vision-language model loaded in the dtype its checkpoint was saved in.
const DTYPE_AUTO: &str = "import torch
from transformers import Qwen2VLForConditionalGeneration

model = Qwen2VLForConditionalGeneration.from_pretrained(
    'Qwen/Qwen2-VL-7B-Instruct', torch_dtype='auto'
).to('cuda')
model.eval()
with torch.no_grad():
    for batch in loader:
        out = model.generate(**batch)
        print(out.shape)
";

// Ex) from_pretrained(name, torch_dtype="auto")   <- bf16 for most current checkpoints
#[test]
fn a_model_loaded_in_its_checkpoint_dtype_is_not_called_fp32() {
    let a = run(DTYPE_AUTO);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
    let fp32 = DTYPE_AUTO.replace(", torch_dtype='auto'", "");
    assert_eq!(lines_of(&run(&fp32), "EA202"), vec![4]);
}

/// OpenAI CLIP fine-tuned with an optimizer of another package; the loss is a module of the
/// file placed on the device.
const CLIP_LOAD: &str = "import clip
import torch
import torch.nn as nn
from adabelief_pytorch import AdaBelief

class ContrastiveLoss(nn.Module):
    def forward(self, a, b):
        return (a - b).pow(2).mean()

device = 'cuda'
model, preprocess = clip.load('ViT-L/14', device=device)
model = model.float()
optimizer = AdaBelief(model.parameters(), lr=1e-5)
contrastive_loss = ContrastiveLoss().to(device)
for images, texts in loader:
    images, texts = images.to(device), texts.to(device)
    optimizer.zero_grad()
    a, b = model(images, texts)
    loss = contrastive_loss(a, b)
    loss.backward()
    optimizer.step()
";

// Ex) model, preprocess = clip.load(name, device=device)   <- the anchor
//     optimizer = AdaBelief(model.parameters(), ...)        <- an optimizer of another package
#[test]
fn a_loader_returning_the_model_and_its_companion_places_the_trained_model() {
    let a = run(CLIP_LOAD);
    assert_eq!(lines_of(&a, "EA203"), vec![11], "{:?}", a.findings);
    // three values returned (a style-transfer helper's network and layer names): not read
    let three = CLIP_LOAD.replace(
        "model, preprocess = clip.load(",
        "model, preprocess, names = clip.load(",
    );
    assert!(!lines_of(&run(&three), "EA203").contains(&11));
}

/// A notebook that shows one batch of test predictions: a counter breaks the loop off.
const ONE_BATCH: &str = "import torch

model = torch.load('m.pt').cuda()
shown_batch = 0
with torch.no_grad():
    for images, labels in loader:
        if shown_batch == 1:
            break
        shown_batch += 1
        outputs = model(images.cuda())
        print('output tensor:', outputs)
        img = images.cuda().cpu().numpy()
";

// Ex) shown_batch = 0 ... for x in loader: if shown_batch == 1: break ... shown_batch += 1
#[test]
fn a_loop_a_counter_breaks_off_after_a_few_batches_is_no_step_loop() {
    let a = run(ONE_BATCH);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA504").is_empty(), "{:?}", a.findings);
    // a counter the loop also resets is no count of its iterations
    let reset = ONE_BATCH.replace(
        "        shown_batch += 1\n",
        "        shown_batch += 1\n        if labels.sum() > 3:\n            shown_batch = 0\n",
    );
    assert_eq!(lines_of(&run(&reset), "EA301"), vec![14]);
}

/// A VAE script that draws one test batch through an iterator to visualise reconstructions.
const ONE_NEXT: &str = "import torch
from torch.utils.data import DataLoader
from torchvision import datasets

train_set = datasets.ImageFolder('train')
test_set = datasets.ImageFolder('test')
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)
test_loader = DataLoader(test_set, batch_size=64, shuffle=False)
dataiter = iter(test_loader)
test_images, _ = next(dataiter)
model = torch.nn.Conv2d(3, 3, 3).cuda()
opt = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for images, _ in train_loader:
        loss = model(images.cuda()).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
";

// Ex) dataiter = iter(test_loader); test_images, _ = next(dataiter)   <- one batch
#[test]
fn a_loader_read_once_through_an_iterator_is_no_pipeline() {
    let a = run(ONE_NEXT);
    assert!(!lines_of(&a, "EA101").contains(&8), "{:?}", a.findings);
    assert!(!lines_of(&a, "EA102").contains(&8), "{:?}", a.findings);
    // `next(dataiter)` every step reads the whole loader
    let every_step = ONE_NEXT.replace(
        "        loss = model(images.cuda()).mean()\n",
        "        test_images, _ = next(dataiter)\n        loss = model(images.cuda()).mean()\n",
    );
    assert!(lines_of(&run(&every_step), "EA101").contains(&8));
}

/// FCHarDNet's validation: `--eval_flip` / `--no-eval_flip` share a destination and
/// `set_defaults` turns it off; the forward outside `no_grad` sits in that branch.
const SET_DEFAULTS: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--eval_flip', dest='eval_flip', action='store_true')
parser.add_argument('--no-eval_flip', dest='eval_flip', action='store_false')
parser.set_defaults(eval_flip=False)
args = parser.parse_args()
model = torch.load('m.pt').cuda()
model.eval()
for images, labels in loader:
    images = images.cuda()
    if args.eval_flip:
        outputs = model(images)
    else:
        with torch.no_grad():
            outputs = model(images)
";

// Ex) parser.set_defaults(eval_flip=False) ... if args.eval_flip: outputs = model(images)
#[test]
fn set_defaults_and_a_shared_destination_decide_what_ships() {
    let a = run(SET_DEFAULTS);
    assert!(lines_of(&a, "EA401").is_empty(), "{:?}", a.findings);
    // on by default: the forward with autograd runs every batch
    let on = SET_DEFAULTS.replace(
        "set_defaults(eval_flip=False)",
        "set_defaults(eval_flip=True)",
    );
    assert_eq!(lines_of(&run(&on), "EA401"), vec![11]);
    // without set_defaults the first option's default (store_true: False) is the value
    let first = SET_DEFAULTS.replace("parser.set_defaults(eval_flip=False)\n", "");
    assert!(lines_of(&run(&first), "EA401").is_empty());
    // the other order: store_false first, True
    let swapped = first.replace(
        "parser.add_argument('--eval_flip', dest='eval_flip', action='store_true')\nparser.add_argument('--no-eval_flip', dest='eval_flip', action='store_false')\n",
        "parser.add_argument('--no-eval_flip', dest='eval_flip', action='store_false')\nparser.add_argument('--eval_flip', dest='eval_flip', action='store_true')\n",
    );
    assert_eq!(lines_of(&run(&swapped), "EA401"), vec![10]);
}

/// The Hugging Face GLUE example without Trainer: a second evaluation only for MNLI, whose
/// `--task_name` defaults to None.
const OFF_EVAL: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--task_name', type=str, default=None, choices=['mnli', 'sst2'])
args = parser.parse_args()
model = torch.load('m.pt').cuda()
model.eval()
if args.task_name == 'mnli':
    for step, batch in enumerate(eval_loader):
        outputs = model(**batch)
        print(outputs.logits.shape)
";

// Ex) if args.task_name == "mnli": for step, batch in enumerate(eval_dataloader): model(**batch)
#[test]
fn an_evaluation_loop_behind_a_switch_off_as_shipped_is_not_reported() {
    let a = run(OFF_EVAL);
    assert!(lines_of(&a, "EA401").is_empty(), "{:?}", a.findings);
    let on = OFF_EVAL.replace("default=None, ", "default='mnli', ");
    assert_eq!(lines_of(&run(&on), "EA401"), vec![10]);
}

/// YOLOv2's test script imports torch only through its own modules.
const NO_TORCH_IMPORT: &str = "import os
import pickle
import cv2
import numpy as np
from darknet import Darknet19
import utils.network as net_utils

def test_net(net, imdb, output_dir):
    boxes = []
    for i in range(imdb.num_images):
        batch = imdb.next_batch()
        im_data = net_utils.np_to_variable(batch['images'], is_cuda=True)
        bbox_pred, iou_pred = net(im_data)
        boxes.append(bbox_pred.data.cpu().numpy())
        im = cv2.imread(batch['paths'][0])
        cv2.imwrite(os.path.join(output_dir, 'det.jpg'), im)
    with open(os.path.join(output_dir, 'detections.pkl'), 'wb') as f:
        pickle.dump(boxes, f)

if __name__ == '__main__':
    net = Darknet19()
    net.cuda()
    net.eval()
    test_net(net, imdb, 'out')
";

// Ex) net = Darknet19(); net.cuda()   <- a PyTorch module, whatever the file imports
#[test]
fn a_model_moved_with_cuda_makes_a_pytorch_file() {
    let a = run(NO_TORCH_IMPORT);
    assert_eq!(lines_of(&a, "EA204"), vec![22], "{:?}", a.findings);
}

/// timm models by a name the file gives or leaves to the command line.
const TIMM: &str = "import argparse
import timm
import torch

class Net(torch.nn.Module):
    def __init__(self, model_name='resnet34'):
        super().__init__()
        self.model = timm.create_model(model_name, pretrained=True)

    def forward(self, x):
        return self.model(x)

model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = model(x.cuda()).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
";

// Ex) timm.create_model(args.model) with `--model` required: a ResNet or a ViT
#[test]
fn a_timm_model_named_only_on_the_command_line_is_neither_kind() {
    assert_eq!(lines_of(&run(TIMM), "EA204"), vec![13]);
    let vit = TIMM.replace("'resnet34'", "'vit_base_patch16_224'");
    assert!(lines_of(&run(&vit), "EA204").is_empty());
    let required = TIMM
        .replace("def __init__(self, model_name='resnet34'):", "def __init__(self, model_name):")
        .replace("model = Net().cuda()", "parser = argparse.ArgumentParser()\nparser.add_argument('--model', required=True)\nargs = parser.parse_args()\nmodel = Net(args.model).cuda()");
    assert!(
        lines_of(&run(&required), "EA204").is_empty(),
        "{:?}",
        run(&required).findings
    );
}

/// A Lightning 2 script: `Trainer()` picks the GPU itself (`accelerator="auto"`).
const LIGHTNING_AUTO: &str = "import torch
from lightning import LightningModule, Trainer
from torch.utils.data import DataLoader

class Lit(LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.model(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

model = torch.hub.load('pytorch/vision', 'resnet18')
lit = Lit(model)
loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
trainer = Trainer(max_epochs=5)
trainer.fit(lit, loader)
";

// Ex) from lightning import Trainer; Trainer(max_epochs=5)   <- the GPU when there is one
#[test]
fn a_lightning_2_trainer_without_an_accelerator_runs_on_the_gpu() {
    let a = run(LIGHTNING_AUTO);
    assert!(!lines_of(&a, "EA203").is_empty(), "{:?}", a.findings);
    // the `pytorch_lightning` package the runner installs is 2.x as well: the GPU
    let old = LIGHTNING_AUTO.replace("from lightning import", "from pytorch_lightning import");
    assert!(!lines_of(&run(&old), "EA203").is_empty());
    // ... unless the file uses an API only 1.x had: the CPU unless `gpus=` is given
    let one_x = old.replace(
        "Trainer(max_epochs=5)",
        "Trainer(max_epochs=5, progress_bar_refresh_rate=20)",
    );
    assert!(lines_of(&run(&one_x), "EA203").is_empty());
    // a 2.x precision string says which version it is, whatever else the file holds
    let mixed = one_x.replace(
        "progress_bar_refresh_rate=20)",
        "progress_bar_refresh_rate=20, precision='bf16-mixed')",
    );
    assert!(!lines_of(&run(&mixed), "EA203").is_empty());
}

/// Self2Self's denoiser: every move goes to `--device`, which defaults to the CPU.
const CPU_DEVICE: &str = "import argparse
import torch

def get_loss(noisy, model, device='cpu'):
    noisy_tensor = torch.tensor(noisy).to(device)
    mask_tensor = torch.ones(noisy_tensor.shape).to(device)
    return model(noisy_tensor * mask_tensor).mean()

parser = argparse.ArgumentParser()
parser.add_argument('--device', type=str, default='cpu')
args = parser.parse_args()
model = Net().to(args.device)
opt = torch.optim.Adam(model.parameters())
for step in range(1000):
    loss = get_loss(noisy, model, device=args.device)
    opt.zero_grad()
    loss.backward()
    opt.step()
";

// Ex) --device defaults to 'cpu': torch.ones(...).to(device) copies nothing to a GPU
#[test]
fn a_file_that_runs_on_the_cpu_copies_nothing_to_a_gpu() {
    assert!(lines_of(&run(CPU_DEVICE), "EA304").is_empty());
    let gpu = CPU_DEVICE.replace("default='cpu')", "default='cuda')");
    assert_eq!(lines_of(&run(&gpu), "EA304"), vec![6]);
}

/// A Siamese-network script: `--load` (no default) chooses testing a saved model over training.
const LOAD_OR_TRAIN: &str = "import argparse
import torch
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument('--load', help='File to load the model from.')
options = parser.parse_args()

def test(options):
    model = torch.load(options.load).cuda()
    model.eval()
    loader = DataLoader(FacesDS('test.txt'), batch_size=64)
    with torch.no_grad():
        for a, b in loader:
            print(model(a.cuda(), b.cuda()).sum().item())

def train(options):
    model = Siamese().cuda()
    opt = torch.optim.Adam(model.parameters())
    loader = DataLoader(FacesDS('train.txt'), batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
    for a, b in loader:
        loss = model(a.cuda(non_blocking=True), b.cuda(non_blocking=True)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

if options.load:
    test(options)
else:
    train(options)
";

// Ex) parser.add_argument('--load') ... if options.load: test(options) else: train(options)
#[test]
fn an_option_without_a_default_is_none_as_shipped() {
    let a = run(LOAD_OR_TRAIN);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // a script that demands the option (`if not options.load: exit`) is given it: unknown
    let demanded = LOAD_OR_TRAIN.replace(
        "options = parser.parse_args()\n",
        "options = parser.parse_args()\nif not options.load and not options.train:\n    parser.error('give --load or --train')\n",
    );
    assert_eq!(lines_of(&run(&demanded), "EA101"), vec![14]);
}

/// timm-style training: `loss_scaler(loss, optimizer, parameters=...)` runs the backward pass
/// and steps the optimizer (Uformer, MAE, DeiT).
const NATIVE_SCALER: &str = "import torch
from timm.utils import NativeScaler

model = Uformer().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
loss_scaler = NativeScaler()
for epoch in range(100):
    for i, data in enumerate(train_loader):
        optimizer.zero_grad()
        target = data[0].cuda()
        with torch.cuda.amp.autocast():
            loss = criterion(model(data[1].cuda()), target)
        loss_scaler(loss, optimizer, parameters=model.parameters())
";

// Ex) loss_scaler(loss, optimizer, parameters=model.parameters())   <- backward and step
#[test]
fn a_scaler_handed_the_loss_and_the_optimizer_trains() {
    let a = run(NATIVE_SCALER);
    assert!(lines_of(&a, "EA401").is_empty(), "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA203"), vec![4], "{:?}", a.findings);
}

/// MMLU over a question table: each row runs the language model.
const MODEL_ROWS: &str = "import pandas as pd
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained('gpt2', torch_dtype=torch.float16).cuda()
test_df = pd.read_csv('test.csv')

def transcribe(row):
    with torch.no_grad():
        return model(row['ids']).logits.argmax()

@torch.no_grad()
def evaluate(test_df):
    preds = []
    for i in range(test_df.shape[0]):
        prompt = test_df.iloc[i, 0]
        ids = tokenizer(prompt, return_tensors='pt').input_ids.cuda()
        preds.append(model(input_ids=ids).logits[0, -1])
    return preds

evaluate(test_df)
test_df['pred'] = test_df.apply(transcribe, axis=1)
";

// Ex) for i in range(test_df.shape[0]): ... model(input_ids=ids)   <- the forward dwarfs the row
#[test]
fn a_row_loop_that_runs_a_model_per_row_is_not_a_pandas_loop() {
    let a = run(MODEL_ROWS);
    assert!(lines_of(&a, "EA601").is_empty(), "{:?}", a.findings);
    let no_model = MODEL_ROWS
        .replace(
            "        preds.append(model(input_ids=ids).logits[0, -1])\n",
            "        preds.append(len(prompt))\n",
        )
        .replace(
            "        return model(row['ids']).logits.argmax()\n",
            "        return row['ids'] * 2\n",
        );
    assert_eq!(lines_of(&run(&no_model), "EA601"), vec![15, 22]);
}

/// torchvision's detection fine-tune: training through `train_one_epoch`; the validation
/// loader is built and never read (its evaluation is commented out).
const UNUSED_VAL: &str = "import torch
import torchvision
from engine import train_one_epoch

device = torch.device('cuda')
data_loader_train = torch.utils.data.DataLoader(dataset_train, batch_size=4, shuffle=True, num_workers=16, collate_fn=collate_fn)
data_loader_val = torch.utils.data.DataLoader(dataset_val, batch_size=4, shuffle=False, num_workers=16, collate_fn=collate_fn)
model = torchvision.models.detection.fasterrcnn_resnet50_fpn(num_classes=3)
model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.005)
for epoch in range(10):
    train_one_epoch(model, optimizer, data_loader_train, device, epoch)
    # evaluate(model, data_loader_val, device=device)
";

// Ex) data_loader_val = DataLoader(...)   <- never read in a script that trains at import
#[test]
fn a_loader_nothing_reads_in_a_script_that_trains_costs_nothing() {
    let a = run(UNUSED_VAL);
    assert_eq!(lines_of(&a, "EA102"), vec![6], "{:?}", a.findings);
}

/// YOLOv7's test script: the device comes from a helper of another module; the file only
/// tests whether it is the CPU.
const DEVICE_TEST: &str = "import torch
from utils.torch_utils import select_device

def test(weights, batch_size=32, device=''):
    device = select_device(device, batch_size=batch_size)
    half = device.type != 'cpu'
    model = attempt_load(weights, map_location=device)
    if half:
        model.half()
    model.eval()
    for img, targets in dataloader:
        img = img.to(device, non_blocking=True)
        targets = targets.to(device)
        with torch.no_grad():
            out = model(img)
        targets[:, 2:] *= torch.Tensor([640, 640, 640, 640]).to(device)

test('yolov7.pt')
";

// Ex) half = device.type != 'cpu'   <- a test of the device, no choice of the CPU
#[test]
fn a_test_of_the_device_chooses_no_cpu() {
    let a = run(DEVICE_TEST);
    assert_eq!(lines_of(&a, "EA304"), vec![16], "{:?}", a.findings);
}

/// EchoNet's video loader: each element of the array is a frame decoded from the capture.
const FRAMES: &str = "import cv2
import numpy as np

def load_video(filename):
    capture = cv2.VideoCapture(filename)
    frame_count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    v = np.zeros((frame_count, 112, 112, 3), np.float32)
    for count in range(frame_count):
        ret, frame = capture.read()
        v[count] = frame
    return v

load_video('a.avi')
";

// Ex) for count in range(frame_count): ret, frame = capture.read(); v[count] = frame
#[test]
fn a_loop_that_decodes_each_element_is_not_arithmetic() {
    assert!(lines_of(&run(FRAMES), "EA603").is_empty());
    let arithmetic = FRAMES.replace(
        "        ret, frame = capture.read()\n        v[count] = frame\n",
        "        v[count] = v[count - 1] * 0.5 + 1.0\n",
    );
    assert_eq!(lines_of(&run(&arithmetic), "EA603"), vec![8]);
}

/// Farneback optical flow between consecutive frames of a folder.
const CONSECUTIVE: &str = "import os
import cv2

def flow(image_path, out_dir):
    images = os.listdir(image_path)
    prvs = None
    for filename in sorted(images):
        frame = cv2.imread(os.path.join(image_path, filename))
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        if prvs is None:
            prvs = gray
            continue
        flow = cv2.calcOpticalFlowFarneback(prvs, gray, None, 0.5, 3, 15, 3, 5, 1.2, 0)
        cv2.imwrite(os.path.join(out_dir, filename), flow[..., 0])
        prvs = gray

flow('frames', 'flow')
";

// Ex) for filename in images: ... calc(prvs, gray) ... prvs = gray   <- each needs the one before
#[test]
fn a_per_file_loop_whose_files_depend_on_the_one_before_is_not_parallel_work() {
    assert!(lines_of(&run(CONSECUTIVE), "EA602").is_empty());
    // a counter carries nothing the work needs
    let counter = CONSECUTIVE
        .replace("    prvs = None\n", "    index = 0\n")
        .replace(
            "        if prvs is None:\n            prvs = gray\n            continue\n",
            "",
        )
        .replace(
            "calcOpticalFlowFarneback(prvs, gray,",
            "calcOpticalFlowFarneback(gray, gray,",
        )
        .replace("        prvs = gray\n", "        index = index + 1\n");
    assert_eq!(
        lines_of(&run(&counter), "EA602"),
        vec![7],
        "{:?}",
        run(&counter).findings
    );
}

/// A LeNet driver whose training is switched off by a constant; the test loader is handed to
/// a function whose keyword shares the training loader's name.
const TRAIN_FLAG: &str = "import torch
from torch.utils.data import DataLoader
from train import train, test

if __name__ == '__main__':
    lenet = LeNet5().cuda()
    train_flag = False
    data_loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=2)
    data_test_loader = DataLoader(test_set, batch_size=128, num_workers=2)
    optimizer = torch.optim.Adam(lenet.parameters())
    if train_flag:
        for e in range(1, 500):
            train(net=lenet, data_train_loader=data_loader, optimizer=optimizer, epoch=e)
    test(net=lenet, data_loader=data_test_loader)
";

// Ex) train_flag = False ... if train_flag: for e in ...: train(..., optimizer=optimizer)
#[test]
fn training_behind_a_constant_switched_off_neither_trains_nor_reads_its_loader() {
    let a = run(TRAIN_FLAG);
    assert!(lines_of(&a, "EA203").is_empty(), "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA102"), vec![9], "{:?}", a.findings);
    let on = TRAIN_FLAG.replace("train_flag = False", "train_flag = True");
    let a = run(&on);
    assert_eq!(lines_of(&a, "EA203"), vec![6], "{:?}", a.findings);
    assert_eq!(lines_of(&a, "EA102"), vec![8, 9], "{:?}", a.findings);
}

/// wav2vec2 features of each audio file: the waveform is read from disk on the host.
const AUDIO: &str = "import glob
import numpy as np
import torch
import torchaudio

model = load_wav2vec().to('cuda').eval()
for wav_path in glob.glob('wavs/*.wav'):
    waveform, sample_rate = torchaudio.load(wav_path)
    waveform = waveform.mean(dim=0, keepdim=True)
    waveform_np = waveform.squeeze(0).numpy()
    inputs = torch.tensor(waveform_np).unsqueeze(0).to('cuda')
    with torch.no_grad():
        out = model(inputs)
    print(out.mean().item())
";

// Ex) waveform, sr = torchaudio.load(path) ... waveform.squeeze(0).numpy()   <- host memory
#[test]
fn a_file_read_into_host_memory_is_no_device_read() {
    assert_eq!(lines_of(&run(AUDIO), "EA301"), vec![14]);
}

/// I3D features of each video folder: windows collected into a list, concatenated and saved
/// once per folder.
const PER_FOLDER: &str = "import os
import numpy as np
import torch
from pytorch_i3d import InceptionI3d

device = torch.device('cuda')
i3d = InceptionI3d(400, in_channels=2)
i3d.to(device)
i3d.eval()
for folder_name in os.listdir('flows'):
    clips = load_chunks(os.path.join('flows', folder_name))
    all_features = []
    with torch.no_grad():
        for i in range(0, clips.shape[0], 16):
            mini_batch = clips[i:i + 16].to(device)
            features = i3d(mini_batch)
            features_np = features.squeeze().cpu().numpy()
            all_features.append(features_np)
    feats = np.concatenate(all_features, axis=0)
    np.save(os.path.join('out', folder_name + '.npy'), feats)
";

// Ex) all_features.append(out.cpu().numpy()) ... np.save(path, np.concatenate(all_features))
#[test]
fn features_collected_and_saved_once_per_folder_are_the_loops_product() {
    assert!(lines_of(&run(PER_FOLDER), "EA301").is_empty());
    // saved once for the whole run: a read that could wait
    let once = PER_FOLDER.replace(
        "    feats = np.concatenate(all_features, axis=0)\n    np.save(os.path.join('out', folder_name + '.npy'), feats)\n",
        "np.save('all.npy', np.concatenate(all_features, axis=0))\n",
    );
    assert_eq!(lines_of(&run(&once), "EA301"), vec![17]);
}

/// A loader only counted: `len(val_loader)` for a progress bar, never iterated.
const COUNTED: &str = "import torch
from torch.utils.data import DataLoader

model = SiameseResNet().cuda()
opt = torch.optim.Adam(model.parameters())
train_loader = DataLoader(train_set, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True, batch_size=64)
val_loader = DataLoader(val_set, shuffle=True, num_workers=0, batch_size=64)
val_batches = len(val_loader)
for epoch in range(10):
    for a, b, y in train_loader:
        loss = model(a.cuda(non_blocking=True), b.cuda(non_blocking=True)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
";

// Ex) val_batches = len(val_loader)   <- counted, never iterated
#[test]
fn a_loader_only_counted_starts_no_worker() {
    let a = run(COUNTED);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    let iterated = COUNTED.replace(
        "val_batches = len(val_loader)\n",
        "val_batches = [b for b in val_loader]\n",
    );
    assert_eq!(lines_of(&run(&iterated), "EA101"), vec![7]);
}

/// Network slimming's pruning script: module-level code parses the command line and prunes;
/// its `test(model)` is only called in comments.
const PRUNE_SCRIPT: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--model', default='', type=str)
args = parser.parse_args()
model = vgg(depth=16).cuda()

def test(model):
    model.eval()
    correct = 0
    for data, target in test_loader:
        data, target = data.cuda(), target.cuda()
        output = model(data)
        correct += output.argmax(1).eq(target).sum().item()
    return correct

total = sum(p.numel() for p in model.parameters())
# acc = test(model)
torch.save(model.state_dict(), 'pruned.pth')
";

// Ex) args = parser.parse_args() at module level; def test(model): ... never called
#[test]
fn a_function_a_module_level_script_never_calls_does_not_run() {
    let a = run(PRUNE_SCRIPT);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA401").is_empty(), "{:?}", a.findings);
    let called = PRUNE_SCRIPT.replace("# acc = test(model)", "acc = test(model)");
    assert_eq!(lines_of(&run(&called), "EA301"), vec![15]);
}

/// TransFG's validation: predictions gathered on the first batch into an empty list, then
/// appended to its first array; the batch is moved by rebinding it whole.
const FIRST_BATCH: &str = "import numpy as np
import torch

model = VisionTransformer(config).cuda()
model.eval()
all_preds, all_label = [], []
for step, batch in enumerate(test_loader):
    batch = tuple(t.to('cuda') for t in batch)
    x, y = batch
    with torch.no_grad():
        preds = torch.argmax(model(x), dim=-1)
    if len(all_preds) == 0:
        all_preds.append(preds.detach().cpu().numpy())
        all_label.append(y.detach().cpu().numpy())
    else:
        all_preds[0] = np.append(all_preds[0], preds.detach().cpu().numpy(), axis=0)
        all_label[0] = np.append(all_label[0], y.detach().cpu().numpy(), axis=0)
";

// Ex) if len(all_preds) == 0: all_preds.append(...)   <- the first batch only
//     batch = tuple(t.to(device) for t in batch); x, y = batch   <- `y` is on the device
#[test]
fn a_branch_for_the_first_batch_runs_once_and_a_rebound_batch_is_on_the_device() {
    assert_eq!(lines_of(&run(FIRST_BATCH), "EA301"), vec![16, 17]);
}

/// An attention decoder written one step at a time: each score comes from a method of the
/// module that runs its layers.
const ATTENTION_STEPS: &str = "import torch
import torch.nn as nn

class Attention(nn.Module):
    def __init__(self, n_hidden):
        super().__init__()
        self.attn = nn.Linear(n_hidden, n_hidden)

    def get_att_weight(self, dec_output, enc_outputs):
        n_step = len(enc_outputs)
        attn_scores = torch.zeros(n_step)
        for i in range(n_step):
            attn_scores[i] = self.get_att_score(dec_output, enc_outputs[i])
        return torch.softmax(attn_scores, 0)

    def get_att_score(self, dec_output, enc_output):
        return torch.dot(dec_output.view(-1), self.attn(enc_output).view(-1))
";

// Ex) for i in range(n_step): attn_scores[i] = self.get_att_score(h, enc[i])   <- a layer each
#[test]
fn a_loop_that_runs_a_method_of_its_module_per_element_is_not_arithmetic() {
    assert!(lines_of(&run(ATTENTION_STEPS), "EA603").is_empty());
    let arithmetic = ATTENTION_STEPS.replace(
        "self.get_att_score(dec_output, enc_outputs[i])",
        "enc_outputs[i] * 2.0",
    );
    assert_eq!(lines_of(&run(&arithmetic), "EA603"), vec![12]);
}
