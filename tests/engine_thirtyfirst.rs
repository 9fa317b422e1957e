//! The thirty-first accuracy round: shapes from the blind waves of the thirty-first session
//! (g829 onward) that the engine read wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A character-level poetry model trained from token ids another module prepared; the model is
/// sized by the word index.
const WORD_INDEX: &str = "import torch as t
from torch import nn
from data import get_data
from model import PoetryModel

def train():
    data, word2ix, ix2word = get_data()
    data = t.from_numpy(data)
    dataloader = t.utils.data.DataLoader(data, batch_size=128, shuffle=True, num_workers=1)
    model = PoetryModel(len(word2ix), 128, 256)
    optimizer = t.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    model.cuda()
    for epoch in range(20):
        for ii, data_ in enumerate(dataloader):
            data_ = data_.long().transpose(1, 0).contiguous().cuda()
            optimizer.zero_grad()
            output, _ = model(data_[:-1, :])
            loss = criterion(output, data_[1:, :].view(-1))
            loss.backward()
            optimizer.step()

if __name__ == '__main__':
    train()
";

// Ex) model = PoetryModel(len(word2ix), 128, 256): a loader of word ids needs no pinning
#[test]
fn a_model_sized_by_a_word_index_is_fed_token_ids() {
    assert!(lines_of(&run(WORD_INDEX), "EA102").is_empty());
    // a class index counts labels: the batches may be anything
    let classes = WORD_INDEX.replace("len(word2ix)", "len(class_to_idx)");
    assert_eq!(lines_of(&run(&classes), "EA102"), vec![9]);
}

/// The PyTorch tutorial's seq2seq model, trained and then evaluated greedily: the token is read
/// back to stop at the end of the sentence and to look up its word.
const GREEDY_DECODE: &str = "import torch
device = torch.device('cuda')

def train_iters(encoder, decoder, pairs):
    encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.01)
    decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.01)
    for input_tensor, target_tensor in pairs:
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        loss = criterion(decoder(encoder(input_tensor)), target_tensor)
        loss.backward()
        encoder_optimizer.step()
        decoder_optimizer.step()

def evaluate(encoder, decoder, sentence, max_length=50):
    with torch.no_grad():
        encoder_outputs = encoder(sentence)
        decoder_input = torch.tensor([[0]], device=device)
        decoder_hidden = None
        decoded_words = []
        for di in range(max_length):
            decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden, encoder_outputs)
            topv, topi = decoder_output.data.topk(1)
            if topi.item() == EOS_token:
                decoded_words.append('<EOS>')
                break
            else:
                decoded_words.append(output_lang.index2word[topi.item()])
            decoder_input = topi.squeeze().detach()
        return decoded_words

encoder = EncoderRNN(100, 256).to(device)
decoder = AttnDecoderRNN(256, 100).to(device)
for pair in pairs:
    print(evaluate(encoder, decoder, pair[0]))
";

// Ex) topv, topi = out.topk(1); if topi.item() == EOS_token: break; ...; decoder_input = topi.squeeze()
#[test]
fn a_greedy_decodes_token_read_for_its_stop_test_and_its_word_is_the_decode() {
    assert!(
        lines_of(&run(GREEDY_DECODE), "EA301").is_empty(),
        "{:?}",
        lines_of(&run(GREEDY_DECODE), "EA301")
    );
    // a read of the output that does not become the next input is still a wait per step
    let not_fed =
        GREEDY_DECODE.replace("            decoder_input = topi.squeeze().detach()\n", "");
    assert_eq!(lines_of(&run(&not_fed), "EA301"), vec![24, 28]);
}

/// A ResNet-50 distilled into a pruned student: the paths of the data and checkpoints lie in a
/// folder named for a vision transformer project.
const PATH_FOLDERS: &str = "import torch
import torch.nn as nn
import torch.optim as optim
from torchvision import models

DERMA_PATH = '/home/u/Pruning/dinov2/Pruning/datasets/dermamnist_224.npz'
DEVICE = torch.device('cuda')

