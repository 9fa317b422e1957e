#!/usr/bin/env python3
"""Precision and recall of `efficiency-audit analyze` on a folder of labelled Python files.

A label says "this line must be flagged with this category". Labels come either inline, as a
trailing `# expect: <category>[, <category>...]` on the line (tests/fixtures/corpus*), or from a
TSV file of `file<TAB>line<TAB>category` rows (docs/public-eval/*-labels.tsv, for public scripts
that cannot be committed: fetch the files listed in the matching manifest into FOLDER first).
Anything flagged that is not labelled is a false positive; a finding matches when file, line and
category agree.

Usage:
  scripts/score-labelled.py FOLDER [--bin PATH] [--labels FILE.tsv]
  scripts/score-labelled.py FOLDER --export-labels      # inline labels as TSV, on stdout
"""
import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile


def inline_labels(folder):
    out = set()
    for path in sorted(folder.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            if "# expect:" in line:
                for cat in line.split("# expect:", 1)[1].split(","):
                    if cat.strip():
                        out.add((path.relative_to(folder).as_posix(), n, cat.strip()))
    return out


def tsv_labels(path):
    out = set()
    for row in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
        if row and not row.startswith("#"):
            file, line, cat = row.split("\t")[:3]
            out.add((file, int(line), cat))
    return out


def findings(binary, folder):
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            [binary, "analyze", "--quiet", "--output-dir", out, str(folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        report = pathlib.Path(out, "analysis.json")
        if not report.exists():
            sys.exit(f"error: {binary} wrote no analysis.json (exit {run.returncode}):\n{run.stderr}")
        data = json.loads(report.read_text(encoding="utf-8"))
    got = {}
    for f in data["findings"]:
        rel = pathlib.Path(os.path.relpath(pathlib.Path(folder, f["path"]).resolve(), folder))
        got[(rel.as_posix(), f["line"], f["category"])] = f"{f['rule']} {f['message']}"
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=pathlib.Path)
    ap.add_argument("--bin", default="target/debug/efficiency-audit")
    ap.add_argument("--labels", help="TSV of file, line, category (instead of inline labels)")
    ap.add_argument("--export-labels", action="store_true")
    args = ap.parse_args()
    folder = args.folder.resolve()
    if not folder.is_dir():
        sys.exit(f"error: {folder} is not a folder of .py files")
    if args.export_labels:
        for file, line, cat in sorted(inline_labels(folder)):
            print(f"{file}\t{line}\t{cat}")
        return
    expected = tsv_labels(args.labels) if args.labels else inline_labels(folder)
    got = findings(args.bin, folder)
    per = collections.defaultdict(lambda: [0, 0, 0])
    for key in expected | set(got):
        counts = per[key[2]]
        counts[0 if key in expected and key in got else 1 if key in got else 2] += 1
    print(f"| category | TP | FP | FN |\n|---|---:|---:|---:|")
    total = [0, 0, 0]
    for cat in sorted(per):
        c = per[cat]
        total = [a + b for a, b in zip(total, c)]
        print(f"| {cat} | {c[0]} | {c[1]} | {c[2]} |")
    tp, fp, fn = total
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(f"| **all** | {tp} | {fp} | {fn} |\n\nprecision {precision:.2f}, recall {recall:.2f}")
    mismatches = sorted(expected ^ set(got))
    if mismatches:
        print("\nmismatches:")
    for key in mismatches:
        kind = "FP" if key in got else "FN"
        print(f"  {kind} {key[0]}:{key[1]} {key[2]}" + (f": {got[key]}" if key in got else ""))


if __name__ == "__main__":
    main()
