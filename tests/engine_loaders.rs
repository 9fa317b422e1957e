//! DataLoader facts, torch-backed libraries and CUDA / precision evidence, checked on small
//! snippets in the shapes real scripts use (pytorch/examples, Hugging Face examples).

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use efficiency_audit::analysis::facts::Val;
mod common;

use common::analyse as run;
use efficiency_audit::analysis::FileAnalysis;

fn rules_of(a: &FileAnalysis) -> Vec<String> {
    a.findings.iter().map(|f| f.rule.clone()).collect()
}

fn has(a: &FileAnalysis, rule: &str) -> bool {
    a.findings.iter().any(|f| f.rule == rule)
}

const ARGS: &str = "import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument('--no-cuda', action='store_true', default=False)
args = parser.parse_args()
";

const TRAIN: &str = "
model = Net().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        loss = model(x).sum()
        loss.backward()
        opt.step()
";

// Ex) kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}
#[test]
fn conditional_kwargs_take_the_cuda_branch_on_cuda() {
    let src = format!(
        "{ARGS}use_cuda = not args.no_cuda and torch.cuda.is_available()
device = torch.device('cuda' if use_cuda else 'cpu')
kwargs = {{'num_workers': 1, 'pin_memory': True}} if use_cuda else {{}}
train_loader = torch.utils.data.DataLoader(ds, batch_size=64, **kwargs)
{TRAIN}"
    );
    let a = run(&src);
    assert_eq!(a.facts.loaders[0].num_workers, Val::Int(1));
    assert_eq!(a.facts.loaders[0].pin_memory, Val::Bool(true));
    // workers restarted every epoch; the pinned batch is copied blocking
    assert!(has(&a, "EA103"), "{:?}", rules_of(&a));
    assert!(has(&a, "EA303"), "{:?}", rules_of(&a));
    assert!(!has(&a, "EA101") && !has(&a, "EA102"), "{:?}", rules_of(&a));
}

// Ex) args.cuda = not args.no_cuda and torch.cuda.is_available()
#[test]
fn conditional_kwargs_follow_an_attribute_flag() {
    let src = format!(
        "{ARGS}args.cuda = not args.no_cuda and torch.cuda.is_available()
device = torch.device('cuda' if args.cuda else 'cpu')
kwargs = {{'num_workers': 1, 'pin_memory': True}} if args.cuda else {{}}
train_loader = torch.utils.data.DataLoader(ds, batch_size=64, **kwargs)
{TRAIN}"
    );
    let a = run(&src);
    assert_eq!(a.facts.loaders[0].num_workers, Val::Int(1));
    assert!(has(&a, "EA103"), "{:?}", rules_of(&a));
}

// Ex) if use_cuda: train_kwargs.update(cuda_kwargs)
#[test]
fn dict_updates_under_the_cuda_branch_merge_their_keys() {
    let src = format!(
        "{ARGS}use_cuda = not args.no_cuda and torch.cuda.is_available()
device = torch.device('cuda' if use_cuda else 'cpu')
train_kwargs = {{'batch_size': 64}}
if use_cuda:
    cuda_kwargs = {{'num_workers': 1, 'pin_memory': True, 'shuffle': True}}
    train_kwargs.update(cuda_kwargs)
train_loader = torch.utils.data.DataLoader(ds, **train_kwargs)
{TRAIN}"
    );
    let a = run(&src);
    let l = &a.facts.loaders[0];
    assert_eq!(l.batch_size, Val::Int(64));
    assert_eq!(l.num_workers, Val::Int(1));
    assert_eq!(l.pin_memory, Val::Bool(true));
    assert!(has(&a, "EA103") && has(&a, "EA303"), "{:?}", rules_of(&a));
}

#[test]
fn dict_updates_with_literal_keys_and_items_are_folded_in_order() {
    let src = "import torch
kwargs = dict(batch_size=32)
kwargs.update({'num_workers': 2})
kwargs['pin_memory'] = True
kwargs.update(num_workers=4)
loader = torch.utils.data.DataLoader(ds, **kwargs)
";
    let l = &run(src).facts.loaders[0];
    assert_eq!(l.batch_size, Val::Int(32));
    assert_eq!(l.num_workers, Val::Int(4));
    assert_eq!(l.pin_memory, Val::Bool(true));
}

