"""Train a small CNN on synthetic "sensor images" generated on the fly.

Runs on CPU or CUDA: python3 train.py --max-steps 60
Prints the throughput (samples/s) and the final loss.
"""
import argparse
import math
import random
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
        rng = random.Random(self.seed * 100_003 + idx)
        label = idx % 10
        freq = 1.0 + label * 0.5
        step = 2 * math.pi / self.size
        # Render the noisy sensor image pixel by pixel in Python: real CPU work per sample.
        pixels = [
            math.sin(freq * x * step) * math.cos(freq * y * step) + rng.gauss(0.0, 1.5)
            for y in range(self.size)
            for x in range(self.size)
        ]
        # A smoothing augmentation: two passes of a 3-tap blur along the raster, in Python too.
        n = len(pixels)
        for _ in range(2):
            pixels = [(pixels[i - 1] + pixels[i] + pixels[(i + 1) % n]) / 3 for i in range(n)]
        return torch.tensor(pixels).view(1, self.size, self.size), label


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
    parser.add_argument("--val-samples", type=int, default=512)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device(args.device)
    train_set = SensorImages(args.max_steps * args.batch_size, seed=1)
    val_set = SensorImages(args.val_samples, seed=2)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=128)

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
    train_s = time.perf_counter() - start

    acc = evaluate(model, val_loader, device)
    elapsed = time.perf_counter() - start
    # Training and evaluation samples over the wall time of both.
    print(f"throughput={(seen + len(val_set)) / elapsed:.1f} samples/s train_s={train_s:.2f} eval_s={elapsed - train_s:.2f}")
    print(f"final_loss={sum(losses[-10:]) / len(losses[-10:]):.4f} val_acc={acc:.3f}")


if __name__ == "__main__":
    main()
