#!/usr/bin/env python3
"""Writes tests/fixtures/bench/train_1000.py: a ~1,000-line image-classification training script
in the shape real ones take (argparse config, datasets and transforms, several model blocks,
mixed precision behind a flag, a step loop with logging/checkpointing, evaluation, metrics).

Used by scripts/bench-analyze.sh for the per-file latency figure. Deterministic output.
"""
import pathlib
import sys

HEADER = '''"""Train an image classifier on a folder of JPEGs (ImageFolder layout).

Usage: python train_1000.py --data /data/imagenet-mini --epochs 10 --batch-size 64
"""
import argparse
import json
import logging
import math
import os
import random
import time
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter

log = logging.getLogger("train")


@dataclass
class Config:
    data: str = "data"
    out: str = "runs/exp"
    epochs: int = 10
    batch_size: int = 64
    lr: float = 3e-4
    weight_decay: float = 0.05
    warmup_steps: int = 500
    image_size: int = 224
    num_classes: int = 100
    label_smoothing: float = 0.1
    amp: bool = False
    log_every: int = 10
    seed: int = 0
    extra: dict = field(default_factory=dict)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default="data")
    p.add_argument("--out", default="runs/exp")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--warmup-steps", type=int, default=500)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--num-classes", type=int, default=100)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--arch", default="resnet_small", choices=sorted(ARCHS))
    a = p.parse_args()
    return Config(**{k: v for k, v in vars(a).items() if k != "arch"}), a.arch


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
'''

TRANSFORM = '''

class {name}:
    """{doc}"""

    def __init__(self, size, p={p}):
        self.size = size
        self.p = p

    def __call__(self, img):
        if random.random() > self.p:
            return img
        arr = np.asarray(img, dtype=np.float32) / 255.0
        {body}
        arr = np.clip(arr, 0.0, 1.0)
        return Image.fromarray((arr * 255).astype(np.uint8))
'''

TRANSFORMS = [
    ("RandomBrightness", "Scale brightness by a random factor.", 0.5,
     "arr = arr * random.uniform(0.7, 1.3)"),
    ("RandomContrast", "Stretch contrast around the mean.", 0.5,
     "m = arr.mean()\n        arr = (arr - m) * random.uniform(0.7, 1.3) + m"),
    ("RandomNoise", "Add Gaussian pixel noise.", 0.3,
     "arr = arr + np.random.normal(0.0, 0.02, arr.shape).astype(np.float32)"),
    ("RandomGamma", "Apply a random gamma curve.", 0.3,
     "arr = np.power(arr, random.uniform(0.8, 1.2))"),
    ("RandomGrayscale", "Average the channels.", 0.1,
     "g = arr.mean(axis=-1, keepdims=True)\n        arr = np.repeat(g, 3, axis=-1)"),
    ("RandomSolarize", "Invert pixels above a threshold.", 0.1,
     "arr = np.where(arr > 0.8, 1.0 - arr, arr)"),
    ("RandomPosterize", "Keep fewer bits per channel.", 0.1,
     "bits = random.randint(3, 6)\n        arr = np.floor(arr * 2**bits) / 2**bits"),
    ("RandomHorizontalFlip", "Mirror left to right.", 0.5,
     "arr = arr[:, ::-1, :].copy()"),
    ("RandomVerticalFlip", "Mirror top to bottom.", 0.1,
     "arr = arr[::-1, :, :].copy()"),
    ("RandomChannelShuffle", "Permute the color channels.", 0.05,
     "arr = arr[:, :, np.random.permutation(3)]"),
    ("RandomErasing", "Blank a random rectangle.", 0.25,
     "h, w = arr.shape[:2]\n        y, x = random.randint(0, h // 2), random.randint(0, w // 2)\n        arr[y : y + h // 4, x : x + w // 4] = random.random()"),
    ("RandomSharpen", "Unsharp mask with a 3x3 box blur.", 0.2,
     "blur = (arr + np.roll(arr, 1, 0) + np.roll(arr, -1, 0) + np.roll(arr, 1, 1) + np.roll(arr, -1, 1)) / 5\n        arr = arr + 0.5 * (arr - blur)"),
]

