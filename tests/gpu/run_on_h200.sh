#!/usr/bin/env bash
# Everything that needs a real GPU, in one call on the lent NVIDIA H200 (see tests/gpu/README.md):
#   1. the autotune stage end to end on five naive kernels (tests/bench/stages/run_autotune_gpu.sh)
#   2. the harness suite with timing (tests/harness/gpu/run_gpu_suite.sh), if time is left
# Results are packed into "$OUT/results.tar.gz" plus the two summary tables, because the device tool
# returns at most 8 files.   BUDGET_S: wall-clock seconds available (default 570).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FINAL=${OUT:?set OUT}
BUDGET_S=${BUDGET_S:-570}
WORK=$(mktemp -d)
t0=$SECONDS
nvidia-smi -L || true

echo "== autotune stage"
OUT=$WORK/autotune MAX_CONFIGS=${MAX_CONFIGS:-4} PER_KERNEL_S=${PER_KERNEL_S:-72} timeout $((BUDGET_S - 200)) bash "$ROOT/tests/bench/stages/run_autotune_gpu.sh"
echo "autotune exit $? after $((SECONDS - t0)) s"
cp "$WORK/autotune/autotune_h200.md" "$FINAL/" 2>/dev/null

left=$((BUDGET_S - (SECONDS - t0)))
if [ $left -gt 150 ]; then
  echo "== harness suite ($left s left)"
  OUT=$WORK/harness timeout $((left - 20)) bash "$ROOT/tests/harness/gpu/run_gpu_suite.sh"
  echo "harness suite exit $?"
  cp "$WORK/harness/summary.json" "$FINAL/harness_summary.json" 2>/dev/null
else
  echo "== harness suite skipped: only $left s left"
fi
tar -C "$WORK" -czf "$FINAL/results.tar.gz" . && ls -la "$FINAL"
