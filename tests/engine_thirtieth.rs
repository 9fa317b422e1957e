//! The thirtieth accuracy round: shapes from the blind wave of the thirtieth session (g813
//! onward) that the engine read wrongly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use common::{analyse as run, rule_lines as lines_of};

/// A matting model evaluated per test image: the prediction is copied to the host, and the
/// metrics are computed from the NumPy copy by the project's helpers.
const HOST_METRICS: &str = "import cv2 as cv
import torch
from utils import compute_mse, compute_sad, AverageMeter
from model import Model

device = torch.device('cuda')
model = Model().to(device)
model.eval()
mse_losses = AverageMeter()
for name in names:
    img = cv.imread(name)
    x = torch.from_numpy(img).to(device)
    with torch.no_grad():
        pred = model(x)
    pred = pred.cpu().numpy()
    pred = pred.reshape((h, w))
    mse_loss = compute_mse(pred, alpha, trimap)
    sad_loss = compute_sad(pred, alpha)
    mse_losses.update(mse_loss.item())
    print('sad:{} mse:{}'.format(sad_loss.item(), mse_loss.item()))
    cv.imwrite('out/' + name, pred)
";

// Ex) mse_loss = compute_mse(pred, alpha, trimap) with pred = pred.cpu().numpy(); mse_loss.item()
#[test]
fn a_metric_helper_handed_a_host_copy_returns_a_host_value() {
    let a = run(HOST_METRICS);
    assert!(
        lines_of(&a, "EA301").is_empty(),
        "{:?}",
        lines_of(&a, "EA301")
    );
    // the model's output itself, read without the copy, still waits for the GPU
    let device = HOST_METRICS.replace("    pred = pred.cpu().numpy()\n", "");
    assert_eq!(lines_of(&run(&device), "EA301"), vec![18, 19]);
    // nor does a helper also handed a tensor placed on the GPU
    let mixed = HOST_METRICS.replace(
        "    mse_loss = compute_mse(pred, alpha, trimap)\n",
        "    mse_loss = compute_mse(pred, alpha.cuda(), trimap)\n",
    );
    assert_eq!(lines_of(&run(&mixed), "EA301"), vec![19, 20]);
}

// Ex) pred = model(x); pred = pred.cpu().numpy(); ... print(... sad_loss.item() ...)
#[test]
fn a_print_of_values_computed_from_a_host_copy_of_the_output_is_the_report() {
    let a = run(HOST_METRICS);
    assert!(
        lines_of(&a, "EA504").is_empty(),
        "{:?}",
        lines_of(&a, "EA504")
    );
    // without the copy the line formats what the model returned on the device
    let device = HOST_METRICS.replace("    pred = pred.cpu().numpy()\n", "");
    assert_eq!(lines_of(&run(&device), "EA504"), vec![19]);
}

/// BERT fine-tuning on token ids a Keras helper padded, with a text cleaner and plot folders
/// imported from the project.
const BERT_IDS: &str = "import torch
from torch.utils.data import TensorDataset, DataLoader, RandomSampler
from transformers import BertTokenizer, BertForSequenceClassification
from keras.preprocessing.sequence import pad_sequences
from preprocessing.preprocessing import PreProcessor
from settings import DIR_IMAGES_HISTORY, DIR_RESOURCES

device = torch.device('cuda')
tokenizer = BertTokenizer.from_pretrained('bert-base-multilingual-cased')
texts = PreProcessor().read_texts(DIR_RESOURCES)
ids = pad_sequences([tokenizer.encode(t) for t in texts], maxlen=128)
data = TensorDataset(torch.tensor(ids), torch.tensor(labels))
loader = DataLoader(data, sampler=RandomSampler(data), batch_size=32)
model = BertForSequenceClassification.from_pretrained('bert-base-multilingual-cased')
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for batch in loader:
    input_ids, y = (t.to(device) for t in batch)
    loss = model(input_ids, labels=y).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
";

// Ex) from preprocessing.preprocessing import PreProcessor; from settings import DIR_IMAGES_EDA
#[test]
fn a_text_cleaner_and_plot_folders_do_not_make_token_batches_media() {
    assert!(lines_of(&run(BERT_IDS), "EA102").is_empty());
    // each alone, too
    let cleaner = BERT_IDS.replace(
        "from settings import DIR_IMAGES_HISTORY, DIR_RESOURCES\n",
        "",
    );
    assert!(lines_of(&run(&cleaner), "EA102").is_empty());
    let folders = BERT_IDS.replace("from preprocessing.preprocessing import PreProcessor\n", "");
    assert!(lines_of(&run(&folders), "EA102").is_empty());
    // an image processor is media: its batches are pixels
    let pixels = BERT_IDS.replace(
        "from preprocessing.preprocessing import PreProcessor\n",
        "from transformers import ViTImageProcessor as PreProcessor\n",
    );
    assert_eq!(lines_of(&run(&pixels), "EA102"), vec![13]);
}

