#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU and PyTorch, build the release binary, measure
# the ceilings, audit the PyTorch examples on CUDA, and print one table: the measured ceilings
# beside the data/gpu_specs.csv row of the detected GPU, then each example's verdict and
# validated speed-ups with their 95 % intervals.
#
#   scripts/gpu-check.sh [--allow-cpu] [--dev] [--bin PATH] [--budget DURATION] [--out DIR]
#
# Needs: cargo, python3 that imports torch (put a virtual environment first on PATH), and for
# the real check an NVIDIA driver (nvidia-smi) with torch.cuda.is_available().
# --allow-cpu: dry-run the same flow on a machine without a GPU (the examples then run on the
# CPU; the GPU rows say "none"). Without it, a missing GPU is an error (exit 2).
# --dev: use the dev-profile binary (`cargo build`) instead of release, for a quick dry run.
# --bin PATH: use this prebuilt binary and build nothing (a GPU machine without cargo).
# --budget DURATION: cap each example's benchmark budget (e.g. 90s) below its config's.
# --out DIR: where the reports go (default target/gpu-check).
set -euo pipefail
cd "$(dirname "$0")/.."

allow_cpu=0
profile=release
out=target/gpu-check
prebuilt=""
budget=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --allow-cpu) allow_cpu=1 ;;
    --dev) profile=dev ;;
    --out) out="${2:?--out needs a folder}"; shift ;;
    --bin) prebuilt="${2:?--bin needs a path}"; shift ;;
    --budget) budget="${2:?--budget needs a duration such as 90s}"; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

fail() { echo "gpu-check: $*" >&2; exit 2; }

python3 -c "import torch" 2>/dev/null \
  || fail "python3 cannot import torch: put a virtual environment with torch first on PATH (e.g. python3 -m venv v && v/bin/pip install torch && PATH=\$PWD/v/bin:\$PATH)"
cuda=$(python3 -c "import torch; print(int(torch.cuda.is_available()))")
gpu_name=""
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
fi
if [[ -z "$gpu_name" || "$cuda" != 1 ]]; then
  why="no NVIDIA GPU visible (nvidia-smi -L fails or lists none)"
  [[ -n "$gpu_name" ]] && why="nvidia-smi sees '$gpu_name' but torch.cuda.is_available() is False (a CPU-only torch wheel, or a driver older than the wheel's CUDA)"
  if [[ $allow_cpu == 1 ]]; then
    echo "gpu-check: $why; --allow-cpu: dry run on the CPU"
  else
    fail "$why. Run this on a GPU machine (in Docker: --gpus all), or pass --allow-cpu for a CPU dry run"
  fi
fi

if [[ -n $prebuilt ]]; then
  [[ -x $prebuilt ]] || fail "--bin $prebuilt is not an executable file"
  bin=$prebuilt
else
  echo "== build ($profile)"
  if [[ $profile == release ]]; then
    cargo build --release --quiet
    bin=target/release/efficiency-audit
  else
    cargo build --quiet
    bin=target/debug/efficiency-audit
  fi
fi
rm -rf "$out"
mkdir -p "$out"

echo "== ceilings"
"$bin" --output-dir "$out/ceilings" ceilings --workspace "$out"

declare -a examples=(torch-train torch-infer)
for ex in "${examples[@]}"; do
  echo "== audit examples/$ex"
  start=$(date +%s)
  config=("examples/$ex/efficiency-audit.yml")
  if [[ -n $budget ]]; then
    sed "s/^  budget: .*/  budget: $budget/" "examples/$ex/efficiency-audit.yml" > "$out/$ex.yml"
    config=("$out/$ex.yml")
  fi
  # The audit's exit status is 0 for RED and GREEN (fail-on: never); 2 when the tool failed.
  "$bin" --output-dir "$out/$ex" --config "${config[0]}" audit "examples/$ex" | tail -n 3
  echo "   ($(( $(date +%s) - start )) s)"
done

echo
python3 - "$out" "${examples[@]}" <<'PY'
import csv, json, pathlib, sys

out = pathlib.Path(sys.argv[1])
examples = sys.argv[2:]
report = json.loads((out / examples[0] / "report.json").read_text())
ceilings = report.get("ceilings") or {}
gpus = ceilings.get("gpus") or []

rows = [r for r in csv.reader(line for line in open("data/gpu_specs.csv") if not line.startswith("#"))]
header, specs = rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]

def spec_for(gpu):
    pci = (gpu.get("pci_device_id") or "").lower().removeprefix("0x")
    for s in specs:
        if s["nvml_name"] == gpu.get("name") or (pci and s["pci_device_id"].lower() == pci):
            return s
    return None

def fig(d, key):
    v = (d or {}).get(key)
    return "-" if v is None else f"{v:g}"

print("| ceiling | measured | datasheet (data/gpu_specs.csv) |")
print("|---|---:|---:|")
cpu = ceilings.get("cpu") or {}
print(f"| CPU fp32 GFLOPS | {fig(cpu.get('fp32_gflops'), 'measured')} | {fig(cpu.get('fp32_gflops'), 'theoretical')} (theoretical) |")
if not gpus:
    print("| GPU | none | - |")
for g in gpus:
    s = spec_for(g) or {}
    print(f"| GPU {g.get('index')} | {g.get('name')} | {s.get('nvml_name', 'no row for this GPU')} |")
    for label, key, col in [
        ("fp32 TFLOPS", "fp32_tflops", "fp32"),
        ("tf32 TFLOPS", "tf32_tflops", "tf32"),
        ("fp16/bf16 TFLOPS", "fp16_bf16_tflops", "fp16_bf16"),
        ("memory GB/s", "mem_bandwidth_gbs", "mem_bw_gbs"),
    ]:
        print(f"| {label} | {fig(g.get(key), 'measured')} | {s.get(col) or '-'} |")
    print(f"| host→device GB/s | {fig(g, 'h2d_gbs')} | - |")

print()
print("| example | verdict | strategy | speed-up | 95 % CI | status |")
print("|---|---|---|---:|---|---|")
for ex in examples:
    r = json.loads((out / ex / "report.json").read_text())
    v = r.get("verdict") or {}
    verdict = f"{v.get('value', '?')} ({v.get('basis', '?')}, {v.get('bottleneck') or '-'})"
    exps = r.get("experiments") or []
    if not exps:
        print(f"| {ex} | {verdict} | - | - | - | no experiment ran |")
    for e in exps:
        name = e["strategy"] + (f" {e['variant']}" if e.get("variant") else "")
        sp = "-" if e.get("speedup") is None else f"{e['speedup']:.2f}x"
        ci = e.get("ci95") or []
        ci = f"[{ci[0]:.2f}, {ci[1]:.2f}]" if len(ci) == 2 else "-"
        print(f"| {ex} | {verdict} | {name} | {sp} | {ci} | {e.get('status')} |")
print()
print(f"reports: {out}/<example>/final_report.html")
PY