#[test]
fn unknown_conditions_and_updates_stay_unknown() {
    // a condition the engine cannot read: the branches disagree, so the key is unknown
    let src = "import torch
def make(ds, fast):
    kwargs = {'num_workers': 4} if fast else {}
    return torch.utils.data.DataLoader(ds, **kwargs)
";
    let a = run(src);
    assert_eq!(a.facts.loaders[0].num_workers, Val::Unknown);
    assert!(!has(&a, "EA101"), "{:?}", rules_of(&a));
    // an update from something that is not a literal dict
    let src = "import torch
kwargs = {'batch_size': 8}
kwargs.update(load_config())
loader = torch.utils.data.DataLoader(ds, **kwargs)
";
    let a = run(src);
    assert_eq!(a.facts.loaders[0].num_workers, Val::Unknown);
    assert_eq!(a.facts.loaders[0].batch_size, Val::Unknown);
    // an update under an unknown guard
    let src = "import torch
def make(ds, fast):
    kwargs = {'batch_size': 8}
    if fast:
        kwargs.update({'num_workers': 4})
    return torch.utils.data.DataLoader(ds, **kwargs)
";
    let a = run(src);
    assert_eq!(a.facts.loaders[0].num_workers, Val::Unknown);
    assert_eq!(a.facts.loaders[0].batch_size, Val::Int(8));
}

#[test]
fn the_cpu_branch_is_taken_when_the_flag_disables_cuda_by_default() {
    // `--cuda` off by default: as shipped the file runs on the CPU branch
    let src = "import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument('--cuda', action='store_true')
args = parser.parse_args()
device = torch.device('cuda' if args.cuda else 'cpu')
kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}
loader = torch.utils.data.DataLoader(ds, **kwargs)
";
    let l = &run(src).facts.loaders[0];
    assert_eq!(l.num_workers, Val::Absent);
    assert_eq!(l.pin_memory, Val::Absent);
}

const TEXT_TRAIN: &str = "
model = AutoModelForSequenceClassification.from_pretrained('bert-base-cased').to('cuda')
opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
for epoch in range(3):
    for batch in train_loader:
        batch = {k: v.to('cuda') for k, v in batch.items()}
        loss = model(**batch).loss
        loss.backward()
        opt.step()
";

// Ex) DataLoader(tokenized["train"], collate_fn=DataCollatorWithPadding(tokenizer))
#[test]
fn pretokenized_text_with_a_padding_collator_needs_no_workers_nor_pinning() {
    let src = format!(
        "import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding
tokenizer = AutoTokenizer.from_pretrained('bert-base-cased')
raw = load_dataset('glue', 'mrpc')
def tokenize(batch):
    return tokenizer(batch['sentence1'], batch['sentence2'], truncation=True)
tokenized = raw.map(tokenize, batched=True)
tokenized = tokenized.rename_column('label', 'labels')
collator = DataCollatorWithPadding(tokenizer)
train_loader = DataLoader(tokenized['train'], shuffle=True, collate_fn=collator, batch_size=32)
{TEXT_TRAIN}"
    );
    let a = run(&src);
    assert!(a.parsed);
    assert!(!has(&a, "EA101") && !has(&a, "EA102"), "{:?}", rules_of(&a));
}

#[test]
fn pretokenized_text_padded_by_a_local_function_or_the_default_collator() {
    // a lambda tokenises; a local function only calls `tokenizer.pad`
    let src = format!(
        "import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained('bert-base-cased')
ds = raw.map(lambda e: tokenizer(e['text'], truncation=True), batched=True)
def collate_fn(examples):
    return tokenizer.pad(examples, padding='longest', return_tensors='pt')
train_loader = DataLoader(ds['train'], collate_fn=collate_fn, batch_size=16)
{TEXT_TRAIN}"
    );
    let a = run(&src);
    assert!(!has(&a, "EA101") && !has(&a, "EA102"), "{:?}", rules_of(&a));
    let src = format!(
        "import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, default_data_collator
tokenizer = AutoTokenizer.from_pretrained('gpt2')
def tokenize_function(examples):
    return tokenizer(examples['text'])
tokenized = raw.map(tokenize_function, batched=True)
lm = tokenized.map(group_texts, batched=True)
train_dataset = lm['train']
train_loader = DataLoader(train_dataset, shuffle=True, collate_fn=default_data_collator, batch_size=8)
{TEXT_TRAIN}"
    );
    let a = run(&src);
    assert!(!has(&a, "EA101") && !has(&a, "EA102"), "{:?}", rules_of(&a));
}