/// An actor-critic rollout: the sampled action is read back, then handed to the environment.
const ROLLOUT: &str = "import gym
import torch
import torch.nn as nn
from torch.distributions import Categorical

device = torch.device('cuda')
policy = nn.Sequential(nn.Linear(4, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 2), nn.Softmax(-1)).to(device)
env = gym.make('CartPole-v1')
state, _ = env.reset()
with torch.no_grad():
    for t in range(500):
        probs = policy(torch.tensor(state).unsqueeze(0).to(device))
        action = Categorical(probs).sample().item()
        state, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
";

// Ex) action = Categorical(probs).sample().item(); state, ... = env.step(action)
#[test]
fn an_action_read_back_and_then_handed_to_the_environment_belongs_to_the_step() {
    assert!(lines_of(&run(ROLLOUT), "EA301").is_empty());
    // a value read and kept, not handed to the step, still waits every step
    let kept = ROLLOUT.replace(
        "        action = Categorical(probs).sample().item()\n",
        "        action = Categorical(probs).sample()\n        p = probs.max().item()\n",
    );
    assert_eq!(lines_of(&run(&kept), "EA301"), vec![14]);
}

/// A DDPM launcher: the device comes from a configuration module, the training from another
/// module, handed an optimizer built in its arguments.
const LAUNCHER: &str = "import torch
from torch.optim import Adam
from torch.utils.data import DataLoader
from torchvision.datasets import MNIST
from torchvision.transforms import ToTensor
from utils.myDDPM import DDPM, training_loop
from utils.unet import MyUnet
from config import config

device = config.device
print(f'Using device: {device}', torch.cuda.get_device_name(0))
dataset = MNIST('data', train=True, transform=ToTensor())
loader = DataLoader(dataset, config.batch_size, shuffle=True)
ddpm = DDPM(MyUnet(config.n_steps), n_steps=config.n_steps, device=device)
training_loop(ddpm, loader, config.n_epochs, optim=Adam(ddpm.parameters(), config.lr), device=device)
";

// Ex) print(..., torch.cuda.get_device_name(0)) at module level; training_loop(ddpm, loader, optim=Adam(...))
#[test]
fn an_unguarded_device_name_needs_cuda_and_an_inline_optimizer_delegates_training() {
    let a = run(LAUNCHER);
    assert_eq!(a.kind, efficiency_audit::analysis::model::CodeKind::Train);
    assert_eq!(lines_of(&a, "EA102"), vec![13]);
    assert_eq!(lines_of(&a, "EA203"), vec![14]);
    // asked only when a GPU is there, the name says nothing of where the work runs
    let guarded = LAUNCHER.replace(
        "print(f'Using device: {device}', torch.cuda.get_device_name(0))",
        "if torch.cuda.is_available():\n    print(torch.cuda.get_device_name(0))",
    );
    assert!(lines_of(&run(&guarded), "EA102").is_empty());
    // a scheduler built in the arguments is no optimizer
    let schedule = LAUNCHER.replace(
        "optim=Adam(ddpm.parameters(), config.lr)",
        "schedule=torch.linspace(0, 1, 10)",
    );
    assert!(lines_of(&run(&schedule), "EA203").is_empty());
}

/// A BERT classifier built by a factory of the file and handed to the repository's own trainer.
const OWN_TRAINER: &str = "import torch
from training.trainer import LlmTrainer
from transformers import AutoModelForSequenceClassification

def get_model(checkpoint, device):
    model = AutoModelForSequenceClassification.from_pretrained(checkpoint)
    model = model.to(device)
    return model

if __name__ == '__main__':
    model = get_model('bert-base-uncased', 'cuda')
    trainer = LlmTrainer(device='cuda', model=model)
    trainer.train()
";

// Ex) model = get_model(args.model, args.device, tokenizer); LlmTrainer(model=model, ...).train()
#[test]
fn a_factory_model_handed_to_the_repositorys_trainer_trains_there() {
    assert!(lines_of(&run(OWN_TRAINER), "EA202").is_empty());
    // a file that builds its own optimizer trains here, whatever it hands on
    let own = OWN_TRAINER.replace(
        "    trainer.train()\n",
        "    trainer.train()\n    optimizer = torch.optim.AdamW(model.parameters())\n    for batch in loader:\n        model(**batch).loss.backward()\n        optimizer.step()\n",
    );
    assert_eq!(lines_of(&run(&own), "EA202"), vec![7]);
}

