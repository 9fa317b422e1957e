#!/usr/bin/env python3
"""Measure, on a CUDA GPU, what each GPU rule of the catalog says its waste costs.

For each rule: the shape its documented example flags ("flagged") and the shape its "use
instead" recommends ("fixed"), timed side by side in the same process on the same model and data,
alternating the two, several rounds; the median of each and their ratio. These figures back the
"Why is this slow?" sections of docs/rules.md with measurements; they are not used by the tool.

    python3 scripts/gpu-rule-claims.py [--rounds 5] [--json FILE] [--only EA201,EA301] [--skip-compile]

Needs torch (and torchvision for the conv-net claims) and a CUDA device; exits 2 without one.
"""
import argparse
import json
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default="")
    ap.add_argument("--skip-compile", action="store_true")
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("gpu-rule-claims: no CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)

    claims = build_claims(torch, dev, args)
    only = {c.strip() for c in args.only.split(",") if c.strip()}
    results = []
    for rule, what, unit, flagged, fixed in claims:
        if only and rule not in only:
            continue
        try:
            res = measure(torch, rule, what, unit, flagged, fixed, args.rounds)
        except Exception as e:  # one claim failing must not lose the others
            res = {"rule": rule, "what": what, "error": f"{type(e).__name__}: {e}"}
            print(f"| {rule} | {what} | error: {res['error']} |", flush=True)
        results.append(res)
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "rounds": args.rounds, "claims": results}, f, indent=1)
    return 0


def measure(torch, rule, what, unit, flagged, fixed, rounds):
    """Alternate the two variants `rounds` times after one warm-up each; medians and ratio."""
    flagged_setup, flagged_run = flagged()
    fixed_setup, fixed_run = fixed()
    for setup, run in ((flagged_setup, flagged_run), (fixed_setup, fixed_run)):
        setup()
        run()
        torch.cuda.synchronize()
    times = {"flagged": [], "fixed": []}
    extra = {}
    for _ in range(rounds):
        for name, setup, run in (("flagged", flagged_setup, flagged_run), ("fixed", fixed_setup, fixed_run)):
            setup()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = run()
            torch.cuda.synchronize()
            times[name].append(time.perf_counter() - t0)
            if isinstance(out, dict):
                extra[name] = out
    a, b = statistics.median(times["flagged"]), statistics.median(times["fixed"])
    res = {"rule": rule, "what": what, "unit": unit, "flagged_s": a, "fixed_s": b,
           "ratio": a / b, "flagged_all": times["flagged"], "fixed_all": times["fixed"], **extra}
    note = ""
    if extra:
        note = " " + json.dumps(extra)
    print(f"| {rule} | {what} | {a * 1e3:.1f} ms | {b * 1e3:.1f} ms | {a / b:.2f}x |{note}", flush=True)
    return res


