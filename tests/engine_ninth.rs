//! The ninth accuracy round: shapes from the blind wave g131–g136 that the engine read wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A PINN trained for a fixed number of iterations: a NaN loss is reported and skipped.
const NAN_CHECK: &str = "import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(2, 512), nn.Tanh(), nn.Linear(512, 512), nn.Linear(512, 1)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
x = torch.randn(4096, 2, device='cuda')
for it in range(20000):
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    if torch.isnan(loss):
        print(f'NaN at iter {it}, skipping...')
        continue
    loss.backward()
    optimizer.step()
    print('loss', loss)
";

// Ex) if torch.isnan(loss): print(...); continue
#[test]
fn a_numerical_failure_check_is_no_every_step_logging() {
    let a = run(NAN_CHECK);
    // the every-step print is flagged, the NaN warning is not
    assert_eq!(lines_of(&a, "EA504"), vec![15], "{:?}", a.findings);
    // the same print under a test of something else stays flagged
    let other = NAN_CHECK.replace("torch.isnan(loss)", "loss > 0");
    assert_eq!(lines_of(&run(&other), "EA504"), vec![11, 15]);
}

/// A vocoder trained with NVIDIA Apex's mixed precision.
const APEX: &str = "import torch
import apex.amp as amp
from model import Vocoder

vocoder = Vocoder().cuda()
optimizer = torch.optim.Adam(vocoder.parameters(), lr=4e-4)
vocoder, optimizer = amp.initialize(vocoder, optimizer, opt_level='O1')
loader = torch.utils.data.DataLoader(torch.load('mels.pt'), batch_size=32, num_workers=4, pin_memory=True)
for epoch in range(100):
    for mels, audio in loader:
        mels, audio = mels.cuda(non_blocking=True), audio.cuda(non_blocking=True)
        loss = vocoder(mels, audio).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
";

// Ex) vocoder, optimizer = amp.initialize(vocoder, optimizer, opt_level="O1")
#[test]
fn apex_amp_is_mixed_precision() {
    assert!(lines_of(&run(APEX), "EA201").is_empty());
    // "O0" is Apex's fp32
    let o0 = APEX.replace("opt_level='O1'", "opt_level='O0'");
    assert_eq!(lines_of(&run(&o0), "EA201"), vec![10]);
}

/// Files converted by threads started on a function of the file.
const THREADS: &str = "import os
import json
import threading
from PIL import Image

def process(images, out_dir):
    for image in images:
        w, h = Image.open(image).size
        with open(os.path.join(out_dir, os.path.basename(image) + '.json'), 'w') as f:
            json.dump({'w': w, 'h': h}, f)