/// A matting model of another module run per test image, with the image transform picked from
/// a table of transforms.
const TRANSFORM_TABLE: &str = "import cv2 as cv
import torch
from torchvision import transforms
from data_gen import data_transforms
from model import Model

device = torch.device('cuda')
model = Model().to(device)
model.eval()
transformer = data_transforms['valid']
for name in names:
    img = transforms.ToPILImage()(cv.imread(name))
    x = transformer(img).unsqueeze(0).to(device)
    with torch.no_grad():
        pred = model(x)
    cv.imwrite('out/' + name, pred.cpu().numpy())
";

// Ex) transformer = data_transforms['valid'] beside `from model import Model`
#[test]
fn a_transform_picked_from_a_table_names_no_transformer() {
    assert!(lines_of(&run(TRANSFORM_TABLE), "EA202").is_empty());
    // a transformer the file builds is one
    let vit = TRANSFORM_TABLE.replace(
        "transformer = data_transforms['valid']",
        "transformer = data_transforms['valid']\nencoder = nn.TransformerEncoder(layer, 6)",
    );
    assert_eq!(lines_of(&run(&vit), "EA202"), vec![8]);
}

/// A training loop and a validation loop per epoch, each switching the mode at the top of its
/// own body.
const MODE_IN_BODY: &str = "import torch
import torchvision