#[test]
fn loaders_that_decode_per_item_or_collate_more_than_padding_still_need_workers() {
    // a per-item transform on the tokenised dataset
    let src = format!(
        "import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding
tokenizer = AutoTokenizer.from_pretrained('bert-base-cased')
ds = raw.map(lambda e: tokenizer(e['text']), batched=True)
ds.set_transform(augment)
train_loader = DataLoader(ds['train'], collate_fn=DataCollatorWithPadding(tokenizer), batch_size=16)
{TEXT_TRAIN}"
    );
    let a = run(&src);
    // (a batch of ids is a few kilobytes however it is built: no pinning advice)
    assert!(has(&a, "EA101") && !has(&a, "EA102"), "{:?}", rules_of(&a));
    // the collate tokenises raw text itself
    let src = format!(
        "import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained('bert-base-cased')
ds = raw.map(lambda e: tokenizer(e['text']), batched=True)
def collate_fn(rows):
    return tokenizer([r['text'] for r in rows], padding=True, return_tensors='pt')
train_loader = DataLoader(ds['train'], collate_fn=collate_fn, batch_size=16)
{TEXT_TRAIN}"
    );
    let a = run(&src);
    assert!(has(&a, "EA101"), "{:?}", rules_of(&a));
    // a padding collator over a dataset nothing tokenised ahead of time
    let src = format!(
        "import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, DataCollatorWithPadding
train_loader = DataLoader(MyDataset(path), collate_fn=DataCollatorWithPadding(tok), batch_size=16)
{TEXT_TRAIN}"
    );
    let a = run(&src);
    assert!(has(&a, "EA101"), "{:?}", rules_of(&a));
}

#[test]
fn workers_on_a_pretokenized_loader_are_still_restarted_every_epoch() {
    let src = format!(
        "import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, default_data_collator
tokenizer = AutoTokenizer.from_pretrained('gpt2')
ds = raw.map(lambda e: tokenizer(e['text']), batched=True)
train_loader = DataLoader(ds['train'], collate_fn=default_data_collator, batch_size=8, num_workers=2)
{TEXT_TRAIN}"
    );
    let a = run(&src);
    assert!(has(&a, "EA103"), "{:?}", rules_of(&a));
}

const ACCEL: &str = "import argparse
import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification
def train(args):
    accelerator = Accelerator(mixed_precision=args.mixed_precision)
    model = AutoModelForSequenceClassification.from_pretrained('bert-base-cased')
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    model, opt, loader = accelerator.prepare(model, opt, loader)
    for epoch in range(3):
        for batch in loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            opt.step()
def main():
    parser = argparse.ArgumentParser()
";

// Ex) Accelerator(mixed_precision=args.mixed_precision) with `default="no"`
#[test]
fn accelerate_precision_resolves_through_the_argparse_default() {
    let fp32 = format!(
        "{ACCEL}    parser.add_argument('--mixed_precision', type=str, default='no')\n    train(parser.parse_args())\n"
    );
    let a = run(&fp32);
    assert!(!a.facts.precision.unresolved);
    assert!(has(&a, "EA201") && has(&a, "EA202"), "{:?}", rules_of(&a));
    let bf16 = format!(
        "{ACCEL}    parser.add_argument('--mixed_precision', type=str, default='bf16')\n    train(parser.parse_args())\n"
    );
    let a = run(&bf16);
    assert!(a.facts.precision.autocast);
    assert!(!has(&a, "EA201"), "{:?}", rules_of(&a));
    // `None`, like no argument: Accelerate's default, "no" (fp32) as shipped; only a launch
    // configuration outside the repository would change it
    let launcher = format!(
        "{ACCEL}    parser.add_argument('--mixed_precision', type=str, default=None)\n    train(parser.parse_args())\n"
    );
    let a = run(&launcher);
    assert!(!a.facts.precision.unresolved);
    assert!(has(&a, "EA201") && has(&a, "EA202"), "{:?}", rules_of(&a));
}

