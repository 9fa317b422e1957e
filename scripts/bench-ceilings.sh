#!/usr/bin/env bash
# Reproduces the figures of docs/bench-ceilings.md ("Step 1 — ceilings"):
#   - `efficiency-audit ceilings` wall time (release build), median of RUNS runs;
#   - CPU measured FP32 vs its theoretical peak;
#   - disk QD1/QD4 sequential read and write vs fio (same folder, 1 MiB blocks, direct=1,
#     libaio iodepth=4 for QD4, psync for QD1), run alternately with the tool;
#   - memory bandwidth beside mbw (memcpy) and sysbench memory.
# Needs: fio mbw sysbench (apt-get install -y fio mbw sysbench), python3 with PyYAML.
# Usage: scripts/bench-ceilings.sh [RUNS]   (BENCH_DIR=folder on the filesystem to test)
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${1:-5}
BENCH_DIR=${BENCH_DIR:-$PWD/target/bench-ceilings}
BIN=${BIN:-target/release/efficiency-audit}
for tool in fio mbw sysbench python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y fio mbw sysbench" >&2; exit 1; }
done
[ -x "$BIN" ] || cargo build --release
WS=$BENCH_DIR/ws
OUT=$BENCH_DIR/out
mkdir -p "$WS" "$OUT"
RESULTS=$BENCH_DIR/results.tsv
: >"$RESULTS"
trap 'rm -f "$WS/fio.tmp"' EXIT

record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$RESULTS"; }

fio_bw() { # rw engine depth -> MB/s (decimal)
  fio --name=seq --directory="$WS" --filename=fio.tmp --rw="$1" --bs=1M --size=512M \
      --direct=1 --ioengine="$2" --iodepth="$3" --numjobs=1 --end_fsync=1 \
      --output-format=json 2>/dev/null |
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; k="write" if j["write"]["bw_bytes"] else "read"; print(j[k]["bw_bytes"]/1e6)'
}

echo "machine: $(nproc) CPUs, $(uname -r); folder: $WS ($(stat -f -c %T "$WS"))"
for i in $(seq "$RUNS"); do
  start=$(date +%s.%N)
  "$BIN" ceilings --quiet --workspace "$WS" --output-dir "$OUT" >/dev/null
  end=$(date +%s.%N)
  record ceilings_wall_s "$i" "$(python3 -c "print($end - $start)")"
  python3 - "$OUT/theoretical_limits.yaml" "$i" >>"$RESULTS" <<'EOF'
import re, sys, yaml
y = yaml.safe_load(open(sys.argv[1])); i = sys.argv[2]
rows = {
    "cpu_clock_ghz": y["cpu"]["clock_ghz_measured"],
    "cpu_theoretical_gflops": y["cpu"]["fp32_gflops"]["theoretical"],
    "cpu_measured_gflops": y["cpu"]["fp32_gflops"]["measured"],
    "mem_measured_gbs": y["memory"]["bandwidth_gbs"]["measured"],
    "mem_copy_gbs": float(re.search(r"copy ([\d.]+)", y["memory"]["bandwidth_gbs"]["method"]).group(1)),
    "mem_triad_gbs": float(re.search(r"triad ([\d.]+)", y["memory"]["bandwidth_gbs"]["method"]).group(1)),
    "tool_read_qd1_mbs": y["disk"]["read_mbs"]["qd1"]["median"],
    "tool_read_qd4_mbs": y["disk"]["read_mbs"]["qd4"]["median"],
    "tool_write_qd1_mbs": y["disk"]["write_mbs"]["qd1"]["median"],
    "tool_write_qd4_mbs": y["disk"]["write_mbs"]["qd4"]["median"],
}
for k, v in rows.items():
    print(f"{k}\t{i}\t{v}")
EOF
  record fio_write_qd4_mbs "$i" "$(fio_bw write libaio 4)"
  record fio_read_qd4_mbs "$i" "$(fio_bw read libaio 4)"
  record fio_write_qd1_mbs "$i" "$(fio_bw write psync 1)"
  record fio_read_qd1_mbs "$i" "$(fio_bw read psync 1)"
  rm -f "$WS/fio.tmp"
  # mbw: memcpy of 256 MiB arrays, 3 runs; it counts bytes copied (STREAM copy counts 2x).
  record mbw_memcpy_mibs "$i" "$(mbw -q -n 3 -t0 256 | awk '/^AVG/ {print $(NF-1)}')"
  record sysbench_write_2t_mibs "$i" "$(sysbench memory --threads=2 --memory-block-size=1M --memory-total-size=20G --memory-oper=write run | awk '/MiB\/sec/ {gsub(/[(]/, "", $4); print $4}')"
  record sysbench_read_2t_mibs "$i" "$(sysbench memory --threads=2 --memory-block-size=1M --memory-total-size=20G --memory-oper=read run | awk '/MiB\/sec/ {gsub(/[(]/, "", $4); print $4}')"
done

python3 - "$RESULTS" <<'EOF'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    key, _, value = line.rstrip("\n").split("\t")
    if value:
        runs[key].append(float(value))
med = {k: statistics.median(v) for k, v in runs.items()}
print(f"{'figure':28} {'median':>10} {'min':>10} {'max':>10}  runs")
for k, v in runs.items():
    print(f"{k:28} {med[k]:10.2f} {min(v):10.2f} {max(v):10.2f}  {len(v)}")
def ratio(a, b):
    return f"{med[a] / med[b]:.2f}" if med.get(b) else "n/a"
print()
print("cpu measured / theoretical      ", ratio("cpu_measured_gflops", "cpu_theoretical_gflops"))
print("disk write QD4 tool / fio       ", ratio("tool_write_qd4_mbs", "fio_write_qd4_mbs"))
print("disk read  QD4 tool / fio       ", ratio("tool_read_qd4_mbs", "fio_read_qd4_mbs"))
print("disk write QD1 tool / fio       ", ratio("tool_write_qd1_mbs", "fio_write_qd1_mbs"))
print("disk read  QD1 tool / fio       ", ratio("tool_read_qd1_mbs", "fio_read_qd1_mbs"))
if "mbw_memcpy_mibs" in med:
    print("memory copy (STREAM 2x bytes) vs mbw memcpy x2:", f"{med['mem_copy_gbs']:.1f} GB/s vs {2 * med['mbw_memcpy_mibs'] * 2**20 / 1e9:.1f} GB/s")
EOF
