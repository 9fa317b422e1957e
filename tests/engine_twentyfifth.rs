//! The twenty-fifth accuracy round: shapes from the blind waves g642– that the engine read
//! wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A segmentation trainer whose `main()` stops at a debugging `exit()` before the training it
/// then calls.
const EXITS_FIRST: &str = "import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Conv2d(3, 512, 3), nn.ReLU(), nn.Conv2d(512, 2048, 3)).cuda()
        self.loader = DataLoader(train_set, batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True)
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def training(self):
        for epoch in range(100):
            for image, mask in self.loader:
                image, mask = image.cuda(non_blocking=True), mask.cuda(non_blocking=True)
                loss = nn.functional.cross_entropy(self.model(image), mask)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                print(loss.item())


def main():
    torch.cuda.set_device(0)
    visualise()
    exit()
    trainer = Trainer()
    trainer.training()


if __name__ == '__main__':
    main()
";

// Ex) exit()  (in main(), before `trainer.training()`)
#[test]
fn code_after_an_exit_in_its_block_never_runs() {
    let out = run(EXITS_FIRST);
    for rule in ["EA201", "EA203", "EA301"] {
        assert!(lines_of(&out, rule).is_empty(), "{rule}");
    }
    // the exit under a test leaves only when the test holds: the training runs
    let guarded = EXITS_FIRST.replace("    exit()\n", "    if args_only:\n        exit()\n");
    let out = run(&guarded);
    assert_eq!(lines_of(&out, "EA201"), vec![14]);
    assert_eq!(lines_of(&out, "EA301"), vec![20]);
    // and with the exit after the training, it runs too
    let after = EXITS_FIRST.replace("    exit()\n", "").replace(
        "    trainer.training()\n",
        "    trainer.training()\n    exit()\n",
    );
    let out = run(&after);
    assert_eq!(lines_of(&out, "EA201"), vec![14]);
}

/// Resizing every image under a folder: the files of each directory `os.walk` yields, through
/// the walk bound to a name first.
const WALKED: &str = "import os
import cv2

if __name__ == '__main__':
    g = os.walk('/data/mnist/test_images')
    for path, dir_list, file_list in g:
        for file_name in file_list:
            img = cv2.imread(os.path.join(path, file_name))
            img = cv2.resize(img, (64, 64), interpolation=cv2.INTER_CUBIC)
            cv2.imwrite(os.path.join(path, '0_' + file_name), img)
";

// Ex) for path, dirs, file_list in os.walk(root): for name in file_list: ...
#[test]
fn the_files_an_os_walk_yields_are_a_listing() {
    let out = run(WALKED);
    assert_eq!(lines_of(&out, "EA602"), vec![7]);
    // the walk written in the loop header, the same
    let direct = WALKED
        .replace("    g = os.walk('/data/mnist/test_images')\n", "")
        .replace(" in g:", " in os.walk('/data/mnist/test_images'):");
    assert_eq!(lines_of(&run(&direct), "EA602"), vec![6]);
    // a list of a tuple the loop builds itself is no listing
    let built = WALKED.replace(
        "    g = os.walk('/data/mnist/test_images')\n",
        "    g = [('/data', [], ['a.png', 'b.png'])]\n",
    );
    assert!(lines_of(&run(&built), "EA602").is_empty());
}

/// DICOM slices converted to text files, one per scan.
const DICOM: &str = "import numpy
import os
import pydicom

input_path = '/data/dicom'
output_path = '/data/csv'
files = os.listdir(input_path)
files.sort()

for file in files:
    ds = pydicom.dcmread('{}/{}'.format(input_path, os.fsdecode(file)))
    image = ds.RescaleSlope * ds.pixel_array + ds.RescaleIntercept
    output_filename = '{}/{}.txt'.format(output_path, os.fsdecode(file)[:-4])
    numpy.savetxt(output_filename, numpy.int16(image), fmt='%d', delimiter=',')
";

// Ex) ds = pydicom.dcmread(path) ... numpy.savetxt(out, image)
#[test]
fn a_dicom_decoded_and_written_per_file_is_data_work() {
    let out = run(DICOM);
    assert_eq!(lines_of(&out, "EA602"), vec![10]);
    // a listing printed, nothing decoded nor written: no data pipeline
    let listed = DICOM
        .replace(
            "    ds = pydicom.dcmread('{}/{}'.format(input_path, os.fsdecode(file)))\n    image = ds.RescaleSlope * ds.pixel_array + ds.RescaleIntercept\n",
            "",
        )
        .replace(
            "    numpy.savetxt(output_filename, numpy.int16(image), fmt='%d', delimiter=',')\n",
            "    print(output_filename)\n",
        );
    assert!(lines_of(&run(&listed), "EA602").is_empty());
}