DATASET = '''

class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


def to_tensor(img, size):
    img = img.convert("RGB").resize((size, size), Image.BILINEAR)
    arr = np.asarray(img, dtype=np.float32) / 255.0
    arr = (arr - np.array([0.485, 0.456, 0.406])) / np.array([0.229, 0.224, 0.225])
    return torch.from_numpy(arr.transpose(2, 0, 1).copy()).float()


class ImageFolderCSV(Dataset):
    """Images listed in a CSV (path,label), decoded and augmented per item."""

    def __init__(self, root, split, size, transform=None):
        self.root = root
        self.size = size
        self.transform = transform
        frame = pd.read_csv(os.path.join(root, f"{split}.csv"))
        self.items = [(row["path"], int(row["label"])) for _, row in frame.iterrows()]
        self.class_counts = defaultdict(int)
        for _, label in self.items:
            self.class_counts[label] += 1

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        path, label = self.items[idx]
        img = Image.open(os.path.join(self.root, path))
        if self.transform is not None:
            img = self.transform(img)
        return to_tensor(img, self.size), label

    def class_weights(self):
        total = sum(self.class_counts.values())
        return torch.tensor(
            [total / max(self.class_counts[c], 1) for c in range(len(self.class_counts))]
        )
'''

BLOCK = '''

class {name}(nn.Module):
    """{doc}"""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, {k}, stride=stride, padding={pad}, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, {k}, padding={pad}, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.act = nn.{act}()
        self.skip = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
            if stride != 1 or cin != cout
            else nn.Identity()
        )

    def forward(self, x):
        out = self.act(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.act(out + self.skip(x))
'''

BLOCKS = [
    ("BasicBlock", "Two 3x3 convolutions with a residual connection.", 3, 1, "ReLU"),
    ("WideBlock", "Two 5x5 convolutions: a larger receptive field per block.", 5, 2, "ReLU"),
    ("GeluBlock", "Residual block with GELU activations.", 3, 1, "GELU"),
    ("SiluBlock", "Residual block with SiLU activations.", 3, 1, "SiLU"),
    ("MishBlock", "Residual block with Mish activations.", 3, 1, "Mish"),
    ("EluBlock", "Residual block with ELU activations.", 3, 1, "ELU"),
]

NET = '''

class {name}(nn.Module):
    """{doc}"""

    def __init__(self, num_classes, width={width}):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        layers = []
        cin = width
        for i, depth in enumerate({depths}):
            cout = width * 2**i
            for j in range(depth):
                layers.append({block}(cin, cout, stride=2 if j == 0 and i > 0 else 1))
                cin = cout
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(cin, num_classes)
        self.dropout = nn.Dropout({drop})

    def forward(self, x):
        x = self.layers(self.stem(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(self.dropout(x))
'''

NETS = [
    ("ResNetSmall", "A ResNet-18-like network.", 64, "(2, 2, 2, 2)", "BasicBlock", 0.0),
    ("ResNetWide", "Fewer, wider blocks.", 96, "(1, 1, 2, 1)", "WideBlock", 0.1),
    ("GeluNet", "ResNet layout with GELU blocks.", 64, "(2, 2, 3, 2)", "GeluBlock", 0.1),
    ("SiluNet", "ResNet layout with SiLU blocks.", 48, "(3, 4, 6, 3)", "SiluBlock", 0.2),
    ("MishNet", "ResNet layout with Mish blocks.", 64, "(2, 3, 4, 2)", "MishBlock", 0.1),
    ("EluNet", "ResNet layout with ELU blocks.", 32, "(2, 2, 2, 2)", "EluBlock", 0.0),
]