device = torch.device('cuda')
model = torchvision.models.resnet18(num_classes=3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
criterion = torch.nn.CrossEntropyLoss()
for epoch in range(32):
    for inputs, labels in train_loader:
        model.train()
        inputs, labels = inputs.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
    for inputs, labels in val_loader:
        model.eval()
        inputs, labels = inputs.to(device), labels.to(device)
        outputs = model(inputs)
        val_loss = criterion(outputs, labels)
";

// Ex) for inputs, labels in val_loader: model.eval(); ...; outputs = model(inputs)
#[test]
fn an_eval_at_the_top_of_the_loop_body_makes_it_an_evaluation_loop() {
    assert_eq!(lines_of(&run(MODE_IN_BODY), "EA401"), vec![16]);
    // evaluation mode switched on only under a test does not decide it
    let maybe = MODE_IN_BODY.replace(
        "        model.eval()\n",
        "        if debug:\n            model.eval()\n",
    );
    assert!(lines_of(&run(&maybe), "EA401").is_empty());
}

/// An evaluation function handed a loader whose one batch is the whole test set.
const WHOLE_BATCH_PARAM: &str = "import torch
from torch.utils.data import DataLoader
from model import Net

def evaluate(model, dataloader, device):
    model.eval()
    total = 0.0
    for x, y in dataloader:
        x = x.to(device)
        y = y.to(device)
        loss = torch.nn.functional.mse_loss(model(x), y)
        total += loss.item()
    return total

device = torch.device('cuda')
model = Net().to(device)
optimizer = torch.optim.Adam(model.parameters())
train_loader = DataLoader(train_ds, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
test_loader = DataLoader(test_ds, batch_size=len(test_ds), num_workers=4, pin_memory=True)
for epoch in range(10):
    for x, y in train_loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    evaluate(model, test_loader, device)
";

// Ex) def eval(g, d, dataloader, ...): for i, (audio, mags) in enumerate(dataloader): ... with
//     test_dataloader = DataLoader(test_dataset, batch_size=len(test_dataset))
#[test]
fn a_parameter_always_handed_a_whole_dataset_loader_runs_once() {
    let a = run(WHOLE_BATCH_PARAM);
    assert!(lines_of(&a, "EA301").is_empty());
    assert!(lines_of(&a, "EA303").is_empty());
    // one call handing a loader of real batches makes the loop a loop of steps
    let batches = WHOLE_BATCH_PARAM.replace(
        "    evaluate(model, test_loader, device)\n",
        "    evaluate(model, test_loader, device)\n    evaluate(model, train_loader, device)\n",
    );
    let b = run(&batches);
    assert_eq!(lines_of(&b, "EA301"), vec![12]);
    assert_eq!(lines_of(&b, "EA303"), vec![9, 10]);
}

/// A Siamese network's loaders over a random split: the validation part in one batch.
const SPLIT_BATCH: &str = "import torch
from torch.utils.data import DataLoader
from model import SiameseNet

device = torch.device('cuda')
dataset = PairDataset('pairs.csv')
train_length = int(len(dataset) * 0.9)
val_length = len(dataset) - train_length
train_set, val_set = torch.utils.data.random_split(dataset, [train_length, val_length])
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
val_loader = DataLoader(val_set, batch_size=val_length, shuffle=True)
model = SiameseNet().to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(20):
    for a, b, y in train_loader:
        a, b, y = a.to(device, non_blocking=True), b.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = criterion(*model(a, b), y)
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        for a, b, y in val_loader:
            out = model(a.to(device), b.to(device))
";

// Ex) train_set, val_set = random_split(ds, [train_length, val_length]); DataLoader(val_set, batch_size=val_length)
#[test]
fn a_loader_batched_by_its_split_length_takes_the_whole_part_at_once() {
    let a = run(SPLIT_BATCH);
    assert!(lines_of(&a, "EA101").is_empty());
    assert!(lines_of(&a, "EA102").is_empty());
    // batched by the other part's length, it is a loader of many batches
    let other = SPLIT_BATCH.replace(
        "DataLoader(val_set, batch_size=val_length,",
        "DataLoader(val_set, batch_size=train_length // 100,",
    );
    assert_eq!(lines_of(&run(&other), "EA101"), vec![11]);
}

/// A triplet-loss trainer of another module, built with the optimizer, run one pass per epoch.
const OBJECT_PASSES: &str = "import torch
from torchvision import datasets, transforms
from trainer import Triplet_Trainer
import models

device = torch.device('cuda')
train_set = datasets.ImageFolder('train', transform=transforms.ToTensor())
train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, num_workers=8, pin_memory=True)
model = models.EmbeddingNet().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
trainer = Triplet_Trainer(model, loss, optimizer, device)
for epoch in range(100):
    trainer.Train_Epoch(train_loader)
";

// Ex) trainer = Triplet_Trainer(model, miner, loss, optimizer, ...); for epoch in ...: trainer.Train_Epoch(loader)
#[test]
fn a_training_pass_of_an_object_built_with_the_optimizer_runs_each_epoch() {
    let a = run(OBJECT_PASSES);
    assert_eq!(a.kind, efficiency_audit::analysis::model::CodeKind::Train);
    assert_eq!(lines_of(&a, "EA103"), vec![8]);
    // an object built without the optimizer may do anything with the loader
    let plotter = OBJECT_PASSES.replace(
        "Triplet_Trainer(model, loss, optimizer, device)",
        "Triplet_Trainer(model, loss, device)",
    );
    assert!(lines_of(&run(&plotter), "EA103").is_empty());
}

/// Generalised advantage estimation written backwards over the rollout, one element at a time.
const GAE: &str = "import numpy as np

def compute_gae(rewards, values, last_value, gamma, lam):
    T = len(rewards)
    values_ext = values + [last_value]
    advantages = np.zeros(T, dtype=np.float32)
    gae = 0.0
    for t in reversed(range(T)):
        error = rewards[t] + gamma * values_ext[t + 1] - values_ext[t]
        gae = error + gamma * lam * gae
        advantages[t] = gae
    return advantages
";

// Ex) for t in reversed(range(T)): ... advantages[t] = gae
#[test]
fn an_element_wise_loop_walked_backwards_is_one() {
    assert_eq!(lines_of(&run(GAE), "EA603"), vec![8]);
    // a few known steps backwards are not a hot loop
    let few = GAE.replace("reversed(range(T))", "reversed(range(3))");
    assert!(lines_of(&run(&few), "EA603").is_empty());
}

/// A keyword-spotting network of the project, named for its convolutions.
const CONVNET: &str = "import torch
from kws_model import KWSConvNet

device = torch.device('cuda')
model = KWSConvNet(num_classes=12).to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(30):
    for waveforms, labels in train_loader:
        waveforms, labels = waveforms.to(device), labels.to(device)
        loss = criterion(model(waveforms), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
";

// Ex) model = KWSConvNet(num_classes=len(LABELS)).to(device)
#[test]
fn a_network_named_convnet_is_convolutional() {
    assert_eq!(lines_of(&run(CONVNET), "EA204"), vec![5]);
    // a graph network's convolutions are sparse matmuls
    let graph = CONVNET.replace("KWSConvNet", "GraphConvNet");
    assert!(lines_of(&run(&graph), "EA204").is_empty());
}

// Ex) for i, file in enumerate(glob.glob(...)): img = load_img(file)  (Keras)
#[test]
fn keras_load_img_per_file_is_per_file_decoding() {
    let src = "import glob
from keras.preprocessing.image import load_img, img_to_array
files = glob.glob('d/*.jpg')
out = []
for f in files:
    x = img_to_array(load_img(f))
    out.append(x.mean())
";
    assert_eq!(lines_of(&run(src), "EA602"), vec![5]);
    // a function of the file named alike is not Keras' decoder
    let own = format!(
        "def load_img(p):\n    return p\n\n{}",
        src.replace(
            "from keras.preprocessing.image import load_img, img_to_array\n",
            "from keras.preprocessing.image import img_to_array\n"
        )
    );
    assert!(lines_of(&run(&own), "EA602").is_empty());
}