if __name__ == '__main__':
    files = sorted(os.listdir('images'))
    chunks = [files[i::4] for i in range(4)]
    threads = [threading.Thread(target=process, args=(c, 'out')) for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
";

// Ex) t = threading.Thread(target=process, args=(args, images)); t.start()
#[test]
fn files_spread_over_threads_are_not_serial() {
    assert!(lines_of(&run(THREADS), "EA602").is_empty());
    // called in the main thread, the same loop is serial
    let serial = THREADS
        .replace(
            "    threads = [threading.Thread(target=process, args=(c, 'out')) for c in chunks]\n",
            "    threads = []\n    process(files, 'out')\n",
        )
        .replace("import threading\n", "");
    // (one line up: the import is gone)
    assert_eq!(lines_of(&run(&serial), "EA602"), vec![6]);
}

/// A BERT fine-tuning driver that moves to the GPU only when `--gpu_id` is set (default -1).
const NEGATIVE_DEFAULT: &str = "import argparse
import torch
from transformers import BertForSequenceClassification

def define_argparser():
    p = argparse.ArgumentParser()
    p.add_argument('--gpu_id', type=int, default=-1)
    return p.parse_args()

def main(config):
    model = BertForSequenceClassification.from_pretrained('bert-base-uncased')
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    if config.gpu_id >= 0:
        model.cuda(config.gpu_id)
    for batch in torch.load('batches.pt'):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()

if __name__ == '__main__':
    config = define_argparser()
    main(config)
";

// Ex) p.add_argument('--gpu_id', type=int, default=-1) ... if config.gpu_id >= 0: model.cuda()
#[test]
fn a_negative_default_is_read() {
    let a = run(NEGATIVE_DEFAULT);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    // with `--gpu_id 0` by default the model is on the GPU
    let gpu = NEGATIVE_DEFAULT.replace("default=-1", "default=0");
    assert_eq!(lines_of(&run(&gpu), "EA202"), vec![14]);
}

/// A segmentation model whose name says attention: an Attention U-Net gates with convolutions.
const ATTENTION_UNET: &str = "import torch
import torch.nn as nn
from unet import AttentionUNet

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
model = AttentionUNet(in_channels=3, num_classes=10).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = torch.utils.data.DataLoader(torch.load('patches.pt'), batch_size=16, num_workers=2, pin_memory=True)
for epoch in range(80):
    for imgs, masks in loader:
        imgs, masks = imgs.to(device), masks.to(device)
        loss = nn.functional.binary_cross_entropy_with_logits(model(imgs), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = AttentionUNet(in_channels=3, num_classes=10).to(device)
#[test]
fn an_attention_unet_is_convolutional() {
    assert!(lines_of(&run(ATTENTION_UNET), "EA202").is_empty());
    // an attention model by name keeps the finding
    let attn = ATTENTION_UNET.replace("AttentionUNet", "AttentionNet");
    assert_eq!(lines_of(&run(&attn), "EA202"), vec![6]);
}

/// A LoRA script whose model and tokenizer come from a helper of another module, trained by a
/// Hugging Face Trainer over text tokenised ahead of time.
const TRAINER_TUPLE: &str = "import torch
from transformers import TrainingArguments, Trainer, DataCollatorForLanguageModeling
from datasets import load_dataset
from src.models import load_lora_model

def main():
    model, tokenizer = load_lora_model('Qwen/Qwen2.5-0.5B')
    dataset = load_dataset('json', data_files='train.json')
    tokenized = dataset['train'].map(lambda x: tokenizer(x['text'], truncation=True), batched=True)
    args = TrainingArguments(output_dir='out', num_train_epochs=3, per_device_train_batch_size=8, bf16=True)
    trainer = Trainer(model=model, args=args, train_dataset=tokenized,
                      data_collator=DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False))
    trainer.train()

if __name__ == '__main__':
    main()
";

// Ex) model, tokenizer = load_lora_model(...) ... TrainingArguments(...) over token ids
#[test]
fn a_tokenizer_bound_with_the_model_makes_token_batches() {
    let a = run(TRAINER_TUPLE);
    assert!(lines_of(&a, "EA101").is_empty(), "{:?}", a.findings);
    // a Trainer over images keeps its finding
    let images = TRAINER_TUPLE.replace(
        "from datasets import load_dataset\n",
        "from datasets import load_dataset\nfrom torchvision import transforms\n",
    );
    assert_eq!(lines_of(&run(&images), "EA101"), vec![11]);
}

/// A Trainer capped at a few known steps (a LoRA demo).
const FEW_STEPS: &str = "from transformers import AutoModelForCausalLM, TrainingArguments, Trainer

def main():
    model = AutoModelForCausalLM.from_pretrained('gpt2')
    args = TrainingArguments(output_dir='out', max_steps=50, per_device_train_batch_size=8, fp16=True)
    trainer = Trainer(model=model, args=args, train_dataset=load_data())
    trainer.train()

if __name__ == '__main__':
    main()
";

// Ex) TrainingArguments(..., max_steps=50)
#[test]
fn a_trainer_capped_at_a_few_steps_is_not_asked_to_compile() {
    assert!(lines_of(&run(FEW_STEPS), "EA203").is_empty());
    let long = FEW_STEPS.replace("max_steps=50", "max_steps=5000");
    assert_eq!(lines_of(&run(&long), "EA203"), vec![5]);
}

/// Embeddings of a ViT-style encoder built in the file: its only convolution cuts patches.
const PATCH_EMBED: &str = "import torch
import torch.nn as nn
from x_transformers import Encoder

class ViT(nn.Module):
    def __init__(self, patch_size=16, dim=768):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch_size, stride=patch_size)
        self.encoder = Encoder(dim=dim, depth=12, heads=12)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        return self.encoder(x)