METRIC = '''

def {name}(logits, targets{extra_sig}):
    """{doc}"""
{body}
'''

METRICS = [
    ("top1_accuracy", "Fraction of samples whose best class is right.", "",
     "    return (logits.argmax(dim=1) == targets).float().mean().item()"),
    ("topk_accuracy", "Fraction of samples whose class is in the top k.", ", k=5",
     "    topk = logits.topk(k, dim=1).indices\n    return (topk == targets[:, None]).any(dim=1).float().mean().item()"),
    ("per_class_accuracy", "Accuracy of each class separately.", ", num_classes=100",
     "    preds = logits.argmax(dim=1)\n    out = []\n    for c in range(num_classes):\n        mask = targets == c\n        if mask.sum() == 0:\n            out.append(float(\"nan\"))\n            continue\n        out.append((preds[mask] == c).float().mean().item())\n    return out"),
    ("expected_calibration_error", "Gap between confidence and accuracy, over 15 bins.", ", bins=15",
     "    probs = logits.softmax(dim=1)\n    conf, preds = probs.max(dim=1)\n    ece = torch.zeros(1, device=logits.device)\n    edges = torch.linspace(0, 1, bins + 1, device=logits.device)\n    for lo, hi in zip(edges[:-1], edges[1:]):\n        mask = (conf > lo) & (conf <= hi)\n        if mask.any():\n            acc = (preds[mask] == targets[mask]).float().mean()\n            ece += mask.float().mean() * (conf[mask].mean() - acc).abs()\n    return ece.item()"),
    ("confusion_matrix", "Counts of (true, predicted) pairs.", ", num_classes=100",
     "    preds = logits.argmax(dim=1)\n    m = torch.zeros(num_classes, num_classes, dtype=torch.long)\n    for t, p in zip(targets.tolist(), preds.tolist()):\n        m[t, p] += 1\n    return m"),
    ("macro_f1", "Unweighted mean of the per-class F1 scores.", ", num_classes=100",
     "    preds = logits.argmax(dim=1)\n    scores = []\n    for c in range(num_classes):\n        tp = ((preds == c) & (targets == c)).sum().item()\n        fp = ((preds == c) & (targets != c)).sum().item()\n        fn = ((preds != c) & (targets == c)).sum().item()\n        denom = 2 * tp + fp + fn\n        scores.append(2 * tp / denom if denom else 0.0)\n    return sum(scores) / len(scores)"),
    ("negative_log_likelihood", "Mean NLL of the true class.", "",
     "    return F.cross_entropy(logits, targets).item()"),
    ("brier_score", "Mean squared error of the predicted probabilities.", ", num_classes=100",
     "    probs = logits.softmax(dim=1)\n    onehot = F.one_hot(targets, num_classes).float()\n    return ((probs - onehot) ** 2).sum(dim=1).mean().item()"),
]

