//! The twenty-sixth accuracy round: shapes from the blind wave g674–g681 that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// An optical-flow trainer whose inference pass runs only on request: `--inference`, or
/// `--render_validation` every few epochs, both flags off by default.
const INFERENCE_ON_REQUEST: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--inference', action='store_true')
parser.add_argument('--render_validation', action='store_true')
parser.add_argument('--validation_frequency', type=int, default=5)
args = parser.parse_args()

model = torch.nn.Linear(4, 4).cuda()


def inference(loader):
    for x in loader:
        with torch.no_grad():
            out = model(x.cuda())
        total = out.sum().item()


for epoch in range(10):
    if args.inference or (args.render_validation and ((epoch - 1) % args.validation_frequency) == 0):
        inference(loader)
";

// Ex) if args.inference or (args.render_validation and (epoch - 1) % k == 0): inference(...)
#[test]
fn switches_joined_by_or_are_off_when_each_is() {
    assert!(lines_of(&run(INFERENCE_ON_REQUEST), "EA301").is_empty());
    // one side on by default: the pass runs, and its read is reported
    let on = INFERENCE_ON_REQUEST.replace(
        "parser.add_argument('--inference', action='store_true')",
        "parser.add_argument('--inference', default=True)",
    );
    assert_eq!(lines_of(&run(&on), "EA301"), vec![17]);
    // a side the engine cannot read keeps the branch running
    let unknown =
        INFERENCE_ON_REQUEST.replace("if args.inference or", "if os.environ.get('INFER') or");
    assert_eq!(lines_of(&run(&unknown), "EA301"), vec![17]);
}

/// A distillation script with two `test_model` functions: the first is replaced by the second
/// before `__main__` calls it.
const TWO_DEFINITIONS: &str = "import torch
from torch.utils.data import DataLoader


@torch.no_grad()
def test_model(model, loader, device):
    correct = 0
    for images, labels in loader:
        outputs = model(images.to(device))
        correct += (outputs.argmax(1) == labels.to(device)).sum().item()
    return correct


def train(model, loader, test_loader, device):
    for epoch in range(10):
        test_model(model, test_loader, device, 10)


@torch.no_grad()
def test_model(model, loader, device, classes):
    hits = torch.zeros(classes, device=device)
    for images, labels in loader:
        outputs = model(images.to(device))
        hits += (outputs.argmax(1) == labels.to(device)).float().sum()
    return hits


if __name__ == '__main__':
    device = torch.device('cuda')
    model = torch.nn.Linear(8, 10).to(device)
    loader = DataLoader(data, batch_size=32, num_workers=4, pin_memory=True)
    train(model, loader, loader, device)
";

// Ex) def test_model(...): ... (replaced by a later def test_model(...) before any call)
#[test]
fn a_function_defined_again_further_down_is_replaced() {
    assert!(lines_of(&run(TWO_DEFINITIONS), "EA301").is_empty());
    // called at module level before the second definition: the first one runs
    let called = TWO_DEFINITIONS.replace(
        "\n\ndef train(",
        "\n\nbaseline = test_model(net, warmup_loader, 'cuda')\n\n\ndef train(",
    );
    assert_eq!(lines_of(&run(&called), "EA301"), vec![10]);
}

/// A seq2seq evaluation that decodes each batch with a beam search built around the model.
const BEAM_SEARCH: &str = "import torch
from beam_search_lstm import BeamSearchLSTM

device = torch.device('cuda')
model = Seq2Seq(vocab_size=32000).to(device)
beam_search = BeamSearchLSTM(model, tokenizer, beam_size=4, max_len=100)


def evaluate(test_loader):
    references, hypotheses = [], []
    model.eval()
    for batch in test_loader:
        src = batch['article'].to(device)
        tgt = batch['summary'].to(device)
        with torch.no_grad():
            generated = beam_search.generate(src)
        for j in range(len(generated)):
            references.append(tgt[j].cpu().tolist())
            hypotheses.append(generated[j])
    return references, hypotheses


if __name__ == '__main__':
    evaluate(test_loader)
";

// Ex) generated = beam_search.generate(src) with beam_search = BeamSearchLSTM(model, tokenizer)
#[test]
fn a_decoder_built_around_the_model_reads_every_token_back() {
    assert!(lines_of(&run(BEAM_SEARCH), "EA301").is_empty());
    // a scorer built around the model decodes nothing: the read is reported
    let scorer = BEAM_SEARCH
        .replace("BeamSearchLSTM(model", "Scorer(model")
        .replace("beam_search.generate(src)", "beam_search.score(src)");
    assert_eq!(lines_of(&run(&scorer), "EA301"), vec![18]);
}

/// A RAFT inference loop writing each flow field with a camel-cased writer.
const FLOW_WRITER: &str = "import torch
from utils import frame_utils

model = RAFT(args).cuda().eval()
with torch.no_grad():
    for f_id in range(len(frames) - 1):
        image1, image2 = load_image(frames[f_id]), load_image(frames[f_id + 1])
        _, flow12 = model(image1, image2, iters=24, test_mode=True)
        flow = flow12[0].permute(1, 2, 0).cpu().numpy()
        frame_utils.writeFlow(out_files[f_id], flow)
";