model = models.resnet50(weights=None)
model.fc = nn.Linear(model.fc.in_features, 7)
model = model.to(DEVICE)
optimizer = optim.Adam(model.parameters(), lr=1e-4)
data = load(DERMA_PATH)
for epoch in range(5):
    for imgs, labels in loader:
        imgs, labels = imgs.to(DEVICE), labels.to(DEVICE)
        loss = nn.functional.cross_entropy(model(imgs), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) DERMA_PATH = '/home/u/Pruning/dinov2/Pruning/datasets/dermamnist_224.npz'
#[test]
fn the_folders_of_a_path_name_no_transformer() {
    assert!(lines_of(&run(PATH_FOLDERS), "EA202").is_empty());
    // the file's own name still does: a checkpoint of a vision transformer
    let checkpoint = PATH_FOLDERS.replace("dermamnist_224.npz", "dinov2_vits14.pth");
    assert_eq!(lines_of(&run(&checkpoint), "EA202"), vec![11]);
    // and so does a hub id, one owner and one model
    let hub = PATH_FOLDERS.replace(
        "'/home/u/Pruning/dinov2/Pruning/datasets/dermamnist_224.npz'",
        "'facebook/dinov2-base'",
    );
    assert_eq!(lines_of(&run(&hub), "EA202"), vec![11]);
}

/// A lottery-ticket run on the CPU: a helper class the script never uses keeps a mask beside
/// its weight, wherever the weight is.
const FOLLOWS_TENSOR: &str = "import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

class WeightDrop(torch.nn.Module):
    def _setweights(self):
        for name_w in self.weights:
            raw_w = getattr(self.module, name_w + '_raw')
            mask = torch.ones(raw_w.size(0), 1)
            if raw_w.is_cuda: mask = mask.cuda()
            setattr(self.module, name_w, raw_w * mask)

class Lenet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 300)
        self.fc2 = nn.Linear(300, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))

model = Lenet()
optimizer = torch.optim.Adam(model.parameters())
loader = DataLoader(train_dataset, batch_size=60, shuffle=True, num_workers=2)
for epoch in range(10):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        print(loss.item())
";

// Ex) if raw_w.is_cuda: mask = mask.cuda()
#[test]
fn a_move_that_follows_a_tensor_already_on_the_gpu_puts_no_work_there() {
    let a = run(FOLLOWS_TENSOR);
    assert!(
        lines_of(&a, "EA102").is_empty(),
        "{:?}",
        lines_of(&a, "EA102")
    );
    assert!(
        lines_of(&a, "EA301").is_empty(),
        "{:?}",
        lines_of(&a, "EA301")
    );
    // a move of its own does
    let moved = FOLLOWS_TENSOR.replace("model = Lenet()\n", "model = Lenet().cuda()\n");
    assert_eq!(lines_of(&run(&moved), "EA102"), vec![25]);
}

/// A video model fetched from torch hub and given a new head inside a training class.
const HUB_HEAD: &str = "import json
import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data as tdata


class Trainer:
    def __init__(self, config_file, device):
        with open(config_file) as f:
            configs = json.load(f)
        self.device = int(device)
        model_id = configs['model-id']
        self.model = torch.hub.load('moabitcoin/ig65m-pytorch', model_id, num_classes=400, pretrained=True)
        self.model.fc = nn.Linear(self.model.fc.in_features, out_features=48)
        self.model = self.model.cuda(self.device)
        self.loss_fn = nn.CrossEntropyLoss().cuda(self.device)
        self.optimizer = optim.Adam(self.model.parameters(), lr=1e-3)

    def train(self, dataset):
        for epoch in range(50):
            self.train_step(dataset)

    def train_step(self, dataset):
        dataloader = tdata.DataLoader(dataset, shuffle=True, batch_size=8, pin_memory=True, num_workers=4)
        self.model.train()
        for clips, labels in dataloader:
            clips = clips.cuda(self.device, non_blocking=True)
            labels = labels.cuda(self.device, non_blocking=True)
            self.optimizer.zero_grad()
            loss = self.loss_fn(self.model(clips), labels)
            loss.backward()
            self.optimizer.step()


def main():
    trainer = Trainer('configs/r2plus1d.json', 0)
    trainer.train(load_dataset())


if __name__ == '__main__':
    main()
";