TRAIN = '''

ARCHS = {{{archs}}}


def cosine_lr(step, total, warmup, base):
    if step < warmup:
        return base * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return base * 0.5 * (1 + math.cos(math.pi * t))


def build_optimizer(model, cfg):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
    return torch.optim.AdamW(
        [{{"params": decay, "weight_decay": cfg.weight_decay}}, {{"params": no_decay, "weight_decay": 0.0}}],
        lr=cfg.lr,
    )


def save_checkpoint(path, model, optimizer, epoch, step, best):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(
        {{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch, "step": step, "best": best}},
        path,
    )


def evaluate(model, loader, device, num_classes):
    model.eval()
    totals = defaultdict(float)
    n = 0
    all_logits, all_targets = [], []
    for images, targets in loader:
        images = images.to(device)
        targets = targets.to(device)
        logits = model(images)
        loss = F.cross_entropy(logits, targets)
        b = targets.shape[0]
        totals["loss"] += loss.item() * b
        totals["top1"] += top1_accuracy(logits, targets) * b
        totals["top5"] += topk_accuracy(logits, targets) * b
        n += b
        all_logits.append(logits.cpu())
        all_targets.append(targets.cpu())
    model.train()
    logits = torch.cat(all_logits)
    targets = torch.cat(all_targets)
    out = {{k: v / max(n, 1) for k, v in totals.items()}}
    out["ece"] = expected_calibration_error(logits, targets)
    out["per_class"] = per_class_accuracy(logits, targets, num_classes)
    return out


def train(cfg, arch):
    seed_everything(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    writer = SummaryWriter(cfg.out)
    augment = Compose([{transforms}])
    train_set = ImageFolderCSV(cfg.data, "train", cfg.image_size, transform=augment)
    val_set = ImageFolderCSV(cfg.data, "val", cfg.image_size)
    train_loader = DataLoader(train_set, batch_size=cfg.batch_size, shuffle=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=cfg.batch_size * 2)

    model = ARCHS[arch](cfg.num_classes).to(device)
    optimizer = build_optimizer(model, cfg)
    criterion = nn.CrossEntropyLoss(
        weight=train_set.class_weights().to(device), label_smoothing=cfg.label_smoothing
    )
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp)
    total_steps = cfg.epochs * len(train_loader)
    step = 0
    best = 0.0
    history = []
    for epoch in range(cfg.epochs):
        model.train()
        t0 = time.time()
        running = 0.0
        for images, targets in train_loader:
            images = images.to(device)
            targets = targets.to(device)
            lr = cosine_lr(step, total_steps, cfg.warmup_steps, cfg.lr)
            for group in optimizer.param_groups:
                group["lr"] = lr
            optimizer.zero_grad()
            with torch.autocast(device.type, enabled=cfg.amp):
                logits = model(images)
                loss = criterion(logits, targets)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            running += loss.item()
            if step % cfg.log_every == 0:
                acc = top1_accuracy(logits, targets)
                writer.add_scalar("train/loss", loss.item(), step)
                writer.add_scalar("train/acc", acc, step)
                writer.add_scalar("train/lr", lr, step)
                log.info("epoch %d step %d loss %.4f acc %.3f lr %.2e", epoch, step, loss.item(), acc, lr)
            step += 1
        metrics = evaluate(model, val_loader, device, cfg.num_classes)
        metrics["epoch"] = epoch
        metrics["train_loss"] = running / max(1, len(train_loader))
        metrics["seconds"] = time.time() - t0
        history.append(metrics)
        writer.add_scalar("val/top1", metrics["top1"], epoch)
        writer.add_scalar("val/top5", metrics["top5"], epoch)
        if metrics["top1"] > best:
            best = metrics["top1"]
            save_checkpoint(os.path.join(cfg.out, "best.pt"), model, optimizer, epoch, step, best)
        save_checkpoint(os.path.join(cfg.out, "last.pt"), model, optimizer, epoch, step, best)
        with open(os.path.join(cfg.out, "history.json"), "w") as f:
            json.dump([{{k: v for k, v in m.items() if k != "per_class"}} for m in history], f, indent=2)
    writer.close()
    return best


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    cfg, arch = parse_args()
    best = train(cfg, arch)
    print(f"best_top1={{best:.4f}}")


if __name__ == "__main__":
    main()
'''