// Ex) flow = flow12[0].cpu().numpy() ... frame_utils.writeFlow(path, flow)
#[test]
fn a_camel_cased_writer_takes_the_output_off_the_device() {
    assert!(lines_of(&run(FLOW_WRITER), "EA301").is_empty());
    // a function that is no writer (`writer` is no camel-cased verb): the read is reported
    let other = FLOW_WRITER.replace("frame_utils.writeFlow(", "frame_utils.writerof(");
    assert_eq!(lines_of(&run(&other), "EA301"), vec![9]);
}

// Ex) class ModelAndLoss(nn.Module): def forward(self, data, target, inference=False): ...
//     (a parameter named like the script's `inference` pass, which runs only on request)
#[test]
fn a_parameter_named_like_a_function_does_not_call_it() {
    let src = INFERENCE_ON_REQUEST.replace(
        "model = torch.nn.Linear(4, 4).cuda()\n",
        "with timer('building'):
    class Wrapped(torch.nn.Module):
        def forward(self, x, inference=False):
            if not inference:
                return x * 2
            return x

model = torch.nn.Linear(4, 4).cuda()
",
    );
    assert!(lines_of(&run(&src), "EA301").is_empty());
    // a method that calls the function by its name (no parameter binds it) still calls it
    let calls = src
        .replace("inference=False", "infer=False")
        .replace("if not inference:", "if not inference(loader):");
    assert_eq!(lines_of(&run(&calls), "EA301"), vec![24]);
}

/// A student's MNIST script whose first loader is replaced two lines on, before anything reads
/// it (a copy-paste slip: the test set bound to `train_loader` again).
const REBOUND_LOADER: &str = "import torch
from torch.utils.data import DataLoader

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
train_loader = DataLoader(dataset=train_data, batch_size=64, shuffle=True)

train_loader = DataLoader(dataset=test_data, batch_size=64, shuffle=True)

model = Net().to(device)
for epoch in range(5):
    for x, y in train_loader:
        loss = loss_fn(model(x.to(device)), y.to(device))
        loss.backward()
        optim.step()
";

// Ex) train_loader = DataLoader(train_data) ... train_loader = DataLoader(test_data)
#[test]
fn a_loader_bound_again_before_any_read_is_not_read() {
    assert_eq!(lines_of(&run(REBOUND_LOADER), "EA101"), vec![7]);
    // read in between: both loaders are read
    let read = REBOUND_LOADER.replace(
        "\ntrain_loader = DataLoader(dataset=test_data",
        "print(len(train_loader.dataset), next(iter(train_loader))[0].shape)\nfor b in train_loader:\n    show(b)\ntrain_loader = DataLoader(dataset=test_data",
    );
    assert_eq!(lines_of(&run(&read), "EA101"), vec![5, 9]);
}

/// A Hugging Face script that tries newer options first and falls back to fewer on old
/// versions: the first `TrainingArguments` is the one the Trainer gets as shipped.
const FALLBACK_ARGS: &str = "from transformers import Trainer, TrainingArguments

try:
    training_args = TrainingArguments(
        output_dir='./out',
        per_device_train_batch_size=16,
        eval_steps=500,
    )
except TypeError:
    training_args = TrainingArguments(
        output_dir='./out',
        per_device_train_batch_size=16,
    )

trainer = Trainer(model=model, args=training_args, train_dataset=train_ds)
trainer.train()
";

// Ex) try: training_args = TrainingArguments(..., eval_steps=500) except TypeError: ...
#[test]
fn a_fallback_in_an_except_handler_is_not_the_configuration_shipped() {
    let out = run(FALLBACK_ARGS);
    for rule in ["EA201", "EA203"] {
        assert_eq!(lines_of(&out, rule), vec![4], "{rule}");
    }
    // no handler: the later binding is the one handed over
    let plain = FALLBACK_ARGS
        .replace("try:\n", "if True:\n")
        .replace("except TypeError:\n", "if old_version:\n");
    assert_eq!(lines_of(&run(&plain), "EA201"), vec![10]);
}

/// A DeepSpeed demo whose epoch count defaults to -1 (given on the command line): as shipped it
/// trains nothing; and a CycleGAN whose `range(1, NUM_EPOCHS + 1)` runs once.
const NO_EPOCHS: &str = "import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--epoch', type=int, default=-1, help='epoch')
cmd_args = parser.parse_args()

dataloader = torch.utils.data.DataLoader(dataset, batch_size=32, num_workers=1, shuffle=True)
model = Net().cuda()
for epoch in range(cmd_args.epoch):
    for i, data in enumerate(dataloader):
        loss = model(data[0].cuda()).sum()
        loss.backward()
        optimizer.step()
";

// Ex) for epoch in range(cmd_args.epoch):  (default=-1)
#[test]
fn an_epoch_loop_that_runs_no_pass_or_one_restarts_nothing() {
    let out = run(NO_EPOCHS);
    assert!(lines_of(&out, "EA103").is_empty());
    assert!(lines_of(&out, "EA203").is_empty());
    let once = NO_EPOCHS
        .replace("default=-1", "default=1")
        .replace("range(cmd_args.epoch)", "range(1, cmd_args.epoch + 1)");
    assert!(lines_of(&run(&once), "EA103").is_empty());
    // five hundred epochs: the workers restart each time, and compiling pays
    let five = NO_EPOCHS.replace("default=-1", "default=500");
    let out = run(&five);
    assert_eq!(lines_of(&out, "EA103"), vec![8]);
    assert_eq!(lines_of(&out, "EA203"), vec![9]);
}