def build_claims(torch, dev, args):
    nn = torch.nn
    F = torch.nn.functional
    claims = []

    def noop():
        pass

    # --- models -------------------------------------------------------------------------------
    def resnet50():
        import torchvision
        return torchvision.models.resnet50().to(dev)

    class Block(nn.Module):
        def __init__(self, d=1024, heads=16):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    def gpt(layers=6, d=1024):
        return nn.Sequential(*[Block(d) for _ in range(layers)]).to(dev)

    def train_steps(model, make_batch, steps, autocast_dtype=None, per_step=None):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def run():
            for i in range(steps):
                x, y = make_batch()
                if autocast_dtype is None:
                    loss = F.mse_loss(model(x).float(), y) if y.dtype.is_floating_point else F.cross_entropy(model(x), y)
                else:
                    with torch.autocast("cuda", dtype=autocast_dtype):
                        out = model(x)
                    loss = F.mse_loss(out.float(), y) if y.dtype.is_floating_point else F.cross_entropy(out.float(), y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                if per_step is not None:
                    per_step(loss)
        return run

    # --- EA201 training-without-amp: fp32 vs bf16 autocast (ResNet-50 and a transformer) -------
    img = torch.randn(128, 3, 224, 224, device=dev)
    lab = torch.randint(0, 1000, (128,), device=dev)

    def conv_precision(dtype):
        def make():
            m = resnet50()
            return noop, train_steps(m, lambda: (img, lab), 10, autocast_dtype=dtype)
        return make
    claims.append(("EA201", "ResNet-50 training step, batch 128 at 224²: fp32 vs bf16 autocast", "10 steps",
                   conv_precision(None), conv_precision(torch.bfloat16)))

    seq = torch.randn(32, 512, 1024, device=dev)

    def tf_precision(dtype, matmul="highest"):
        def make():
            m = gpt()

            def setup():
                torch.set_float32_matmul_precision(matmul)
            return setup, train_steps(m, lambda: (seq, seq), 10, autocast_dtype=dtype)
        return make
    claims.append(("EA201", "6-layer transformer (d=1024, 32×512 tokens) training step: fp32 vs bf16 autocast",
                   "10 steps", tf_precision(None), tf_precision(torch.bfloat16)))

    # --- EA202 fp32-without-tf32 ---------------------------------------------------------------
    claims.append(("EA202", "the same transformer in fp32: TF32 off (default 'highest') vs set_float32_matmul_precision('high')",
                   "10 steps", tf_precision(None, "highest"), tf_precision(None, "high")))

    # --- EA204 conv-without-cudnn-benchmark ----------------------------------------------------
    def conv_bench(flag):
        def make():
            m = resnet50()

            def setup():
                torch.backends.cudnn.benchmark = flag
            return setup, train_steps(m, lambda: (img, lab), 10, autocast_dtype=torch.bfloat16)
        return make
    claims.append(("EA204", "ResNet-50 bf16 training step: cudnn.benchmark False vs True",
                   "10 steps", conv_bench(False), conv_bench(True)))

    # --- EA301 / EA302: a sync every step of a small model ------------------------------------
    xs = torch.randn(512, 256, device=dev)
    ys = torch.randint(0, 10, (512,), device=dev)

    def small_mlp():
        return nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to(dev)

    def sync_variant(kind):
        def make():
            m = small_mlp()
            acc = {"v": None}

            def item(loss):
                acc["v"] = loss.item()

            def sync(loss):
                torch.cuda.synchronize()

            def keep(loss):
                acc["v"] = loss.detach() if acc["v"] is None else acc["v"] + loss.detach()
            per = {"item": item, "sync": sync, "keep": keep}[kind]
            run = train_steps(m, lambda: (xs, ys), 200, per_step=per)

            def setup():
                acc["v"] = None
            return setup, run
        return make
    claims.append(("EA301", "small MLP training, batch 512: loss.item() every step vs a device-side running sum",
                   "200 steps", sync_variant("item"), sync_variant("keep")))
    claims.append(("EA302", "the same: torch.cuda.synchronize() every step vs none",
                   "200 steps", sync_variant("sync"), sync_variant("keep")))

    # --- EA301 with host work to overlap: each step also prepares the next batch on the CPU --
    def overlap_variant(sync):
        def make():
            m = nn.Sequential(*[nn.Linear(2048, 2048) for _ in range(8)]).to(dev)
            opt = torch.optim.SGD(m.parameters(), lr=1e-3)
            # two pinned buffers, each reused only once its last copy has finished (what a
            # loader's pinning thread does), so the CPU can build one while the other is copied
            bufs = [torch.empty(1024, 2048).pin_memory() for _ in range(2)]
            done = [None, None]

            def run():
                total = torch.zeros((), device=dev)
                for i in range(50):
                    b = i % 2
                    if done[b] is not None:
                        done[b].synchronize()
                    torch.randn(1024, 2048, out=bufs[b])  # the next batch, built on the CPU
                    x = bufs[b].to(dev, non_blocking=True)
                    done[b] = torch.cuda.Event()
                    done[b].record()
                    loss = m(x).square().mean()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    if sync:
                        loss.item()
                    else:
                        total += loss.detach()
                total.item()
            return noop, run
        return make
    claims.append(("EA301", "8×Linear(2048) training, batch 1024 built on the CPU each step: loss.item() every step vs a device-side sum",
                   "50 steps", overlap_variant(True), overlap_variant(False)))

    # --- EA303 blocking host-to-device copy (pageable vs pinned + non_blocking) ---------------
    host_pageable = [torch.randn(64, 3, 224, 224) for _ in range(4)]
    host_pinned = [t.pin_memory() for t in host_pageable]

    def copy_variant(pinned):
        def make():
            m = resnet50()
            m.eval()
            batches = host_pinned if pinned else host_pageable

            def run():
                with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
                    for i in range(20):
                        x = batches[i % 4].to(dev, non_blocking=pinned)
                        m(x)
            return noop, run
        return make
    claims.append(("EA303", "ResNet-50 bf16 inference on 64×3×224² fp32 host batches: pageable .to(device) vs pinned, non_blocking=True",
                   "20 batches", copy_variant(False), copy_variant(True)))

    # --- EA304 cpu-tensor-then-move ------------------------------------------------------------
    def create_variant(on_device):
        def make():
            def run():
                for _ in range(50):
                    if on_device:
                        torch.randn(64, 3, 224, 224, device=dev)
                    else:
                        torch.randn(64, 3, 224, 224).to(dev)
            return noop, run
        return make
    claims.append(("EA304", "torch.randn(64,3,224,224).to(device) vs torch.randn(..., device=device)",
                   "50 tensors", create_variant(False), create_variant(True)))

    # --- EA401 eval-loop-without-no-grad -------------------------------------------------------
    def eval_variant(no_grad):
        def make():
            m = resnet50()
            m.eval()
            peak = {}

            def setup():
                torch.cuda.reset_peak_memory_stats()

            def run():
                ctx = torch.inference_mode() if no_grad else torch.enable_grad()
                with ctx:
                    for _ in range(10):
                        out = m(img)
                        out.argmax(1)
                peak["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
                return dict(peak)
            return setup, run
        return make
    claims.append(("EA401", "ResNet-50 fp32 evaluation, batch 128: no context vs torch.inference_mode()",
                   "10 batches", eval_variant(False), eval_variant(True)))

    # --- EA702 small-training-batch (same number of samples) -----------------------------------
    def batch_variant(bs):
        def make():
            import torchvision
            m = torchvision.models.resnet18(num_classes=10).to(dev)
            x = torch.randn(bs, 3, 64, 64, device=dev)
            y = torch.randint(0, 10, (bs,), device=dev)
            return noop, train_steps(m, lambda: (x, y), 2048 // bs)
        return make
    claims.append(("EA702", "ResNet-18 on 64² images, 2,048 samples: batch 8 vs batch 128",
                   "2,048 samples", batch_variant(8), batch_variant(128)))

    # --- EA102 dataloader-without-pin-memory ---------------------------------------------------
    def inference_epoch(ds, m, pin, **loader_kwargs):
        """One pass of a fresh DataLoader over `ds` into model `m`, bf16, no autograd."""
        from torch.utils.data import DataLoader

        def run():
            loader = DataLoader(ds, pin_memory=pin, **loader_kwargs)
            with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
                for x, y in loader:
                    m(x.to(dev, non_blocking=pin))
        return run

    def loader_variant(pin):
        def make():
            from torch.utils.data import TensorDataset
            ds = TensorDataset(torch.randn(2048, 3, 128, 128), torch.randint(0, 10, (2048,)))
            m = resnet50()
            m.eval()
            return noop, inference_epoch(ds, m, pin, batch_size=128, num_workers=4)
        return make
    claims.append(("EA102", "DataLoader (4 workers) of 2,048 fp32 128² images into ResNet-50 bf16 inference: pin_memory False vs True",
                   "one epoch", loader_variant(False), loader_variant(True)))

    # --- calibration: where the rules' size and dataset exemptions stand ----------------------
    # EA201/EA202/EA204 leave a file alone when its every model adds up to under a size bar
    # ("kernel-launch bound"; 100,000 parameters before these runs, 1,000,000 after them); these
    # sweep the size to see where TF32, autocast and autotuning start to pay.
    def mlp(width, depth, d_in=64):
        layers = [nn.Linear(d_in, width), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Tanh()]
        return nn.Sequential(*layers, nn.Linear(width, 1)).to(dev)

    def mlp_tf32(width, depth, batch, matmul):
        def make():
            m = mlp(width, depth)
            x = torch.randn(batch, 64, device=dev)
            y = torch.randn(batch, 1, device=dev)

            def setup():
                torch.set_float32_matmul_precision(matmul)
            return setup, train_steps(m, lambda: (x, y), 100)
        return make
    for width, depth, batch in ((64, 3, 1024), (128, 6, 1024), (512, 4, 1024), (1024, 10, 1024), (2048, 4, 4096)):
        n = sum(p.numel() for p in mlp(width, depth).parameters())
        claims.append(("EA202-mlp", f"MLP {depth}x{width} ({n:,} parameters), batch {batch}, fp32: TF32 off vs 'high'",
                       "100 steps", mlp_tf32(width, depth, batch, "highest"), mlp_tf32(width, depth, batch, "high")))

    def lenet():
        return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 4 * 4, 120), nn.ReLU(),
                             nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10)).to(dev)

    def unet_ish():
        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                                 nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())
        return nn.Sequential(block(3, 32), nn.MaxPool2d(2), block(32, 64), nn.MaxPool2d(2), block(64, 128),
                             nn.Upsample(scale_factor=4), block(128, 32), nn.Conv2d(32, 10, 1),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten()).to(dev)

    def mobilenet():
        import torchvision
        return torchvision.models.mobilenet_v2(num_classes=10).to(dev)

    def conv3d():
        return nn.Sequential(nn.Conv3d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv3d(32, 64, 3, padding=1), nn.ReLU(),
                             nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(64, 10)).to(dev)

    nets = (
        ("LeNet-5 (61,706 parameters) on 1×28², batch 64", lenet, (64, 1, 28, 28), 100),
        ("a small U-Net-like net on 3×256², batch 16", unet_ish, (16, 3, 256, 256), 10),
        ("MobileNetV2 (depthwise convolutions) on 3×224², batch 64", mobilenet, (64, 3, 224, 224), 10),
        ("a 3D conv net on 3×16×112², batch 8", conv3d, (8, 3, 16, 112, 112), 10),
    )

    def net_bench(build, shape, steps, flag):
        def make():
            m = build()
            x = torch.randn(*shape, device=dev)
            y = torch.randint(0, 10, (shape[0],), device=dev)

            def setup():
                torch.backends.cudnn.benchmark = flag
            return setup, train_steps(m, lambda: (x, y), steps)
        return make
    for what, build, shape, steps in nets:
        claims.append(("EA204-nets", f"{what}, fp32 training: cudnn.benchmark False vs True",
                       f"{steps} steps", net_bench(build, shape, steps, False), net_bench(build, shape, steps, True)))
    torch.backends.cudnn.benchmark = False

    # EA101 leaves alone loaders over tensors already in memory; a dataset that builds each
    # sample on the CPU (decode, augment) is what workers are for.
    class CpuWork(torch.utils.data.Dataset):
        """Each sample: a 3×224² uint8 image resized and normalised on the CPU (a decode stand-in)."""
        def __init__(self, n):
            self.raw = torch.randint(0, 255, (n, 3, 256, 256), dtype=torch.uint8)

        def __len__(self):
            return len(self.raw)

        def __getitem__(self, i):
            x = self.raw[i].float().unsqueeze(0) / 255.0
            x = F.interpolate(x, size=(224, 224), mode="bilinear", align_corners=False)[0]
            x = (x - 0.5) / 0.25
            return x.flip(-1) if i % 2 else x, i % 10

    def worker_variant(kind, workers, persistent=False, epochs=1):
        def make():
            from torch.utils.data import DataLoader, TensorDataset
            if kind == "memory":
                ds = TensorDataset(torch.randn(4096, 3, 64, 64), torch.randint(0, 10, (4096,)))
                m = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 64 * 64, 10)).to(dev)
            else:
                ds = CpuWork(512)
                m = resnet50()
            m.eval()
            loader = {}

            def setup():
                loader["l"] = DataLoader(ds, batch_size=64, num_workers=workers, pin_memory=True,
                                         persistent_workers=persistent and workers > 0)

            def run():
                with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
                    for _ in range(epochs):
                        for x, y in loader["l"]:
                            m(x.to(dev, non_blocking=True))
            return setup, run
        return make
    # a dataset that decodes a JPEG with PIL per sample: single-threaded Python work per item,
    # what most image pipelines do
    class JpegWork(torch.utils.data.Dataset):
        def __init__(self, n):
            import io
            import numpy as np
            from PIL import Image
            rng = np.random.default_rng(0)
            self.blobs = []
            for _ in range(16):
                buf = io.BytesIO()
                Image.fromarray(rng.integers(0, 255, (256, 256, 3), dtype=np.uint8)).save(buf, "JPEG")
                self.blobs.append(buf.getvalue())
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            import io
            import numpy as np
            from PIL import Image
            img = Image.open(io.BytesIO(self.blobs[i % 16])).convert("RGB").resize((224, 224))
            x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).permute(2, 0, 1)
            return x, i % 10

    def jpeg_variant(workers):
        def make():
            m = resnet50()
            m.eval()
            return noop, inference_epoch(JpegWork(2048), m, True, batch_size=64, num_workers=workers)
        return make
    claims.append(("EA101-jpeg", "2,048 JPEGs decoded and resized with PIL per sample into ResNet-50 bf16: num_workers 0 vs 4",
                   "one epoch", jpeg_variant(0), jpeg_variant(4)))

    # EA202 and recurrent layers: cuDNN runs LSTM/GRU under `torch.backends.cudnn.allow_tf32`
    # (default True), not the matmul switch; these check which switch a cuDNN LSTM follows
    def lstm_tf32(matmul, cudnn_tf32):
        def make():
            m = nn.LSTM(1024, 1024, num_layers=2, batch_first=True).to(dev)
            x = torch.randn(64, 128, 1024, device=dev)
            opt = torch.optim.SGD(m.parameters(), lr=1e-3)

            def setup():
                torch.set_float32_matmul_precision(matmul)
                torch.backends.cudnn.allow_tf32 = cudnn_tf32

            def run():
                for _ in range(10):
                    out, _ = m(x)
                    loss = out.square().mean()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                torch.backends.cudnn.allow_tf32 = True
            return setup, run
        return make
    claims.append(("EA202-rnn", "cuDNN LSTM 2x1024, batch 64 x 128 steps, fp32 training: matmul 'highest' vs 'high' (cudnn.allow_tf32 at its default, True)",
                   "10 steps", lstm_tf32("highest", True), lstm_tf32("high", True)))
    claims.append(("EA202-rnn", "the same LSTM, matmul 'highest': cudnn.allow_tf32 False vs True (the default)",
                   "10 steps", lstm_tf32("highest", False), lstm_tf32("highest", True)))

    # EA201's tiny-model exemption: bf16 autocast on MLPs of growing size
    def mlp_amp(width, depth, batch, dtype):
        def make():
            m = mlp(width, depth)
            x = torch.randn(batch, 64, device=dev)
            y = torch.randn(batch, 1, device=dev)
            return noop, train_steps(m, lambda: (x, y), 100, autocast_dtype=dtype)
        return make
    for width, depth, batch in ((128, 6, 1024), (512, 4, 1024), (2048, 4, 4096)):
        n = sum(p.numel() for p in mlp(width, depth).parameters())
        claims.append(("EA201-mlp", f"MLP {depth}x{width} ({n:,} parameters), batch {batch}: fp32 vs bf16 autocast",
                       "100 steps", mlp_amp(width, depth, batch, None), mlp_amp(width, depth, batch, torch.bfloat16)))

    claims.append(("EA101-data", "4,096 in-memory 3×64² tensors (TensorDataset) into a linear model: num_workers 0 vs 4",
                   "one epoch", worker_variant("memory", 0), worker_variant("memory", 4)))
    claims.append(("EA101-data", "512 samples each resized and normalised on the CPU into ResNet-50 bf16: num_workers 0 vs 4",
                   "one epoch", worker_variant("cpu", 0), worker_variant("cpu", 4)))
    claims.append(("EA103-data", "the same CPU-built samples, 4 workers, 3 epochs: workers restarted each epoch vs persistent_workers=True",
                   "3 epochs", worker_variant("cpu", 4, False, 3), worker_variant("cpu", 4, True, 3)))

    # --- EA203 training-without-compile (steady state; compile time reported separately) ------
    if not args.skip_compile:
        def compile_variant(compiled):
            def make():
                m = gpt(layers=4)
                info = {}
                if compiled:
                    t0 = time.perf_counter()
                    cm = torch.compile(m)
                    run = train_steps(cm, lambda: (seq, seq), 10, autocast_dtype=torch.bfloat16)
                    run()  # the compilation itself
                    torch.cuda.synchronize()
                    info["compile_s"] = round(time.perf_counter() - t0, 1)
                else:
                    run = train_steps(m, lambda: (seq, seq), 10, autocast_dtype=torch.bfloat16)

                def timed():
                    run()
                    return dict(info)
                return noop, timed
            return make
        claims.append(("EA203", "4-layer transformer bf16 training step: eager vs torch.compile (after compiling)",
                       "10 steps", compile_variant(False), compile_variant(True)))
    return claims


if __name__ == "__main__":
    sys.exit(main())