model = ViT().cuda().eval()
feats = []
with torch.no_grad():
    for x in torch.load('images.pt'):
        feats.append(model(x.cuda(non_blocking=True)))
torch.save(torch.cat(feats), 'feats.pt')
";

// Ex) self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch_size, stride=patch_size)
#[test]
fn a_patch_embedding_makes_no_convolutional_network() {
    assert!(lines_of(&run(PATCH_EMBED), "EA204").is_empty());
    // a convolution with a kernel of its own (stride 1) does
    let conv = PATCH_EMBED.replace(
        "kernel_size=patch_size, stride=patch_size",
        "kernel_size=3, padding=1",
    );
    assert_eq!(lines_of(&run(&conv), "EA204"), vec![15]);
}

/// DETR-style detection over a folder: boxes read back, drawn on the frame, frame saved.
const DRAWN: &str = "import os
import cv2
import numpy as np
import torch
from PIL import Image
from models import build_model

model = build_model().to('cuda').eval()
for name in os.listdir('images'):
    im = Image.open(os.path.join('images', name)).convert('RGB')
    with torch.no_grad():
        scores, boxes = model(torch.from_numpy(np.array(im)).cuda())
    frame = cv2.cvtColor(np.array(im), cv2.COLOR_RGB2BGR)
    for score, (x1, y1, x2, y2) in zip(scores.cpu().numpy(), boxes.cpu().numpy()):
        if score < 0.7:
            continue
        cv2.rectangle(frame, (int(x1), int(y1)), (int(x2), int(y2)), (0, 255, 0), 2)
    cv2.imwrite(os.path.join('out', name), frame)
";

// Ex) for score, box in zip(scores.cpu().numpy(), ...): cv2.rectangle(frame, ...) ... imwrite
#[test]
fn boxes_drawn_on_a_saved_frame_are_the_loops_product() {
    assert!(lines_of(&run(DRAWN), "EA301").is_empty());
    // boxes read and only counted are a read that could wait
    let counted = DRAWN.replace(
        "        cv2.rectangle(frame, (int(x1), int(y1)), (int(x2), int(y2)), (0, 255, 0), 2)\n    cv2.imwrite(os.path.join('out', name), frame)\n",
        "        print(name, x1)\n",
    );
    assert_eq!(lines_of(&run(&counted), "EA301"), vec![14]);
}

/// An optimizer built with `params=`, and a frozen VGG placed after the trained networks.
const PARAMS_KW: &str = "import torch
from models import Generator, Discriminator, TruncatedVGG19

def main():
    checkpoint = torch.load('ckpt.pth')
    generator = checkpoint['generator']
    discriminator = checkpoint['discriminator']
    optimizer_g = torch.optim.Adam(params=filter(lambda p: p.requires_grad, generator.parameters()), lr=1e-4)
    vgg = TruncatedVGG19(i=5, j=4)
    vgg.eval()
    device = torch.device('cuda')
    generator = generator.to(device)
    discriminator = discriminator.to(device)
    vgg = vgg.to(device)
    for lr_imgs, hr_imgs in torch.load('pairs.pt'):
        loss = (generator(lr_imgs.to(device)) - hr_imgs.to(device)).abs().mean()
        optimizer_g.zero_grad()
        loss.backward()
        optimizer_g.step()

main()
";

// Ex) torch.optim.Adam(params=filter(lambda p: p.requires_grad, generator.parameters()))
#[test]
fn an_optimizer_given_params_by_keyword_names_its_model() {
    let a = run(PARAMS_KW);
    assert_eq!(lines_of(&a, "EA203"), vec![12], "{:?}", a.findings);
}

/// DDPM sampling that keeps a few frames of the trajectory for a figure.
const SELECTED: &str = "import torch
from model import UNet

model = UNet().cuda().eval()
markers = {999, 750, 500, 250, 100}
frames = []
x = torch.randn(16, 1, 28, 28, device='cuda')
with torch.no_grad():
    for t in reversed(range(1000)):
        x = model(x, torch.full((16,), t, device='cuda'))
        if t in markers:
            frames.append(x.cpu())
        if t not in markers:
            x = x.clamp(-1, 1).cpu().cuda()
