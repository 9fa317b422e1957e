#!/usr/bin/env bash
# Speed figures of `efficiency-audit analyze` (docs/bench-analyze.md):
#   1. the CPython standard library (every .py outside site-packages), ours against
#      `ruff check --no-cache --isolated --select PERF,NPY,PD`, alternating runs, medians;
#   2. per-file latency on tests/fixtures/bench/train_1000.py (the whole command, and the
#      analyzer alone through `cargo bench --bench analyze_file`);
#   3. one 50 MB generated file with the size cap lifted (time and peak memory).
#
# Usage: scripts/bench-analyze.sh [RUNS]   (RUNS per tool, default 7; needs python3, pip)
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS="${1:-7}"
WORK="$(mktemp -d /tmp/ea-bench.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

command -v ruff >/dev/null || python3 -m pip install --quiet ruff
cargo build --release --quiet
BIN="$PWD/target/release/efficiency-audit"

echo "## machine"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) logical CPUs"
echo "kernel: $(uname -r)"
echo "efficiency-audit: $("$BIN" --version)"
echo "ruff: $(ruff --version)"
echo "python: $(python3 --version)"

STDLIB="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
TREE="$WORK/stdlib"
python3 - "$STDLIB" "$TREE" <<'EOF'
import pathlib, shutil, sys
src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for path in src.rglob("*.py"):
    rel = path.relative_to(src)
    if "site-packages" in rel.parts or not path.is_file():
        continue
    (dst / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, dst / rel)
EOF
FILES=$(find "$TREE" -name '*.py' | wc -l)
LINES=$(find "$TREE" -name '*.py' -print0 | xargs -0 cat | wc -l)
echo
echo "## tree: $STDLIB → $FILES files, $LINES lines"

# Wall time of one command in seconds (ms resolution), output discarded.
wall() {
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    echo "scale=3; ($end - $start) / 1000000000" | bc
}

ours=()
theirs=()
# One warm-up each (page cache), then alternate so drift hits both tools alike.
wall "$BIN" analyze --quiet --output-dir "$WORK/out" "$TREE" >/dev/null
wall ruff check --no-cache --isolated --select PERF,NPY,PD "$TREE" >/dev/null
for i in $(seq "$RUNS"); do
    ours+=("$(wall "$BIN" analyze --quiet --output-dir "$WORK/out" "$TREE")")
    theirs+=("$(wall ruff check --no-cache --isolated --select PERF,NPY,PD "$TREE")")
    echo "run $i: efficiency-audit ${ours[-1]} s, ruff ${theirs[-1]} s"
done

python3 - "${ours[*]}" "${theirs[*]}" <<'EOF'
import statistics, sys
ours = [float(x) for x in sys.argv[1].split()]
ruff = [float(x) for x in sys.argv[2].split()]
ratios = [o / r for o, r in zip(ours, ruff)]
print(f"median efficiency-audit: {statistics.median(ours):.3f} s  (min {min(ours):.3f}, max {max(ours):.3f})")
print(f"median ruff:             {statistics.median(ruff):.3f} s  (min {min(ruff):.3f}, max {max(ruff):.3f})")
print(f"median ratio ours/ruff (per alternating pair): {statistics.median(ratios):.2f}")
EOF
"$BIN" analyze --output-dir "$WORK/out" "$TREE" 2>&1 >/dev/null | grep -E '^analysed' || true
echo "warnings: $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["warnings"]))' "$WORK/out/analysis.json")"

echo
echo "## per-file latency: tests/fixtures/bench/train_1000.py ($(wc -l <tests/fixtures/bench/train_1000.py) lines)"
single=()
for i in $(seq 20); do
    single+=("$(wall "$BIN" analyze --quiet --output-dir "$WORK/one" tests/fixtures/bench/train_1000.py)")
done
python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print(f"whole command (process start, analysis, three reports written), median of {len(v)}: {statistics.median(v)*1000:.0f} ms")' "${single[@]}"
cargo bench --quiet --bench analyze_file 2>/dev/null

echo
echo "## one 50 MB file (generated: copies of train_1000.py), cap lifted"
python3 - "$WORK/big/huge.py" <<'EOF'
import pathlib, sys
src = pathlib.Path("tests/fixtures/bench/train_1000.py").read_text()
out = pathlib.Path(sys.argv[1]); out.parent.mkdir(parents=True)
n = 50_000_000 // len(src.encode()) + 1
out.write_text(src * n)
print(f"{out.stat().st_size / 1e6:.1f} MB, {src.count(chr(10)) * n} lines")
EOF
/usr/bin/time -f "wall %e s, peak RSS %M KiB" "$BIN" analyze --quiet --max-file-size 64 \
    --output-dir "$WORK/big-out" "$WORK/big/huge.py" >/dev/null