// Ex) from sentence_transformers import SentenceTransformer (no `import torch`)
#[test]
fn sentence_transformers_is_torch_on_the_device_it_names() {
    let src = "from sentence_transformers import SentenceTransformer
model = SentenceTransformer('all-mpnet-base-v2', device='cuda')
sentences = [line.strip() for line in open('corpus.txt')]
embeddings = model.encode(sentences, batch_size=64, convert_to_tensor=True)
";
    let a = run(src);
    assert!(
        a.parsed,
        "the prefilter must parse a sentence-transformers file"
    );
    let tf32: Vec<usize> = a
        .findings
        .iter()
        .filter(|f| f.rule == "EA202")
        .map(|f| f.line)
        .collect();
    assert_eq!(tf32, [2], "{:?}", rules_of(&a));
    // placed on the CPU explicitly, or on no device the file names (the library picks CUDA
    // when it finds one, but the code is not written for it; twelfth-session labels): no GPU
    // rule
    let a = run(&src.replace("device='cuda'", "device='cpu'"));
    assert!(!has(&a, "EA202"), "{:?}", rules_of(&a));
    let a = run(&src.replace(", device='cuda'", ""));
    assert!(!has(&a, "EA202"), "{:?}", rules_of(&a));
}

// Ex) processor(image, return_tensors="pt"); model(**inputs) with no `import torch` (on CUDA:
//     EA401 is a GPU rule)
#[test]
fn transformers_pytorch_model_classes_are_torch_evidence() {
    let src = "from transformers import AutoImageProcessor, ResNetForImageClassification
from PIL import Image
processor = AutoImageProcessor.from_pretrained('ckpt')
model = ResNetForImageClassification.from_pretrained('ckpt', device_map='cuda')
for path in paths:
    inputs = processor(Image.open(path), return_tensors='pt')
    logits = model(**inputs).logits
    print(logits.argmax(-1))
";
    let a = run(src);
    assert!(has(&a, "EA401"), "{:?}", rules_of(&a));
    // the TensorFlow classes are not torch
    let tf = src
        .replace(
            "ResNetForImageClassification",
            "TFResNetForImageClassification",
        )
        .replace("'pt'", "'tf'");
    let a = run(&tf);
    assert!(!has(&a, "EA401"), "{:?}", rules_of(&a));
}

// Ex) a library module: `device` is a parameter, the code calls `torch.cuda.synchronize()`
#[test]
fn torch_cuda_runtime_calls_are_cuda_evidence() {
    let src = "import torch
def train_one_epoch(model, optimizer, data_loader, device):
    for images, targets in data_loader:
        images = images.to(device)
        with torch.cuda.amp.autocast(enabled=False):
            loss = model(images, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())

def evaluate(model, data_loader, device):
    cpu_device = torch.device('cpu')
    for images, targets in data_loader:
        images = images.to(device)
        torch.cuda.synchronize()
        outputs = model(images)
        outputs = [o.to(cpu_device) for o in outputs]
        res = {t['image_id'].item(): o for t, o in zip(targets, outputs)}
";
    let a = run(src);
    let syncs: Vec<usize> = a
        .findings
        .iter()
        .filter(|f| f.rule == "EA301")
        .map(|f| f.line)
        .collect();
    // the loss is on the GPU; the targets of `evaluate` never leave the CPU
    assert_eq!(syncs, [10], "{:?}", a.findings);
}