torch.save(frames, 'frames.pt')
";

// Ex) if t_val in step_markers: frames.append(x.cpu())
#[test]
fn a_branch_at_listed_iterations_is_rare() {
    let a = run(SELECTED);
    // the listed iterations' copy is rare; `not in` runs nearly every iteration
    assert_eq!(lines_of(&a, "EA301"), vec![14], "{:?}", a.findings);
}

/// A research trainer class whose alternate training method runs only behind a flag that is
/// off by default, read through the config the class holds.
const METHOD_BEHIND_FLAG: &str = "import argparse
import torch

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--alternate', action='store_true')
    args = parser.parse_args()
    Solver(args).run()

class Solver(object):
    def __init__(self, config):
        self.config = config
        self.model = torch.nn.Linear(3, 3).cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.loader = torch.load('batches.pt')

    def train(self, epoch):
        for data, target in self.loader:
            loss = self.model(data.cuda()).sum()
            loss.backward()
            self.optimizer.step()

    def train2(self, epoch):
        for data, target in self.loader:
            loss = self.model(data.cuda()).sum()
            loss.backward()
            self.optimizer.step()
            print(loss.item())

    def run(self):
        for epoch in range(100):
            if self.config.alternate:
                self.train2(epoch)
            else:
                self.train(epoch)

if __name__ == '__main__':
    main()
";

// Ex) if self.config.srl_alternate: self.train2(epoch) else: self.train(epoch)
#[test]
fn a_method_called_only_behind_an_off_switch_does_not_run() {
    let a = run(METHOD_BEHIND_FLAG);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // on by default, it runs
    let on = METHOD_BEHIND_FLAG.replace("action='store_true'", "action='store_false'");
    assert_eq!(lines_of(&run(&on), "EA301"), vec![28]);
    // a method also handed on as a callback counts as called
    let hook = METHOD_BEHIND_FLAG.replace(
        "    Solver(args).run()",
        "    s = Solver(args)\n    register(s.train2)\n    s.run()",
    );
    assert_eq!(lines_of(&run(&hook), "EA301"), vec![30]);
}

/// A metric-learning loop over a progress bar bound before it, from a loader that pins memory.
const PROGRESS_BAR: &str = "import torch
from tqdm import tqdm
from torch.utils.data import DataLoader
from model import Net