/// A YOLO trainer that picks a new input size each epoch, set on the training set's
/// transform by a helper its per-epoch function calls.
const RESIZED: &str = "import numpy as np
import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
train_dataset = VOCDataset('/data/voc', 'trainval')
train_loader = DataLoader(train_dataset, batch_size=16, shuffle=True, num_workers=4, pin_memory=True)
net = DarkNet53(train_dataset.num_class).to(device)
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)


def reset_input_size():
    size = np.random.randint(10, 20) * 32
    train_dataset.reset_resize_shape((size, size))


def train(epoch):
    net.train()
    reset_input_size()
    for batch_idx, (img, target) in enumerate(train_loader):
        loss = net(img.to(device, non_blocking=True), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


for epoch in range(800):
    train(epoch)
";

// Ex) def reset_input_size(): train_dataset.reset_resize_shape(size)  (called by train(epoch))
#[test]
fn a_dataset_changed_by_a_helper_each_epoch_keeps_its_workers_restarting() {
    assert!(lines_of(&run(RESIZED), "EA103").is_empty());
    // a helper nothing runs per epoch changes nothing the workers serve
    let once = RESIZED
        .replace(
            "    reset_input_size()\n    for batch_idx",
            "    for batch_idx",
        )
        .replace(
            "for epoch in range(800):",
            "reset_input_size()\nfor epoch in range(800):",
        );
    assert_eq!(lines_of(&run(&once), "EA103"), vec![7]);
}

/// A caption decoder trained in fp32 on the text features of a frozen CLIP, which OpenAI's
/// `clip.load` loads in fp16 on CUDA.
const FROZEN_CLIP: &str = "import clip
import torch
from torch.utils.data import DataLoader
from transformers import GPT2LMHeadModel

device = torch.device('cuda')
decoder = GPT2LMHeadModel.from_pretrained('gpt2').to(device)
clip_model, preprocess = clip.load('ViT-B/32', device=device, jit=False)
clip_model.eval()
optimizer = torch.optim.AdamW(decoder.parameters(), lr=1e-5)
loader = DataLoader(captions, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
torch.backends.cudnn.benchmark = True
decoder = torch.compile(decoder)

for epoch in range(10):
    for tokens, tokens_77 in loader:
        tokens, tokens_77 = tokens.to(device, non_blocking=True), tokens_77.to(device, non_blocking=True)
        with torch.no_grad():
            feature = clip_model.encode_text(tokens_77)
        loss = decoder(input_ids=tokens, labels=tokens).loss + feature.float().mean() * 0
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) with torch.no_grad(): feature = clip_model.encode_text(tokens_77)  (the decoder trains)
#[test]
fn a_frozen_fp16_clip_leaves_the_model_it_feeds_in_fp32() {
    let out = run(FROZEN_CLIP);
    assert_eq!(lines_of(&out, "EA201"), vec![16]);
    assert_eq!(lines_of(&out, "EA202"), vec![7]);
    // CLIP fine-tuned itself: its fp16 weights are the training's precision
    let tuned = FROZEN_CLIP.replace(
        "        with torch.no_grad():\n            feature = clip_model.encode_text(tokens_77)\n",
        "        feature = clip_model.encode_text(tokens_77)\n",
    );
    let out = run(&tuned);
    assert!(lines_of(&out, "EA201").is_empty());
    assert!(lines_of(&out, "EA202").is_empty());
}

/// An LSTM tagger whose GPUs are listed on the command line, through a group of yaap's
/// options: `--gpu` appends ids and is None until given.
const APPENDED_GPUS: &str = "import torch
import yaap

parser = yaap.ArgParser(allow_config=True)
group = parser.add_group('Basic Options')
group.add('--gpu', type=int, action='append', help='gpu ids; none given runs on the cpu')
args = parser.parse_args()

model = torch.nn.LSTM(300, 300, 2)
if args.gpu:
    model = model.cuda(args.gpu[0])
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for x, y in loader:
        if args.gpu:
            x = x.cuda(args.gpu[0])
        loss = model(x)[0].sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())
";

// Ex) group.add('--gpu', type=int, action='append')  ...  if args.gpu: model = model.cuda(...)
#[test]
fn an_appended_option_without_a_default_is_unset() {
    let out = run(APPENDED_GPUS);
    for rule in ["EA201", "EA203", "EA301"] {
        assert!(lines_of(&out, rule).is_empty(), "{rule}");
    }
    // with a default list of ids, the GPU runs as shipped
    let listed = APPENDED_GPUS.replace("action='append',", "action='append', default=[0],");
    let out = run(&listed);
    assert_eq!(lines_of(&out, "EA201"), vec![14]);
    assert_eq!(lines_of(&out, "EA301"), vec![21]);
}

