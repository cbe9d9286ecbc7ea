#!/usr/bin/env bash
# The autotune stage end to end on an NVIDIA GPU, on five naive kernels (GEMM, GEMM+epilogue, softmax,
# layer norm, attention forward), each verified and timed by the real harness.
#
# Needs: a prebuilt binary (default ./target/release/xeforge, or $XEFORGE_BIN), python3 with torch and
# triton, the repository tree (for server/harness). No Rust, no network.
# Writes to "$OUT" (default ./tests/bench/.work): autotune_h200.md (the table), per-kernel JSON and logs,
# the tuned kernel files and the evidence records (.xeforge/runs). Exit status 1 if any kernel ended slower.
#   MAX_CONFIGS  configs measured per kernel (default 8)     FAMILY  spec family (default bench-gpu)
#   PER_KERNEL_S wall-clock limit per kernel (default 600)
#   KERNELS      which kernels (default: gemm gemm_epilogue softmax layernorm attention)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${OUT:-$ROOT/tests/bench/.work}
BIN=${XEFORGE_BIN:-$ROOT/target/release/xeforge}
MAX_CONFIGS=${MAX_CONFIGS:-8}
FAMILY=${FAMILY:-bench-gpu}
KERNELS=${KERNELS:-gemm gemm_epilogue softmax layernorm attention}
export XEFORGE_PYTHON=${XEFORGE_PYTHON:-$(command -v python3)}
export XEFORGE_HARNESS_PATH=${XEFORGE_HARNESS_PATH:-$ROOT/server/harness}

[ -x "$BIN" ] || { echo "no xeforge binary at $BIN (build one with cargo build --release, or set XEFORGE_BIN)"; exit 2; }
mkdir -p "$OUT/work"
# A workspace of its own: evidence records land in $OUT/work/.xeforge/runs and come back with $OUT.
printf '[project]\nname = "autotune-bench"\n' > "$OUT/work/pyproject.toml"
cp "$ROOT"/tests/bench/stages/kernels/*.py "$ROOT"/tests/bench/stages/kernels/*.yaml "$OUT/work/"

"$XEFORGE_PYTHON" - <<'PY' > "$OUT/device.txt" 2>&1 || true
import torch, triton, platform
print(f"{torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no CUDA device'}; torch {torch.__version__}; triton {triton.__version__}; python {platform.python_version()}")
PY

TABLE="$OUT/autotune_h200.md"
{
  echo "# Autotune stage on $(cat "$OUT/device.txt")"
  echo
  echo "\`xeforge stage autotune FILE --device cuda --family $FAMILY --max-configs $MAX_CONFIGS --apply\` on naive starting configs."
  echo "Speedup = original ÷ tuned kernel time as the harness measured it (median of interleaved A/B runs, 95% interval);"
  echo "\"unchanged\" means no config verified faster, so the file was left as it was."
  echo
  echo "| kernel | outcome | speedup | 95% interval | runs | configs measured | seconds |"
  echo "|---|---|---|---|---|---|---|"
} > "$TABLE"

SLOWER=0
for k in $KERNELS; do
  t0=$SECONDS
  timeout "${PER_KERNEL_S:-600}" "$BIN" stage autotune "$OUT/work/$k.py" --device cuda --family "$FAMILY" --max-configs "$MAX_CONFIGS" \
      --timeout 300 --format json --apply > "$OUT/$k.json" 2> "$OUT/$k.log"
  rc=$?
  secs=$((SECONDS - t0))
  row=$("$XEFORGE_PYTHON" - "$OUT/$k.json" "$k" "$rc" "$secs" <<'PY'
import json, sys
path, name, rc, secs = sys.argv[1:5]
try:
    r = json.load(open(path))
except Exception:
    print(f"| {name} | failed (exit {rc}, see {name}.log) | – | – | – | – | {secs} |")
    sys.exit(0)
measured = sum(1 for x in r.get("rounds", []) if x.get("verdict"))
if r.get("changed"):
    lo, hi = r.get("speedup_ci95") or [None, None]
    print(f"| {name} | {r['status']} | {r['speedup']:.2f}× | [{lo:.2f}, {hi:.2f}] | {r.get('runs')} | {measured} | {secs} |")
else:
    print(f"| {name} | unchanged ({r['status']}) | 1.00× (file kept) | – | – | {measured} | {secs} |")
PY
)
  echo "$row" >> "$TABLE"
  # A changed file must be verified faster: the interval's lower end above 1.
  "$XEFORGE_PYTHON" - "$OUT/$k.json" <<'PY' || SLOWER=1
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
if r.get("changed") and not (r.get("speedup_ci95") and r["speedup_ci95"][0] > 1.0):
    sys.exit(1)
PY
done
cp -r "$OUT/work" "$OUT/tuned" 2>/dev/null || true
echo >> "$TABLE"
[ $SLOWER -eq 0 ] && echo "No kernel ended slower than it started." >> "$TABLE" || echo "**A kernel ended slower than it started.**" >> "$TABLE"
cat "$TABLE"
exit $SLOWER