// Ex) self.model = torch.hub.load(...); self.model.fc = nn.Linear(self.model.fc.in_features, out_features=48)
#[test]
fn a_new_head_on_a_model_the_class_holds_says_nothing_of_its_layers() {
    assert!(lines_of(&run(HUB_HEAD), "EA202").is_empty());
    // a Linear layer of the class itself is no head given to the hub model
    let own = HUB_HEAD.replace("self.model.fc = nn.Linear", "self.fc = nn.Linear");
    assert_eq!(lines_of(&run(&own), "EA202"), vec![16]);
}

/// A Lightning detector that draws its predictions every N steps through a helper that renders
/// a figure and re-reads it as an image.
const EVERY_N_HELPER: &str = "import io
import torch
import pytorch_lightning as pl
from PIL import Image
from torchvision import transforms

class Detector(pl.LightningModule):
    def __init__(self, model, every):
        super().__init__()
        self.model = model
        self.every = every

    def training_step(self, batch, batch_idx):
        images, targets = batch
        outputs = self.model(images, targets)
        if (self.global_step + 1) % self.every == 0:
            self.visualize(images, batch_idx)
        return outputs.loss

    def visualize(self, images, batch_idx):
        fig = draw(images[0])
        buf = io.BytesIO()
        fig.savefig(buf, format='png')
        buf.seek(0)
        img = transforms.ToTensor()(Image.open(buf))
        self.logger.experiment.add_image('pred', img)

trainer = pl.Trainer(accelerator='gpu', max_epochs=10)
trainer.fit(Detector(build(), 100), loader)
";

// Ex) if (self.global_step + 1) % self.every == 0: self.visualize(images, batch_idx)
#[test]
fn a_helper_called_every_n_steps_from_a_lightning_step_is_not_per_step() {
    assert!(lines_of(&run(EVERY_N_HELPER), "EA502").is_empty());
    // called every step, its decode is
    let every = EVERY_N_HELPER.replace(
        "        if (self.global_step + 1) % self.every == 0:\n            self.visualize(images, batch_idx)\n",
        "        self.visualize(images, batch_idx)\n",
    );
    assert_eq!(lines_of(&run(&every), "EA502"), vec![24]);
}

/// A test pass over the first few rows of a CSV of image paths, on a model moved to the CPU.
const NAMED_CAP: &str = "import csv
import torch
from PIL import Image
from model import Model

if __name__ == '__main__':
    test_images_num = 10
    model = Model().to('cuda')
    model.eval()
    with open('images.csv') as f:
        reader = csv.reader(f)
        for i, row in enumerate(reader):
            if i == test_images_num: break
            image = transform(Image.open(row[0]))
            with torch.no_grad():
                logits = model(image.unsqueeze(0).to('cuda'))
            print(f'probs - {logits.softmax(1)}')
";

// Ex) test_images_num = 10 ... if i == test_images_num: break
#[test]
fn a_loop_broken_off_at_a_named_small_count_runs_a_few_times() {
    let a = run(NAMED_CAP);
    assert!(
        lines_of(&a, "EA502").is_empty(),
        "{:?}",
        lines_of(&a, "EA502")
    );
    assert!(
        lines_of(&a, "EA504").is_empty(),
        "{:?}",
        lines_of(&a, "EA504")
    );
    // a large count is a real loop over the file
    let many = NAMED_CAP.replace("test_images_num = 10", "test_images_num = 5000");
    assert_eq!(lines_of(&run(&many), "EA502"), vec![14]);
}

/// An ECG autoencoder trained on the GPU: the model class lives in another module, but its name
/// says it is convolutional.
const CONV_AUTOENCODER: &str = "import torch
from models import ConvAutoencoder