/// A BiLSTM-CRF tagger sized by its word vocabulary, its device and sizes from a config module.
const VOCAB_SIZED: &str = "import torch
from torch.utils.data import DataLoader
from models.BiLSTM_CRF import BiLSTM_CRF
from utils.helper import make_vocab, SentenceDataset, get_collate_fn
from config import DEVICE, EMBEDDING_DIM, HIDDEN_DIM, BATCH_SIZE

words_vocab, tags_vocab = make_vocab(train_data)
collate = get_collate_fn(words_vocab, tags_vocab)
train_loader = DataLoader(SentenceDataset(train_data, words_vocab, tags_vocab), batch_size=BATCH_SIZE, shuffle=True, num_workers=2, persistent_workers=True, collate_fn=collate)
model = BiLSTM_CRF(len(words_vocab), tags_vocab, EMBEDDING_DIM, HIDDEN_DIM).to(DEVICE)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(10):
    for sentences, tags, lengths in train_loader:
        sentences, tags = sentences.to(DEVICE), tags.to(DEVICE)
        loss = model.neg_log_likelihood(sentences, tags, lengths)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = BiLSTM_CRF(len(words_vocab), tags_vocab, EMBEDDING_DIM, HIDDEN_DIM)
#[test]
fn a_model_sized_by_a_vocabulary_is_fed_token_ids() {
    assert!(lines_of(&run(VOCAB_SIZED), "EA102").is_empty());
    // sized by a number of classes, its inputs may be images
    let classes = VOCAB_SIZED.replace("len(words_vocab), tags_vocab", "len(classes), tags_vocab");
    assert_eq!(lines_of(&run(&classes), "EA102"), vec![9]);
}

/// A BiLSTM-CRF trainer slicing its batches by hand, that measures each batch's longest
/// sentence on the host before moving the batch to the GPU.
const MEASURED_FIRST: &str = "import torch

class Trainer:
    def __init__(self, train_set, batch_size, device):
        self.train_set = train_set
        self.batch_size = batch_size
        self.device = device

    def train(self, model, optimizer):
        for epoch in range(20):
            i = 0
            while i < len(self.train_set):
                batch = self.train_set[i: i + self.batch_size]
                i += self.batch_size
                word_ids, tag_ids, word_mask = batch
                sen_len = torch.max(torch.sum(word_mask, dim=1, dtype=torch.int64)).item()
                word_ids = word_ids[:, :sen_len].to(self.device)
                tag_ids = tag_ids[:, :sen_len].to(self.device)
                word_mask = word_mask[:, :sen_len].to(self.device)
                loss = model(word_ids, word_mask, tag_ids)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


trainer = Trainer(train_set, 32, torch.device('cuda'))
trainer.train(model.cuda(), optimizer)
";

// Ex) sen_len = torch.max(torch.sum(word_mask, dim=1, dtype=torch.int64)).item()  (moved after)
#[test]
fn a_batch_read_before_it_is_moved_waits_for_nothing() {
    assert!(lines_of(&run(MEASURED_FIRST), "EA301").is_empty());
    // moved first, the read waits for the GPU
    let moved = MEASURED_FIRST.replace(
        "                word_ids, tag_ids, word_mask = batch\n",
        "                word_ids, tag_ids, word_mask = batch\n                word_mask = word_mask.to(self.device)\n",
    );
    assert_eq!(lines_of(&run(&moved), "EA301"), vec![17]);
}

/// An interactive check of a fine-tuned ResNet: one test image wrapped in a loader of its own.
const ONE_IMAGE_LOADER: &str = "import torch
from torch.utils.data import DataLoader
from torchvision import models

device = torch.device('cuda')
model = models.resnet34(weights='DEFAULT').to(device)
model.eval()


def predict(image):
    dl = DataLoader(torch.unsqueeze(image, 0), batch_size=16)
    with torch.no_grad():
        for data in dl:
            y = model(data.to(device))
    return y


for n in range(100):
    predict(test_images[n])
";

// Ex) dl = DataLoader(torch.unsqueeze(image, 0), batch_size=16)
#[test]
fn a_loader_over_a_tensor_needs_no_workers() {
    assert!(lines_of(&run(ONE_IMAGE_LOADER), "EA101").is_empty());
    // over a dataset of files, it does
    let files = ONE_IMAGE_LOADER.replace("torch.unsqueeze(image, 0)", "ImageFolder(image)");
    assert_eq!(lines_of(&run(&files), "EA101"), vec![11]);
}

/// A GPT-2 reward model that scores one answer, its inputs moved to wherever the model is.
const FOLLOWS_THE_MODEL: &str = "import torch
from transformers import AutoTokenizer, AutoModelForCausalLM