model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
dl_tr = DataLoader(torch.load('ds.pt'), batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
for epoch in range(10):
    pbar = tqdm(enumerate(dl_tr))
    for batch_idx, (x, y) in pbar:
        m = model(x.squeeze().cuda())
        loss = (m - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
";

// Ex) pbar = tqdm(enumerate(dl_tr)) ... for batch_idx, (x, y) in pbar: x.squeeze().cuda()
#[test]
fn a_progress_bar_bound_before_the_loop_iterates_its_loader() {
    let a = run(PROGRESS_BAR);
    assert_eq!(lines_of(&a, "EA303"), vec![12, 13], "{:?}", a.findings);
    // over a loader that does not pin memory the copies cannot overlap anyway
    let unpinned = PROGRESS_BAR.replace("pin_memory=True, ", "");
    assert!(lines_of(&run(&unpinned), "EA303").is_empty());
}

/// FlowNet's validation: the first few batches' images go to TensorBoard writers.
const FIRST_FEW: &str = "import torch
from torch.utils.tensorboard import SummaryWriter
from models import FlowNetS

model = FlowNetS().cuda().eval()
writers = [SummaryWriter(f'runs/{i}') for i in range(3)]
errors = []
with torch.no_grad():
    for i, (inp, target) in enumerate(torch.load('val.pt')):
        output = model(inp.cuda())
        errors.append((output - target.cuda()).abs().mean())
        if i < len(writers):
            writers[i].add_image('Inputs', inp[0, :3].cuda().cpu(), 0)
        if i < 3:
            writers[i].add_image('Outputs', output[0].cpu(), 0)
torch.save(torch.stack(errors), 'errors.pt')
";

// Ex) if i < len(output_writers): output_writers[i].add_image(..., input[0].cpu())
#[test]
fn a_branch_for_the_first_few_iterations_is_rare() {
    let a = run(FIRST_FEW);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // bounded by the loop's own length, the branch runs nearly every time
    let most = FIRST_FEW.replace("if i < 3:", "if i < len(torch.load('val.pt')):");
    assert_eq!(lines_of(&run(&most), "EA301"), vec![15]);
}

/// Faster R-CNN validation: a prediction read back through a chain written over lines.
const CHAIN: &str = "import numpy as np
import torch
from torch.utils.data import DataLoader
from model import get_model

model = get_model().cuda().eval()
scores = []
with torch.no_grad():
    for images, targets in DataLoader(torch.load('val.pt'), batch_size=4, num_workers=2, pin_memory=True):
        outputs = model([im.cuda(non_blocking=True) for im in images])
        for i in range(len(images)):
            pred_boxes = (
                outputs[i]
                .get('boxes')
                .detach()
                .cpu()
                .numpy()
                .astype(np.int32)
            )
            scores.append(pred_boxes.sum())
print(sum(scores))
";

// Ex) pred_boxes = (outputs[i]\n .get("boxes")\n .detach()\n .cpu()\n .numpy())
#[test]
fn a_read_in_a_chain_over_lines_is_reported_on_its_own_line() {
    let a = run(CHAIN);
    assert_eq!(lines_of(&a, "EA301"), vec![16], "{:?}", a.findings);
    // on one line, the chain's line
    let one = CHAIN.replace(
        "(\n                outputs[i]\n                .get('boxes')\n                .detach()\n                .cpu()\n                .numpy()\n                .astype(np.int32)\n            )",
        "outputs[i].get('boxes').detach().cpu().numpy().astype(np.int32)",
    );
    assert_eq!(lines_of(&run(&one), "EA301"), vec![12]);
}

/// Generation under a list of thirteen layer-skip settings written out in the file.
const SETTINGS: &str = "import csv
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained('meta-llama/Llama-2-7b-hf')
model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf', torch_dtype=torch.float16).cuda()
input_ids = tokenizer('Once upon a time', return_tensors='pt').input_ids.cuda()
configurations = [
    {'name': 'base', 'skip': []},
    {'name': 'skip1', 'skip': [1]},
    {'name': 'skip2', 'skip': [2]},
]
for config in configurations:
    outputs = model(input_ids)
    with open('results.csv', 'a') as f:
        csv.writer(f).writerow([config['name'], outputs.logits.mean()])
";

// Ex) configurations = [{...}, ...] ... for config in configurations: ... open(csv_filename, "a")
#[test]
fn a_loop_over_a_few_settings_written_out_is_not_hot() {
    let a = run(SETTINGS);
    assert!(lines_of(&a, "EA501").is_empty(), "{:?}", a.findings);
    // over the lines of a file, the same body runs per line
    let many = SETTINGS.replace(
        "for config in configurations:",
        "for config in open('prompts.txt'):",
    );
    assert_eq!(lines_of(&run(&many), "EA501"), vec![13, 15]);
}

/// Song lyrics classified chunk by chunk with a Hugging Face zero-shot pipeline, row by row.
const PIPELINE_ROWS: &str = "import pandas as pd
from transformers import pipeline

classifier = pipeline('zero-shot-classification')
labels = ['positive', 'negative']
df = pd.read_csv('songs.csv')
df['Sentiment'] = ''
for index, row in df.iterrows():
    chunks = row['Lyrics'].split('\\n\\n')
    for chunk in chunks:
        result = classifier(chunk, candidate_labels=labels)
        df.at[index, 'Sentiment'] = result['labels'][0]
df.to_csv('out.csv')
";

// Ex) classifier = pipeline("zero-shot-classification") ... for i, row in df.iterrows(): classifier(...)
#[test]
fn a_row_loop_running_a_pipeline_is_model_bound() {
    assert!(lines_of(&run(PIPELINE_ROWS), "EA601").is_empty());
    // string work per row is the row loop the rule is for
    let plain = PIPELINE_ROWS.replace(
        "        result = classifier(chunk, candidate_labels=labels)\n        df.at[index, 'Sentiment'] = result['labels'][0]\n",
        "        df.at[index, 'Sentiment'] = chunk.lower()\n",
    );
    assert_eq!(lines_of(&run(&plain), "EA601"), vec![8]);
}

/// Speaker verification scores: a cosine similarity per trial, no network run in the loop.
const SIMILARITY: &str = "import torch

def scores(pairs, enrol_dict, test_dict):
    similarity = torch.nn.CosineSimilarity(dim=-1, eps=1e-6)
    out = []
    for i, line in enumerate(pairs):
        enrol = enrol_dict[line[0]]
        test = test_dict[line[1]]
        score = similarity(enrol, test)[0]
        out.append(score)
    return out

embedding_model = torch.load('m.pt').eval().cuda()
print(scores(open('veri.txt').readlines(), {}, {}))
";

// Ex) similarity = torch.nn.CosineSimilarity(dim=-1, eps=1e-6) ... score = similarity(enrol, test)
#[test]
fn a_module_without_weights_is_no_model_run() {
    assert!(lines_of(&run(SIMILARITY), "EA401").is_empty());
    // a layer with weights is
    let linear = SIMILARITY.replace(
        "torch.nn.CosineSimilarity(dim=-1, eps=1e-6)",
        "torch.nn.Linear(192, 192).cuda()",
    );
    assert_eq!(lines_of(&run(&linear), "EA401"), vec![6]);
}

/// Five-fold training: each fold builds its loaders, then trains them for several epochs.
const FOLDS: &str = "import torch
from torch.utils.data import DataLoader
from model import RobertaModel

for fold in range(5):
    train_loader = DataLoader(torch.load(f'train{fold}.pt'), batch_size=8, shuffle=True, num_workers=4, pin_memory=True)
    model = RobertaModel().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(3):
        for x, y in train_loader:
            with torch.autocast('cuda', dtype=torch.bfloat16):
                loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
";

// Ex) for fold in range(5): train_loader = DataLoader(...) ... for epoch in range(n): for d in train_loader:
#[test]
fn a_loader_per_fold_read_for_several_epochs_keeps_its_workers() {
    let a = run(FOLDS);
    assert_eq!(lines_of(&a, "EA103"), vec![6], "{:?}", a.findings);
    // built inside the epoch loop itself, a loader lives for one pass
    let per_epoch = FOLDS
        .replace("    train_loader = DataLoader(torch.load(f'train{fold}.pt'), batch_size=8, shuffle=True, num_workers=4, pin_memory=True)\n", "")
        .replace(
            "    for epoch in range(3):\n",
            "    for epoch in range(3):\n        train_loader = DataLoader(torch.load(f'train{fold}.pt'), batch_size=8, shuffle=True, num_workers=4, pin_memory=True)\n",
        );
    assert!(lines_of(&run(&per_epoch), "EA103").is_empty());
}

/// Detection fine-tuning: targets are lists of dicts, moved key by key.
const NESTED: &str = "import torch
from torch.utils.data import DataLoader
from model import get_detector

model = get_detector().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(torch.load('train.pt'), batch_size=4, num_workers=4, pin_memory=True, persistent_workers=True, collate_fn=lambda b: tuple(zip(*b)))
for epoch in range(10):
    for images, targets in loader:
        images = [im.to('cuda', non_blocking=True) for im in images]
        targets = [{k: v.to('cuda') for k, v in t.items()} for t in targets]
        losses = sum(model(images, targets).values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
";

// Ex) targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
#[test]
fn a_copy_in_a_nested_comprehension_over_the_batch_is_a_batch_copy() {
    assert_eq!(lines_of(&run(NESTED), "EA303"), vec![11]);
}

/// Training that also collects predictions for a COCO evaluation at every step.
const MODEL_OUTPUT_LOOP: &str = "import torch
from torch.utils.data import DataLoader
from model import get_detector

model = get_detector().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(torch.load('train.pt'), batch_size=4, num_workers=4, pin_memory=True, persistent_workers=True)
predictions = []
for epoch in range(10):
    for images, targets in loader:
        images = images.cuda(non_blocking=True)
        loss = model(images, targets).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for target, prediction in zip(targets, model(images)):
            boxes = prediction['boxes'].cpu().numpy()
            predictions.append((target['image_id'], boxes))
";

// Ex) for target, prediction in zip(targets, model(images)): prediction["boxes"].cpu()
#[test]
fn a_loop_over_model_outputs_reads_device_tensors() {
    let a = run(MODEL_OUTPUT_LOOP);
    assert_eq!(lines_of(&a, "EA301"), vec![17], "{:?}", a.findings);
    // a loader's own items, never moved, are host tensors
    let host = MODEL_OUTPUT_LOOP.replace(
        "        for target, prediction in zip(targets, model(images)):\n            boxes = prediction['boxes'].cpu().numpy()\n",
        "    for target, prediction in loader:\n            boxes = prediction['boxes'].cpu().numpy()\n",
    );
    assert!(lines_of(&run(&host), "EA301").is_empty());
}

/// LeNet trained with DDP over Gloo, PyTorch's CPU backend.
const GLOO: &str = "import argparse
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from model import LeNet5

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--backend', type=str, default='gloo')
    args = parser.parse_args()
    dist.init_process_group(backend=args.backend, init_method='env://')
    model = DDP(LeNet5())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(torch.load('cifar.pt'), batch_size=64, num_workers=2, persistent_workers=True)
    for epoch in range(10):
        for images, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(loss.item())

if __name__ == '__main__':
    main()
";

// Ex) dist.init_process_group(backend=backend, ...) with `default="gloo"`
#[test]
fn a_gloo_process_group_is_no_gpu() {
    let a = run(GLOO);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // NCCL distributes GPU work
    let nccl = GLOO.replace("default='gloo'", "default='nccl'");
    assert_eq!(lines_of(&run(&nccl), "EA201"), vec![17]);
}

/// GRPO: each question's rollout decodes with `generate` in a helper of the file.
const ROLLOUT: &str = "import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained('Qwen/Qwen2.5-0.5B')
model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-0.5B', torch_dtype=torch.bfloat16).cuda()

def rollout(model, tokenizer, question, group_size):
    inputs = tokenizer([question] * group_size, return_tensors='pt').to('cuda')
    ids = model.generate(**inputs, max_new_tokens=256, do_sample=True)
    returns = (ids == tokenizer.eos_token_id).float().sum(dim=1)
    return ids, returns

returns_all = []
with torch.no_grad():
    for q in open('questions.txt'):
        ids, returns = rollout(model, tokenizer, q, 8)
        returns_all.append(returns.cpu())
torch.save(torch.cat(returns_all), 'returns.pt')
";

// Ex) sequence_ids, returns, ... = rollout(model, tokenizer, q, a, ...) ... returns.cpu()
#[test]
fn a_loop_decoding_through_a_helper_reads_tokens_back_anyway() {
    let a = run(ROLLOUT);
    assert!(lines_of(&a, "EA301").is_empty(), "{:?}", a.findings);
    // a helper that runs one forward pass decodes nothing
    let forward = ROLLOUT.replace(
        "model.generate(**inputs, max_new_tokens=256, do_sample=True)",
        "model(**inputs).logits.argmax(-1)",
    );
    assert_eq!(lines_of(&run(&forward), "EA301"), vec![17]);
}

/// A DCGAN whose loader falls back to the main process when workers cannot start.
const FALLBACK: &str = "import torch
from torch.utils.data import DataLoader
from data import FaceDataset
from models import Generator

netG = Generator().cuda()
opt = torch.optim.Adam(netG.parameters(), lr=2e-4)
dataset = FaceDataset('faces')
try:
    loader = DataLoader(dataset, batch_size=128, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
except RuntimeError:
    loader = DataLoader(dataset, batch_size=128, shuffle=True, num_workers=0)
for epoch in range(5):
    for x in loader:
        loss = netG(x.cuda(non_blocking=True)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
";

// Ex) except RuntimeError: dataloader = DataLoader(dataset, ..., num_workers=0)
#[test]
fn a_fallback_loader_in_an_except_handler_does_not_run_as_shipped() {
    assert!(lines_of(&run(FALLBACK), "EA101").is_empty());
    // built unconditionally, the same loader is flagged
    let plain = FALLBACK
        .replace("try:\n    loader = DataLoader(dataset, batch_size=128, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)\nexcept RuntimeError:\n", "if True:\n");
    assert_eq!(lines_of(&run(&plain), "EA101"), vec![10]);
}

/// A validation loader whose one batch is the whole validation set.
const WHOLE_BATCH: &str = "import torch
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder
import torchvision.transforms as T
from model import SegNet

model = SegNet().cuda()
valid_data = ImageFolder(root='valid', transform=T.ToTensor())
val_loader = DataLoader(dataset=valid_data, batch_size=len(valid_data), shuffle=False, pin_memory=True)
model.eval()
with torch.no_grad():
    for epoch in range(10):
        for x, y in val_loader:
            out = model(x.cuda(non_blocking=True))
";

// Ex) val_loader = DataLoader(dataset=valid_data, batch_size=len(valid_data), shuffle=False)
#[test]
fn a_loader_whose_batch_is_its_dataset_needs_no_workers() {
    assert!(lines_of(&run(WHOLE_BATCH), "EA101").is_empty());
    let batches = WHOLE_BATCH.replace("batch_size=len(valid_data)", "batch_size=64");
    assert_eq!(lines_of(&run(&batches), "EA101"), vec![9]);
}

/// A convolutional detector whose command line speaks of transformers in its help texts.
const HELP_TEXT: &str = "import argparse
import torch
from torchvision.models import resnet50

parser = argparse.ArgumentParser('Set transformer detector')
parser.add_argument('--enc_layers', default=6, type=int, help='Number of encoding layers in the transformer')
args = parser.parse_args()
model = resnet50().cuda().eval()
with torch.no_grad():
    for x in torch.load('images.pt'):
        y = model(x.cuda(non_blocking=True))
        torch.save(y, 'out.pt')
";

// Ex) parser.add_argument('--enc_layers', ..., help="Number of encoding layers in the transformer")
#[test]
fn help_texts_name_no_transformer() {
    assert!(lines_of(&run(HELP_TEXT), "EA202").is_empty());
    // a transformer the file builds is one
    let vit = HELP_TEXT.replace("resnet50", "vit_b_16");
    assert_eq!(lines_of(&run(&vit), "EA202"), vec![8]);
}

/// A DeepSpeed loop: the precision is in the JSON config the launcher passes.
const DEEPSPEED: &str = "import argparse
import torch
import deepspeed
from model import Decoder

parser = argparse.ArgumentParser()
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = Decoder(vocab=32000, dim=1024, layers=12)
model_engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step, (x, y) in enumerate(torch.load('tokens.pt')):
    x, y = x.to(model_engine.device), y.to(model_engine.device)
    loss = model_engine(x, y)
    model_engine.backward(loss)
    model_engine.step()
";

// Ex) model_engine, _, _, _ = deepspeed.initialize(args=args, model=model, ...)
#[test]
fn deepspeed_precision_is_unknown() {
    let a = run(DEEPSPEED);
    assert!(lines_of(&a, "EA201").is_empty(), "{:?}", a.findings);
    assert!(lines_of(&a, "EA202").is_empty(), "{:?}", a.findings);
}

/// Images compressed one by one, each in a `while` pass repeated until it is small enough.
const RETRY_PASS: &str = "import os
from PIL import Image

def compress(folder, out, target_kb=500):
    files = [f for f in os.listdir(folder) if f.endswith('.jpg')]
    for name in files:
        path = os.path.join(folder, name)
        quality = 95
        while True:
            img = Image.open(path)
            img.save(os.path.join(out, name), quality=quality)
            if os.path.getsize(os.path.join(out, name)) < target_kb * 1024:
                break
            quality -= 10

if __name__ == '__main__':
    compress('images', 'out')
";

// Ex) for image_name in image_files: while True: img = Image.open(image_path); ... img.save(p); break
#[test]
fn per_file_work_in_a_while_pass_is_the_file_loops() {
    assert_eq!(lines_of(&run(RETRY_PASS), "EA602"), vec![6]);
    // a loop over other files nested inside stays the inner loop's work
    let nested = RETRY_PASS.replace("        while True:\n", "        for other in files:\n");
    assert!(!lines_of(&run(&nested), "EA602").contains(&6));
}
