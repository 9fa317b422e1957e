"""Train a small CNN on synthetic "sensor images" generated on the fly.

Runs on CPU or CUDA: python3 train.py --max-steps 60
Prints the throughput (samples/s) and the final loss.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class SensorImages(Dataset):
    """Each sample is synthesised in Python: real CPU work per item."""

    def __init__(self, n, size=32, seed=0):
        self.n = n
        self.size = size
        self.seed = seed

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(self.seed * 100_003 + idx)
        label = idx % 10
        freq = 1.0 + label * 0.5
        coords = torch.linspace(0, 2 * math.pi, self.size)
        wave = torch.sin(freq * coords)[None, :] * torch.cos(freq * coords)[:, None]
        # A deliberately heavy per-sample augmentation: repeated blurs in Python.
        img = wave + 0.3 * torch.randn(self.size, self.size, generator=g)
        for _ in range(6):
            img = F.avg_pool2d(img[None, None], 3, stride=1, padding=1)[0, 0]
        return img[None], label


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        correct += (logits.argmax(1) == labels).sum().item()
        total += labels.numel()
    model.train()
    return correct / max(total, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device(args.device)
    train_set = SensorImages(args.max_steps * args.batch_size, seed=1)
    val_set = SensorImages(512, seed=2)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=256)

    model = SmallNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    seen = 0
    losses = []
    start = time.perf_counter()
    for step, (images, labels) in enumerate(train_loader):
        if step >= args.max_steps:
            break
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        seen += images.shape[0]
    elapsed = time.perf_counter() - start

    acc = evaluate(model, val_loader, device)
    print(f"throughput={seen / elapsed:.1f} samples/s")
    print(f"final_loss={sum(losses[-10:]) / len(losses[-10:]):.4f} val_acc={acc:.3f}")


if __name__ == "__main__":
    main()
