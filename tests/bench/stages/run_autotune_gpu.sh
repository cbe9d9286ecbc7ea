#!/usr/bin/env bash
# The autotune stage on the generalisation suite (tests/bench/stages/general: 23 naive kernels, written as
# users write them) on one NVIDIA GPU. For every kernel, general_bench.py runs the stage (real harness,
# --device cuda) and then, in one process, times the naive file, the stage's file, every config of the
# stage's pruned space (the exhaustive sweep it is judged against) and the PyTorch equivalent.
#
# Needs: a prebuilt binary (default ./target/release/xeforge, or $XEFORGE_BIN), python3 with torch and
# triton (PyYAML optional), the repository tree (server/harness). No Rust, no network.
# Writes into "$OUT" (default ./tests/bench/.work), at most 6 files:
#   autotune_general_h200.md  the table (copy it to tests/bench/results/)   results.json  every figure
#   driver.log  progress      stage.log  each stage's stderr and JSON      device.txt
#   tuned.tar.gz  the tuned files and the stages' evidence records (.xeforge/runs)
# Environment:
#   STAGE_BUDGET  --budget for the stage, seconds (default 15; 0 = the stage's default, 60 s). The one
#                 setting changed from the defaults: 22 stages at up to 60 s each do not fit in 9 minutes.
#   DEADLINE_S    no kernel is started after this many seconds (default 480); the table lists those skipped
#   KERNELS       a subset, in order (default: all 23, kinds interleaved)
#   FAMILY        spec family timed (default bench-gpu)
#   XEFORGE_AUTOTUNE_SCREEN  `timed`: the stage's screen checked on the timed family, where its first
#                 call searches (default `check`: checked on the check family without searches, the
#                 timed shape called once untimed for the autotuner's search)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${OUT:-$ROOT/tests/bench/.work}
export XEFORGE_BIN=${XEFORGE_BIN:-$ROOT/target/release/xeforge}
export XEFORGE_PYTHON=${XEFORGE_PYTHON:-$(command -v python3)}
export XEFORGE_HARNESS_PATH=${XEFORGE_HARNESS_PATH:-$ROOT/server/harness}
export STAGE_BUDGET=${STAGE_BUDGET:-15} DEADLINE_S=${DEADLINE_S:-480}

[ -x "$XEFORGE_BIN" ] || { echo "no xeforge binary at $XEFORGE_BIN (cargo build --release, or set XEFORGE_BIN)"; exit 2; }
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/xeforge-autotune-bench.XXXXXX")
# One workspace: every stage's evidence record lands in $WORK/.xeforge/runs.
printf '[project]\nname = "autotune-bench"\n' > "$WORK/pyproject.toml"
: > "$OUT/stage.log"

"$XEFORGE_PYTHON" - <<'PY' > "$OUT/device.txt" 2>&1 || true
import torch, triton, platform
print(f"{torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no CUDA device'}; torch {torch.__version__}; triton {triton.__version__}; python {platform.python_version()}")
PY
cat "$OUT/device.txt"

timeout $((DEADLINE_S + 80)) "$XEFORGE_PYTHON" "$ROOT/tests/bench/stages/general_bench.py" \
    "$ROOT/tests/bench/stages/general" "$WORK" "$OUT" 2>&1 | tee "$OUT/driver.log"
rc=${PIPESTATUS[0]}
tar czf "$OUT/tuned.tar.gz" -C "$WORK" --exclude=space --exclude='__pycache__' . 2>/dev/null || true
exit "$rc"
