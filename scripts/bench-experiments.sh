#!/usr/bin/env bash
# Figures of step 4 for docs/bench-experiments.md (BENCHMARKS.md):
#   1. the saturation sampler's own CPU cost, at 100 / 250 / 500 ms intervals;
#   2. this machine's benchmark noise on a small CPU workload, and how many interleaved pairs
#      a 10 % speed-up needs (computed, and simulated on the measured runs);
#   3. a real 10 % speed-up (a candidate doing 10 % less work) run through the sequential rule;
#   2 and 3 twice: by wall time (a), and by a CPU-time metric that ignores CPU contention (b).
# Usage: scripts/bench-experiments.sh [RUNS]   (needs python3 and jq; ~10 min on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/debug/efficiency-audit}
RUNS=${1:-20}
[ -x "$BIN" ] || cargo build
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "machine: $(nproc) CPUs, $(ls /proc | grep -c '^[0-9]') processes, load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
echo
echo "## 1. sampler cost (examples/pipeline, baseline only, 6 runs)"
for ms in 100 250 500; do
  "$BIN" experiment --quiet --warmup 0 --min-runs 6 --max-runs 6 --sample-ms "$ms" \
    --output-dir "$OUT/pipe-$ms" examples/pipeline
  jq -r --arg ms "$ms" '.measured_saturation |
    "interval \($ms) ms: \(.samples) samples over \(.sampled_s*10|round/10) s, sampler CPU \(.sampler_cpu_s*1000|round) ms = \(.sampler_core_fraction*10000|round/100) % of one core"' \
    "$OUT/pipe-$ms/experiments/outcome.json"
done

noise_and_ab() { # $1: label, $2..: extra flags (a metric-regex, or nothing for wall time)
  local label=$1; shift
  echo
  echo "## 2$label. noise of a small CPU workload (tests/fixtures/workloads/spin, $RUNS runs)"
  "$BIN" experiment --quiet --warmup 1 --min-runs 3 --max-runs "$RUNS" "$@" \
    --output-dir "$OUT/noise$label" --bench "python3 spin.py" tests/fixtures/workloads/spin
  jq -r '.baseline | "median \(.summary.median*1000|round/1000), min \(.summary.min*1000|round/1000), max \(.summary.max*1000|round/1000), IQR \((.summary.q3-.summary.q1)*1000|round/1000), cv \(.noise.cv*1000|round/10) %",
    "per-pair log-ratio sd \(.noise.pair_log_sd*1000|round/1000) → pairs for a 10 % speed-up at 80 % power: \(.noise.pairs_for_10pct)",
    "simulated (1000 trials, min-runs 3, max-runs \(.runs|map(select(.side=="baseline"))|length)): detected \(.noise.simulated_10pct.detected*100|round) %, median \(.noise.simulated_10pct.median_pairs) pairs, p90 \(.noise.simulated_10pct.p90_pairs) pairs"' \
    "$OUT/noise$label/experiments/outcome.json"
  echo
  echo "## 3$label. a real 10 % speed-up (N = 3 000 000 → 2 700 000), min-runs 3, max-runs 30"
  "$BIN" experiment --quiet --warmup 1 --min-runs 3 --max-runs 30 --budget 15m "$@" \
    --candidates "$OUT/cands.json" --output-dir "$OUT/ab$label" --bench "python3 spin.py" tests/fixtures/workloads/spin
  jq -r '.results[0] | "\(.status): speed-up \(.speedup*1000|round/1000)×, 95 % CI [\(.ci_low*1000|round/1000), \(.ci_high*1000|round/1000)] after \(.pairs) pairs (decision: \(.decision))"' \
    "$OUT/ab$label/experiments/outcome.json"
}

python3 - "$OUT/cands.json" <<'PY'
import json, sys
src = open("tests/fixtures/workloads/spin/spin.py").read()
new = src.replace("N = 3_000_000", "N = 2_700_000")
assert new != src
json.dump([{"id": "less-work", "variant": None, "applicability": "safe",
            "patch": [{"path": "spin.py", "expected_original": src, "new_text": new}],
            "diff": "-N = 3_000_000\n+N = 2_700_000\n"}], open(sys.argv[1], "w"))
PY
noise_and_ab a                                        # wall time (the default figure)
noise_and_ab b --metric-regex 'speed=([0-9.]+)'       # runs per CPU-second