class RewardModel(torch.nn.Module):
    def __init__(self, name='gpt2'):
        super().__init__()
        self.model = AutoModelForCausalLM.from_pretrained(name)
        self.tokenizer = AutoTokenizer.from_pretrained(name)
        self.linear = torch.nn.Linear(self.model.config.n_embd, 1)

    def score(self, prompt):
        inputs = self.tokenizer(prompt, return_tensors='pt').to(self.model.device)
        with torch.no_grad():
            hidden = self.model(**inputs, output_hidden_states=True).hidden_states[-1]
        return self.linear(hidden[:, -1, :]).item()


if __name__ == '__main__':
    rm = RewardModel()
    score = rm.score('What is RLHF?')
    print(score)
";

// Ex) inputs = tokenizer(prompt, return_tensors='pt').to(self.model.device)
#[test]
fn a_move_to_a_models_own_device_places_nothing() {
    assert!(lines_of(&run(FOLLOWS_THE_MODEL), "EA202").is_empty());
    // to a device the file is handed, it runs on the GPU
    let handed = FOLLOWS_THE_MODEL
        .replace(".to(self.model.device)", ".to(config.device)")
        .replace("import torch\n", "import torch\nimport config\n");
    assert_eq!(lines_of(&run(&handed), "EA202"), vec![21]);
}

/// An ECG classifier whose test pass is a method of a plain class, its call commented out.
const COMMENTED_TEST: &str = "import torch
from torch.utils.data import DataLoader


class Model():
    def train(self):
        self.net = Classifier().cuda()
        loader = DataLoader(train_set, 64, True, num_workers=4, pin_memory=True, persistent_workers=True)
        optimizer = torch.optim.Adam(self.net.parameters())
        torch.backends.cuda.matmul.allow_tf32 = True
        for epoch in range(50):
            with torch.autocast('cuda', dtype=torch.bfloat16):
                for x, y in loader:
                    loss = torch.nn.functional.cross_entropy(self.net(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()

    def test(self):
        loader = DataLoader(test_set, 300, False)
        predicted = []
        with torch.no_grad():
            for x, y in loader:
                predicted.extend(list(self.net(x.cuda()).argmax(1).cpu().numpy()))
        print(predicted)


if __name__ == '__main__':
    a = Model()
    a.train()
    # a.test()
";

// Ex) # a.test()  (the only call of a plain class's method, commented out)
#[test]
fn a_plain_class_method_nothing_calls_does_not_run() {
    let out = run(COMMENTED_TEST);
    assert!(lines_of(&out, "EA101").is_empty());
    assert!(lines_of(&out, "EA301").is_empty());
    // called, it runs
    let called = COMMENTED_TEST.replace("    # a.test()\n", "    a.test()\n");
    let out = run(&called);
    assert_eq!(lines_of(&out, "EA101"), vec![20]);
    assert_eq!(lines_of(&out, "EA301"), vec![24]);
    // a module's method may be a framework's hook: kept
    let hooked = COMMENTED_TEST.replace("class Model():", "class Model(pl.LightningModule):");
    assert_eq!(lines_of(&run(&hooked), "EA101"), vec![20]);
}

/// A CycleGAN step that adds noise to each real image on the host before moving it.
const NOISY_BATCH: &str = "import torch

device = torch.device('cuda')
for epoch in range(200):
    for i, batch in enumerate(dataloader):
        real_A = torch.Tensor(batch['A'] + torch.randn(batch['A'].size())).to(device)
        fake_B = G_AB(real_A)
        loss = criterion(D_B(fake_B), valid)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) real_A = torch.Tensor(batch['A'] + torch.randn(batch['A'].size())).to(device)
#[test]
fn host_data_combined_then_wrapped_is_the_datas_own_copy() {
    assert!(lines_of(&run(NOISY_BATCH), "EA304").is_empty());
    // a constant built each step is reported
    let constant = NOISY_BATCH.replace(
        "torch.Tensor(batch['A'] + torch.randn(batch['A'].size()))",
        "torch.Tensor(3, 256, 256)",
    );
    assert_eq!(lines_of(&run(&constant), "EA304"), vec![6]);
}

/// The PyTorch CIFAR example's loader options, pinned by an integer on CUDA.
const PINNED_BY_ONE: &str = "import torch

device = torch.device('cuda')
kwargs = {'num_workers': 1, 'pin_memory': 1, 'persistent_workers': True}
train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True, **kwargs)
model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(10):
    for data, target in train_loader:
        data, target = data.to(device), target.to(device)
        loss = torch.nn.functional.nll_loss(model(data), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) kwargs = {'num_workers': 1, 'pin_memory': 1}
#[test]
fn a_switch_given_as_one_is_on() {
    let out = run(PINNED_BY_ONE);
    assert_eq!(lines_of(&out, "EA303"), vec![10]);
    assert!(lines_of(&out, "EA102").is_empty());
    // as 0, it is off
    let off = PINNED_BY_ONE.replace("'pin_memory': 1", "'pin_memory': 0");
    let out = run(&off);
    assert!(lines_of(&out, "EA303").is_empty());
}