device = torch.device('cuda')
model = ConvAutoencoder(latent_dim=32).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(100):
    for x in loader:
        x = x.to(device)
        loss = ((model(x) - x) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = ConvAutoencoder(latent_dim=32).to(device)
#[test]
fn a_convolutional_autoencoder_by_name_is_convolutional() {
    assert_eq!(lines_of(&run(CONV_AUTOENCODER), "EA204"), vec![5]);
    // an autoencoder of unknown layers may be either
    let plain = CONV_AUTOENCODER.replace("ConvAutoencoder", "Autoencoder");
    assert!(lines_of(&run(&plain), "EA204").is_empty());
}

/// A self-attentive sequential recommender trained on the GPU.
const SASREC: &str = "import torch
from model import SASRec

model = SASRec(usernum, itemnum, args).to('cuda')
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(200):
    for u, seq, pos, neg in sampler:
        pos_logits, neg_logits = model(u, seq, pos, neg)
        loss = bce(pos_logits, neg_logits)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = SASRec(usernum, itemnum, args).to(args.device)
#[test]
fn sasrec_is_a_transformer() {
    assert_eq!(lines_of(&run(SASREC), "EA202"), vec![4]);
    let other = SASREC.replace("SASRec", "GRU4Rec");
    assert!(lines_of(&run(&other), "EA202").is_empty());
}

/// The CIFAR-10 tutorial as a homework copy: it prints the device it would use, but the lines
/// that move the network and the batches there are commented out.
const COMMENTED_MOVES: &str = "import torch
import torch.nn as nn
import torch.optim as optim
import torchvision

net = torchvision.models.resnet18(num_classes=10)
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
for epoch in range(2):
    for i, data in enumerate(trainloader, 0):
        inputs, labels = data
        optimizer.zero_grad()
        loss = criterion(net(inputs), labels)
        loss.backward()
        optimizer.step()
        print(loss.item())

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
print(device)
# The rest of this section assumes that `device` is a CUDA device:
#     net.to(device)
#         inputs, labels = inputs.to(device), labels.to(device)
";

// Ex) device = torch.device("cuda:0" ...); print(device); #     net.to(device)
#[test]
fn a_device_read_only_in_comments_places_nothing() {
    let a = run(COMMENTED_MOVES);
    assert!(
        lines_of(&a, "EA301").is_empty(),
        "{:?}",
        lines_of(&a, "EA301")
    );
    assert!(
        lines_of(&a, "EA203").is_empty(),
        "{:?}",
        lines_of(&a, "EA203")
    );
    // uncommented, the move puts the work on the GPU
    let moved = COMMENTED_MOVES.replace("#     net.to(device)", "net.to(device)");
    assert_eq!(lines_of(&run(&moved), "EA301"), vec![16]);
}

/// Cross-validated stacking: each fold fits a Lightning model, predicts its validation part
/// with a helper handed the loader, then frees the cached GPU memory.
const FOLD_PASS: &str = "import torch
import pytorch_lightning as pl
from utils import inference_one_epoch
from model import LitModel

device = 'cuda' if torch.cuda.is_available() else 'cpu'
for j, (train_idx, valid_idx) in enumerate(skf.split(x, y)):
    dm = DataModule(x[train_idx], x[valid_idx])
    trainer = pl.Trainer(max_epochs=20, accelerator='gpu')
    pl_model = LitModel(cfg)
    trainer.fit(pl_model, dm)
    pl_model = pl_model.to(device)
    preds = inference_one_epoch(pl_model, dm.val_dataloader(), device)
    del pl_model
    torch.cuda.empty_cache()
";

// Ex) preds = inference_one_epoch(pl_model, dm.val_dataloader(), device); torch.cuda.empty_cache()
#[test]
fn a_helper_handed_a_loader_runs_a_whole_pass_not_a_step() {
    assert!(lines_of(&run(FOLD_PASS), "EA302").is_empty());
    // a helper handed one input per iteration is a step
    let per_item = FOLD_PASS.replace(
        "    preds = inference_one_epoch(pl_model, dm.val_dataloader(), device)\n",
        "    x_valid = x[valid_idx]\n    preds = inference_one_epoch(pl_model, x_valid, device)\n",
    );
    assert_eq!(lines_of(&run(&per_item), "EA302"), vec![16]);
}

/// A language model trained until its loss falls under a threshold, the loss read each step for
/// the test and for the progress bar.
const LOSS_STOP: &str = "import torch
model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for data, target in loader:
        data, target = data.cuda(), target.cuda()
        optimizer.zero_grad()
        loss = criterion(model(data), target)
        loss.backward()
        optimizer.step()
        if float(loss.item()) < 0.06:
            break
        tepoch.set_postfix(loss=loss.item())
";

// Ex) if float(loss.item()) < 0.06: break  (no decode: `float(...)` is not the model's input)
#[test]
fn an_early_stop_on_the_loss_is_no_decode_stop_test() {
    assert_eq!(lines_of(&run(LOSS_STOP), "EA301"), vec![11, 13]);
}

/// A house-price regressor whose per-epoch report sits in the `else` of its step loop.
const FOR_ELSE: &str = "import torch
from torch.utils.data import DataLoader
from model import HousePriceModel

model = HousePriceModel(12)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(300):
    train_loss = 0
    for i, (x, y) in enumerate(train_loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
    else:
        print('Epoch: {} Training Loss: {:.3f}'.format(epoch + 1, train_loss))
";

// Ex) for i, data in enumerate(train_loader): ... else: print(...)  (once, after the loop)
#[test]
fn the_else_of_a_step_loop_runs_once_per_epoch() {
    assert!(lines_of(&run(FOR_ELSE), "EA504").is_empty());
    let in_body = FOR_ELSE.replace("    else:\n        print(", "        print(");
    assert_eq!(lines_of(&run(&in_body), "EA504"), vec![15]);
}

/// Speaker embeddings of a corpus, each written to an HDF5 file as it is computed.
const HDF5_SINK: &str = "import h5py
import torch
from torch.utils.data import DataLoader

device = torch.device('cuda')
speaker_model = load_model().to(device)
loader = DataLoader(dataset, batch_size=None, num_workers=4, pin_memory=True)
with h5py.File('embeddings.h5', 'w') as f_dataset, torch.no_grad():
    for batch in loader:
        audio = batch['audio'].to(device, non_blocking=True)
        emb = speaker_model(audio)
        for i, id in enumerate(batch['ids']):
            f_dataset.create_dataset(id, data=emb[i].cpu().numpy())
";

// Ex) f_dataset.create_dataset(id, data=emb[i].cpu().numpy())
#[test]
fn an_output_written_to_an_hdf5_dataset_is_the_loops_product() {
    assert!(lines_of(&run(HDF5_SINK), "EA301").is_empty());
    let kept = HDF5_SINK.replace(
        "            f_dataset.create_dataset(id, data=emb[i].cpu().numpy())",
        "            results[id] = emb[i].cpu().numpy()",
    );
    assert_eq!(lines_of(&run(&kept), "EA301"), vec![13]);
}

/// A summarizer trained on word ids a function of the file prepared in a list, batched by a
/// collate that only pads.
const PREPARED_IDS: &str = "import torch
from model_utils import Encoder, Decoder, Seq2Seq

def preprocess_data(dataset, vocab):
    processed_data = []
    for item in dataset:
        processed_data.append(torch.tensor([vocab[t] for t in item.split()]))
    return processed_data

def collate_fn(batch):
    return torch.nn.utils.rnn.pad_sequence(batch, padding_value=0)

train_data = preprocess_data(raw_dataset, diag_vocab)
train_loader = torch.utils.data.DataLoader(train_data, batch_size=16, shuffle=True, collate_fn=collate_fn)
INPUT_DIM = len(diag_vocab)
model = Seq2Seq(Encoder(INPUT_DIM, 256), Decoder(INPUT_DIM, 256)).to('cuda')
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for src in train_loader:
        src = src.to('cuda')
        loss = model(src)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) train_data = preprocess_data(...) (a list); DataLoader(train_data, collate_fn=pad_collate); INPUT_DIM = len(diag_vocab)
#[test]
fn a_prepared_list_of_word_ids_needs_neither_workers_nor_pinning() {
    let a = run(PREPARED_IDS);
    assert!(
        lines_of(&a, "EA101").is_empty(),
        "{:?}",
        lines_of(&a, "EA101")
    );
    assert!(
        lines_of(&a, "EA102").is_empty(),
        "{:?}",
        lines_of(&a, "EA102")
    );
    // a model sized by a class count feeds batches the file does not show: the list in
    // memory needs no workers, but its batches may be large
    let classes = PREPARED_IDS.replace("len(diag_vocab)", "len(class_names)");
    let a = run(&classes);
    assert!(
        lines_of(&a, "EA101").is_empty(),
        "{:?}",
        lines_of(&a, "EA101")
    );
    assert_eq!(lines_of(&a, "EA102"), vec![14]);
    // and a dataset of the repository, which may read files per item, is no list in memory
    let files = classes.replace(
        "train_data = preprocess_data(raw_dataset, diag_vocab)",
        "train_data = TextFiles(paths)",
    );
    assert_eq!(lines_of(&run(&files), "EA101"), vec![14]);
}

/// A course assignment's MLP, a class of the student's own module, trained on CIFAR-10.
const PROJECT_MLP: &str = "import torch
import torch.nn.functional as F
from mlp_pytorch import MLP

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
net = MLP(3072, [100], 10).to(device)
optimizer = torch.optim.SGD(net.parameters(), lr=2e-3)
for step in range(1500):
    x, y = next_batch()
    loss = F.cross_entropy(net(x.to(device)), y.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
";

// Ex) from mlp_pytorch import MLP ... net = MLP(n_inputs, dnn_hidden_units, n_classes).to(device)
#[test]
fn a_projects_own_mlp_of_another_module_shows_no_layers() {
    assert!(lines_of(&run(PROJECT_MLP), "EA202").is_empty());
    // torchvision's MLP is Linear layers
    let library = PROJECT_MLP.replace(
        "from mlp_pytorch import MLP",
        "from torchvision.ops import MLP",
    );
    assert_eq!(lines_of(&run(&library), "EA202"), vec![6]);
}

/// The transfer-learning tutorial's phase loop over a dict of two loaders of eight images.
const PHASE_DICT: &str = "import torch
import torchvision
from torch.utils.data import DataLoader

device = torch.device('cuda')
dataloaders = {
    'train': DataLoader(train_set, batch_size=8, shuffle=True, num_workers=4, pin_memory=True),
    'val': DataLoader(val_set, batch_size=8, shuffle=False, num_workers=4, pin_memory=True),
}
model = torchvision.models.resnet18(weights='DEFAULT').to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
for epoch in range(25):
    for phase in ['train', 'val']:
        model.train() if phase == 'train' else model.eval()
        for inputs, labels in dataloaders[phase]:
            inputs, labels = inputs.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            with torch.set_grad_enabled(phase == 'train'):
                loss = criterion(model(inputs), labels)
                if phase == 'train':
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
";

// Ex) dataloaders = {'train': DataLoader(..., batch_size=8), 'val': DataLoader(..., batch_size=8)}
#[test]
fn the_validation_entry_of_a_dict_of_loaders_is_no_training_loader() {
    assert_eq!(lines_of(&run(PHASE_DICT), "EA702"), vec![7]);
}

/// Image embeddings of a folder, stored in SQLite batch by batch.
const SQL_SINK: &str = "import sqlite3
import torch

model = load_clip().to('cuda')
conn = sqlite3.connect('hashes.db')
cursor = conn.cursor()
with torch.no_grad():
    for image_batch, paths in data_loader:
        image_batch = image_batch.to('cuda', non_blocking=True)
        features = model.encode_image(image_batch)
        cpu_features = features.cpu().numpy()
        db_entries = [(path, vec.tobytes()) for path, vec in zip(paths, cpu_features)]
        cursor.executemany('INSERT OR REPLACE INTO images (path, hash) VALUES (?, ?)', db_entries)
        conn.commit()
";

// Ex) cpu_features = features.cpu().numpy(); ...; cursor.executemany("INSERT ...", db_entries)
#[test]
fn rows_written_to_a_database_are_the_loops_product() {
    assert!(lines_of(&run(SQL_SINK), "EA301").is_empty());
    let kept = SQL_SINK.replace(
        "        cursor.executemany('INSERT OR REPLACE INTO images (path, hash) VALUES (?, ?)', db_entries)\n",
        "        all_entries.extend(db_entries)\n",
    );
    assert_eq!(lines_of(&run(&kept), "EA301"), vec![11]);
}

/// CleanRL's TD3: two small MLPs sized by the environment, the actor keeping its action scale
/// in buffers.
const CLEANRL_BUFFERS: &str = "import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

class Actor(nn.Module):
    def __init__(self, env):
        super().__init__()
        self.fc1 = nn.Linear(np.array(env.single_observation_space.shape).prod(), 256)
        self.fc2 = nn.Linear(256, 256)
        self.fc_mu = nn.Linear(256, np.prod(env.single_action_space.shape))
        self.register_buffer('action_scale', torch.tensor((env.action_space.high - env.action_space.low) / 2.0))

    def forward(self, x):
        return torch.tanh(self.fc_mu(F.relu(self.fc2(F.relu(self.fc1(x)))))) * self.action_scale

device = torch.device('cuda')
actor = Actor(envs).to(device)
actor_optimizer = optim.Adam(list(actor.parameters()), lr=3e-4)
for global_step in range(1000000):
    actor_loss = -critic(obs, actor(obs)).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
";

// Ex) self.register_buffer('action_scale', torch.tensor(...)) in a 200k-parameter actor
#[test]
fn a_buffer_adds_no_parameters_to_a_small_policy() {
    let a = run(CLEANRL_BUFFERS);
    assert!(
        lines_of(&a, "EA202").is_empty(),
        "{:?}",
        lines_of(&a, "EA202")
    );
    assert!(
        lines_of(&a, "EA201").is_empty(),
        "{:?}",
        lines_of(&a, "EA201")
    );
    // a wide actor is no small model
    let wide = CLEANRL_BUFFERS.replace("256", "4096");
    assert_eq!(lines_of(&run(&wide), "EA202"), vec![19]);
}

/// A hand-written TD3 whose networks place themselves and build their own optimizers, sized by
/// the environment's observation width.
const SELF_PLACED: &str = "import torch
from torch import nn, optim
import torch.nn.functional as F

class Actor(nn.Module):
    def __init__(self, input_dim, n_actions):
        super(Actor, self).__init__()
        self.fc1 = nn.Linear(input_dim, 256)
        self.fc2 = nn.Linear(256, n_actions)
        self.optimizer = optim.Adam(self.parameters())
        self.cuda()

    def forward(self, state):
        return self.fc2(F.relu(self.fc1(state)))

input_dim = env.observation_space.shape[0]
actor = Actor(input_dim, env.action_space.shape[0])
for step in range(100000):
    loss = -critic(state, actor(state)).mean()
    actor.optimizer.zero_grad()
    loss.backward()
    actor.optimizer.step()
";

// Ex) self.optimizer = optim.Adam(self.parameters()); self.cuda() in __init__
#[test]
fn a_module_that_places_itself_and_builds_its_optimizer_is_still_sized() {
    assert!(lines_of(&run(SELF_PLACED), "EA202").is_empty());
    let wide = SELF_PLACED.replace("256", "8192");
    assert_eq!(lines_of(&run(&wide), "EA202"), vec![11]);
}

/// Real-time video style transfer with a trained style network.
const STYLIZE_VIDEO: &str = "import cv2
import torch
from models.video_transformer import CompoundTransformerNet

device = torch.device('cuda')
model = CompoundTransformerNet().to(device)
model.load_state_dict(torch.load('style.pth'))
cap = cv2.VideoCapture('in.mp4')
with torch.inference_mode():
    while cap.isOpened():
        ok, frame = cap.read()
        if not ok:
            break
        stylized_frame = model(to_tensor(frame).to(device), style_tensor)
        writer.write(to_image(stylized_frame.cpu()))
";

// Ex) from models.video_transformer import CompoundTransformerNet ... stylized_frame = model(...)
#[test]
fn a_style_network_that_stylizes_frames_is_convolutional() {
    assert!(lines_of(&run(STYLIZE_VIDEO), "EA202").is_empty());
    // a video transformer that does not stylize is an attention model
    let other = STYLIZE_VIDEO
        .replace("CompoundTransformerNet", "VideoTransformer")
        .replace("stylized_frame", "pred");
    assert_eq!(lines_of(&run(&other), "EA202"), vec![6]);
}

/// Depth inference over a folder, whose results are saved only when an option is given.
const DEAD_SINK: &str = "import argparse
import numpy as np
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--save_dir', default=None)
opts = parser.parse_args()
model = load_model().to('cuda').eval()
with torch.no_grad():
    for img in images:
        pred = model(img.to('cuda')).cpu().numpy()
        if opts.save_dir:
            np.save(opts.save_dir + '/pred.npy', pred)
";

// Ex) pred = model(img).cpu().numpy(); if opts.save_dir: np.save(..., pred)  (default None)
#[test]
fn a_write_that_does_not_run_as_shipped_is_no_product() {
    assert_eq!(lines_of(&run(DEAD_SINK), "EA301"), vec![11]);
    let saved = DEAD_SINK.replace("default=None", "default='out'");
    assert!(lines_of(&run(&saved), "EA301").is_empty());
}
