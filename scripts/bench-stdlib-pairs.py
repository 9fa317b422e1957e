#!/usr/bin/env python3
"""`analyze` against ruff on this interpreter's standard library, in alternating pairs.

The quick form of scripts/bench-analyze.sh's first figure, for a machine without a build
toolchain (the lent GPU machine): copies every .py of the standard library outside
site-packages to /tmp/stdlib, warms both tools up once, then times RUNS alternating pairs and
prints each tool's runs, their medians and the median per-pair ratio.

    python3 scripts/bench-stdlib-pairs.py [--bin target/release/efficiency-audit] [--ruff ruff] [--runs 7]
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sysconfig
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/efficiency-audit")
    ap.add_argument("--ruff", default="ruff")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tree", default="/tmp/stdlib")
    args = ap.parse_args()

    src = pathlib.Path(sysconfig.get_paths()["stdlib"])
    dst = pathlib.Path(args.tree)
    n = 0
    for p in src.rglob("*.py"):
        rel = p.relative_to(src)
        if "site-packages" in rel.parts or not p.is_file():
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dst / rel)
        n += 1
    print(f"stdlib {src}: {n} files; {os.cpu_count()} CPUs", flush=True)

    ours = [args.bin, "analyze", "--quiet", "--output-dir", "/tmp/ea-pairs-out", str(dst)]
    ruff = [args.ruff, "check", "--no-cache", "--isolated", "--select", "PERF,NPY,PD", str(dst)]

    def wall(cmd):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return time.perf_counter() - t

    wall(ours)
    wall(ruff)
    a, b = [], []
    for _ in range(args.runs):
        a.append(wall(ours))
        b.append(wall(ruff))
    ratios = [x / y for x, y in zip(a, b)]
    print("ours", [round(x, 3) for x in a])
    print("ruff", [round(x, 3) for x in b])
    print(f"median ours {statistics.median(a):.3f} s, ruff {statistics.median(b):.3f} s, "
          f"median per-pair ratio {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