#[test]
fn token_id_batches_need_no_workers_or_pinning() {
    // `.map(tokenize)` padded to a fixed length, default collate: the rows are stacked
    let mapped = "\
import torch
from torch.utils.data import DataLoader
from transformers import BertTokenizer, BertForSequenceClassification
from datasets import load_dataset
model = BertForSequenceClassification.from_pretrained('bert-base-uncased').to('cuda')
tokenizer = BertTokenizer.from_pretrained('bert-base-uncased')
ds = load_dataset('imdb')['train']
def encode(ex):
    return tokenizer(ex['text'], truncation=True, padding='max_length', max_length=512)
ds = ds.map(encode, batched=True)
loader = DataLoader(ds, batch_size=8, shuffle=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for batch in loader:
    loss = model(**{k: v.to('cuda') for k, v in batch.items()}).loss
    loss.backward()
    optimizer.step()
";
    let a = common::analyse(mapped);
    assert!(!has(&a, "EA101") && !has(&a, "EA102"), "{:?}", rules_of(&a));
    // a dataset class from another module, in a file that only tokenizes text
    let text = mapped
        .replace("ds = ds.map(encode, batched=True)\n", "")
        .replace("DataLoader(ds,", "DataLoader(ReviewDataset(tokenizer),");
    // (its items are token ids, a few row lookups each: no workers, no pinning)
    let a = common::analyse(&text);
    assert!(!has(&a, "EA101") && !has(&a, "EA102"), "{:?}", rules_of(&a));
    // a collate of its own may tokenize per batch: workers stay advised
    let collated = text.replace("batch_size=8,", "batch_size=8, collate_fn=encode_batch,");
    let a = common::analyse(&collated);
    assert!(has(&a, "EA101") && !has(&a, "EA102"), "{:?}", rules_of(&a));
    // the same loader in a file that also handles images keeps both findings
    let images = text.replace("import torch\n", "import torch\nfrom PIL import Image\n");
    let a = common::analyse(&images);
    assert!(has(&a, "EA101") && has(&a, "EA102"), "{:?}", rules_of(&a));
}

#[test]
fn loaders_rebuilt_each_pass_or_over_a_dataset_changed_each_epoch_keep_no_workers() {
    let head = "\
import torch
from torch.utils.data import DataLoader
device = torch.device('cuda')
model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
";
    let step = "        loss = model(x.to(device)).sum()\n        loss.backward()\n        optimizer.step()\n";
    // built inside the function every epoch calls
    let rebuilt = format!(
        "{head}def validate(valset):\n    loader = DataLoader(valset, num_workers=2, batch_size=64)\n    for x in loader:\n        model(x.to(device))\n\
train_loader = DataLoader(train_set, num_workers=4, batch_size=64)\n\
for epoch in range(100):\n    for x in train_loader:\n{step}    validate(val_set)\n"
    );
    let a = common::analyse(&rebuilt);
    assert_eq!(
        common::rule_lines(&a, "EA103"),
        vec![10],
        "{:?}",
        rules_of(&a)
    );
    // the dataset resamples its negatives every epoch: workers must fork anew to see them
    let resampled = format!(
        "{head}train_loader = DataLoader(train_set, num_workers=4, batch_size=64)\n\
for epoch in range(100):\n    train_loader.dataset.ng_sample()\n    for x in train_loader:\n{step}"
    );
    let a = common::analyse(&resampled);
    assert!(!has(&a, "EA103"), "{:?}", rules_of(&a));
}

#[test]
fn a_trainer_over_token_ids_needs_no_workers() {
    let src = "\
from transformers import AutoTokenizer, AutoModelForCausalLM, Trainer, TrainingArguments
tokenizer = AutoTokenizer.from_pretrained('gpt2')
model = AutoModelForCausalLM.from_pretrained('gpt2')
ds = raw.map(lambda e: tokenizer(e['text']), batched=True)
args = TrainingArguments('out', per_device_train_batch_size=16, bf16=True)
Trainer(model=model, args=args, train_dataset=ds).train()
";
    assert!(!has(&common::analyse(src), "EA101"));
    // a per-item transform is work the workers would overlap
    let transformed = src.replace("args = ", "ds.set_transform(augment)\nargs = ");
    assert!(has(&common::analyse(&transformed), "EA101"));
}