EXTRAS = """

class ModelEma:
    \"\"\"Exponential moving average of the weights, evaluated instead of the raw model.\"\"\"

    def __init__(self, model, decay=0.9998):
        self.decay = decay
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}

    @torch.no_grad()
    def update(self, model):
        for k, v in model.state_dict().items():
            if v.dtype.is_floating_point:
                self.shadow[k].mul_(self.decay).add_(v.detach(), alpha=1 - self.decay)
            else:
                self.shadow[k].copy_(v)

    def copy_to(self, model):
        model.load_state_dict(self.shadow)


def mixup(images, targets, num_classes, alpha=0.2):
    \"\"\"Blend pairs of samples and their one-hot targets.\"\"\"
    lam = np.random.beta(alpha, alpha)
    perm = torch.randperm(images.shape[0], device=images.device)
    mixed = lam * images + (1 - lam) * images[perm]
    onehot = F.one_hot(targets, num_classes).float()
    return mixed, lam * onehot + (1 - lam) * onehot[perm]


def cutmix(images, targets, num_classes, alpha=1.0):
    \"\"\"Paste a random box of one sample onto another.\"\"\"
    lam = np.random.beta(alpha, alpha)
    perm = torch.randperm(images.shape[0], device=images.device)
    h, w = images.shape[-2:]
    rh, rw = int(h * math.sqrt(1 - lam)), int(w * math.sqrt(1 - lam))
    cy, cx = random.randint(0, h - 1), random.randint(0, w - 1)
    y0, y1 = max(cy - rh // 2, 0), min(cy + rh // 2, h)
    x0, x1 = max(cx - rw // 2, 0), min(cx + rw // 2, w)
    images = images.clone()
    images[:, :, y0:y1, x0:x1] = images[perm, :, y0:y1, x0:x1]
    lam = 1 - (y1 - y0) * (x1 - x0) / (h * w)
    onehot = F.one_hot(targets, num_classes).float()
    return images, lam * onehot + (1 - lam) * onehot[perm]


def soft_cross_entropy(logits, soft_targets):
    return torch.sum(-soft_targets * F.log_softmax(logits, dim=-1), dim=-1).mean()


def prepare_splits(root, val_fraction=0.1, seed=0):
    \"\"\"Scan class folders and write train.csv / val.csv with a stratified split.\"\"\"
    rows = []
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    for label, name in enumerate(classes):
        for fname in sorted(os.listdir(os.path.join(root, name))):
            if fname.lower().endswith((".jpg", ".jpeg", ".png")):
                rows.append({"path": os.path.join(name, fname), "label": label})
    frame = pd.DataFrame(rows)
    rng = np.random.default_rng(seed)
    val_mask = np.zeros(len(frame), dtype=bool)
    for label, group in frame.groupby("label"):
        idx = group.index.to_numpy()
        rng.shuffle(idx)
        val_mask[idx[: max(1, int(len(idx) * val_fraction))]] = True
    frame[~val_mask].to_csv(os.path.join(root, "train.csv"), index=False)
    frame[val_mask].to_csv(os.path.join(root, "val.csv"), index=False)
    with open(os.path.join(root, "classes.json"), "w") as f:
        json.dump(classes, f)
    return len(frame), len(classes)


def image_statistics(root, limit=2000):
    \"\"\"Mean and std of each channel over the first images of train.csv.\"\"\"
    frame = pd.read_csv(os.path.join(root, "train.csv")).head(limit)
    sums = np.zeros(3)
    sq = np.zeros(3)
    count = 0
    for _, row in frame.iterrows():
        arr = np.asarray(Image.open(os.path.join(root, row["path"])).convert("RGB"), dtype=np.float64) / 255.0
        sums += arr.reshape(-1, 3).sum(axis=0)
        sq += (arr.reshape(-1, 3) ** 2).sum(axis=0)
        count += arr.shape[0] * arr.shape[1]
    mean = sums / max(count, 1)
    std = np.sqrt(sq / max(count, 1) - mean**2)
    return mean.tolist(), std.tolist()


def predict_folder(model, folder, device, size, classes, batch_size=32):
    \"\"\"Classify every image of a folder; returns (file, class, confidence) rows.\"\"\"
    model.eval()
    files = sorted(f for f in os.listdir(folder) if f.lower().endswith((".jpg", ".png")))
    rows = []
    for start in range(0, len(files), batch_size):
        chunk = files[start : start + batch_size]
        batch = torch.stack([to_tensor(Image.open(os.path.join(folder, f)), size) for f in chunk])
        batch = batch.to(device)
        probs = model(batch).softmax(dim=1)
        conf, pred = probs.max(dim=1)
        for f, c, p in zip(chunk, conf.tolist(), pred.tolist()):
            rows.append((f, classes[p], c))
    return rows


def export_onnx(model, path, size, device):
    model.eval()
    dummy = torch.randn(1, 3, size, size, device=device)
    torch.onnx.export(
        model,
        dummy,
        path,
        input_names=["images"],
        output_names=["logits"],
        dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}},
        opset_version=17,
    )


def measure_throughput(model, device, size, batch_size=64, steps=50):
    \"\"\"Images per second of the forward pass alone, after a warm-up.\"\"\"
    model.eval()
    x = torch.randn(batch_size, 3, size, size, device=device)
    with torch.no_grad():
        for _ in range(5):
            model(x)
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(steps):
            model(x)
        if device.type == "cuda":
            torch.cuda.synchronize()
    return batch_size * steps / (time.perf_counter() - t0)


def lr_range_test(model, loader, device, start=1e-7, end=1.0, steps=100):
    \"\"\"Leslie Smith's learning-rate range test: loss against an exponentially growing lr.\"\"\"
    optimizer = torch.optim.SGD(model.parameters(), lr=start, momentum=0.9)
    gamma = (end / start) ** (1 / steps)
    lrs, losses = [], []
    best = float("inf")
    it = iter(loader)
    for i in range(steps):
        try:
            images, targets = next(it)
        except StopIteration:
            it = iter(loader)
            images, targets = next(it)
        images, targets = images.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), targets)
        loss.backward()
        optimizer.step()
        lr = optimizer.param_groups[0]["lr"]
        lrs.append(lr)
        losses.append(loss.item())
        best = min(best, losses[-1])
        if losses[-1] > 4 * best:
            break
        for g in optimizer.param_groups:
            g["lr"] = lr * gamma
    return lrs, losses


def count_parameters(model):
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return total, trainable


def summarize(model, size, device):
    \"\"\"Print each layer's output shape and parameter count.\"\"\"
    rows = []
    hooks = []

    def hook(module, inputs, output):
        if isinstance(output, torch.Tensor):
            params = sum(p.numel() for p in module.parameters(recurse=False))
            rows.append((module.__class__.__name__, tuple(output.shape), params))

    for m in model.modules():
        if not list(m.children()):
            hooks.append(m.register_forward_hook(hook))
    with torch.no_grad():
        model(torch.zeros(1, 3, size, size, device=device))
    for h in hooks:
        h.remove()
    for name, shape, params in rows:
        print(f"{name:<20} {str(shape):<24} {params:>10,}")
    total, trainable = count_parameters(model)
    print(f"total {total:,} trainable {trainable:,}")
"""


def main():
    parts = [HEADER]
    for name, doc, p, body in TRANSFORMS:
        parts.append(TRANSFORM.format(name=name, doc=doc, p=p, body=body))
    parts.append(DATASET)
    for name, doc, k, pad, act in BLOCKS:
        parts.append(BLOCK.format(name=name, doc=doc, k=k, pad=pad, act=act))
    for name, doc, width, depths, block, drop in NETS:
        parts.append(NET.format(name=name, doc=doc, width=width, depths=depths, block=block, drop=drop))
    for name, doc, extra, body in METRICS:
        parts.append(METRIC.format(name=name, doc=doc, extra_sig=extra, body=body))
    parts.append(EXTRAS)
    archs = ", ".join(f'"{n.lower()}": {n}' for n, *_ in NETS)
    transforms = ", ".join(f"{n}(cfg.image_size)" for n, *_ in TRANSFORMS)
    parts.append(TRAIN.format(archs=archs, transforms=transforms))
    text = "".join(parts)
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/bench/train_1000.py")
    out.write_text(text)
    print(f"{out}: {text.count(chr(10))} lines")


if __name__ == "__main__":
    main()
