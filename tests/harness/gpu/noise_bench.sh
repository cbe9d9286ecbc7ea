#!/usr/bin/env bash
# Timing noise of the separated harness on one GPU, with the device's clocks logged beside it:
#
#   OUT=dir tests/harness/gpu/noise_bench.sh [extra harness_separation.py arguments]
#
# Runs tests/bench/harness_separation.py with XEFORGE_HARNESS_DIAG=1 (each timed batch's own account
# of launch issue, device time of its calls and digest, and each pair's wall clock, in the raw
# records; earlier harnesses ignore the variable) while `nvidia-smi` samples SM and memory clocks,
# power and throttle reasons every 100 ms into $OUT/clocks.csv. Earlier harness packages go in
# .bench-before/ (e.g. `git archive 5e5e539 server/harness | tar -x -C .bench-before/inproc`).
# Writes $OUT/noise.md (the table), $OUT/raw.jsonl (every timing object), $OUT/clocks.csv, $OUT/log.txt.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
OUT="${OUT:-/tmp/xeforge-noise}"
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
nvidia-smi -L 2>/dev/null
python3 -c 'import torch, triton; print(f"torch {torch.__version__}, triton {triton.__version__}")'
clocks=""
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu,clocks_event_reasons.active \
        --format=csv,noheader -lms 100 > "$OUT/clocks.csv" 2>&1 &
    clocks=$!
fi
export XEFORGE_HARNESS_DIAG=1 PYTHONUNBUFFERED=1
timeout "${NOISE_S:-540}" python3 "$repo/tests/bench/harness_separation.py" --device "${DEVICE:-cuda}" --rounds "${ROUNDS:-1}" \
    --out "$OUT/noise.md" --raw "$OUT/raw.jsonl" "$@" 2>&1 | grep -v "^USDT"
rc=${PIPESTATUS[0]}
[ -n "$clocks" ] && kill "$clocks" 2>/dev/null
exit "$rc"
