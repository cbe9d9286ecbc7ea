#!/usr/bin/env bash
# The README's examples (examples/kernels: a kernel and the wrapper that launches it, no `class Model`,
# no spec) through `xeforge stage autotune FILE --device cuda --format json`, every setting default, on
# one NVIDIA GPU. The problem is inferred from the code, as for a user's first run.
#
# Needs: a prebuilt binary ($XEFORGE_BIN, default ./target/release/xeforge), python3 with torch and triton.
# Writes into "$OUT" (default ./tests/bench/.work): examples_h200.md (the table; copy it to
# tests/bench/results/) and examples.log (each stage's stderr and JSON).
# FILES: other files to stage the same way (paths from the repository root), e.g. launch-form fixtures
# whose problem is also inferred from the code; `path#kernel` names the kernel of a file that has
# several; default the README's examples.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${OUT:-$ROOT/tests/bench/.work}
export XEFORGE_BIN=${XEFORGE_BIN:-$ROOT/target/release/xeforge}
export XEFORGE_PYTHON=${XEFORGE_PYTHON:-$(command -v python3)}
export XEFORGE_HARNESS_PATH=${XEFORGE_HARNESS_PATH:-$ROOT/server/harness}
[ -x "$XEFORGE_BIN" ] || { echo "no xeforge binary at $XEFORGE_BIN"; exit 2; }
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/xeforge-examples.XXXXXX")
printf '[project]\nname = "examples"\n' > "$WORK/pyproject.toml"
device=$("$XEFORGE_PYTHON" -c 'import torch, triton; print(f"{torch.cuda.get_device_name(0)}; torch {torch.__version__}; triton {triton.__version__}")' 2>&1)
: > "$OUT/examples.log"
{
  echo "# The README's examples through the autotune stage: $device"
  echo
  echo '`xeforge stage autotune FILE --device cuda --format json`, every setting default; no spec, no `class Model`: the problem is inferred from the wrapper.'
  echo
  echo "| file | outcome | stage s | configs measured | speedup (95% interval) | summary |"
  echo "|---|---|---|---|---|---|"
} > "$OUT/examples_h200.md"
files=()
if [ -n "${FILES:-}" ]; then for f in $FILES; do files+=("$ROOT/$f"); done; else files=("$ROOT"/examples/kernels/*.py); fi
for f in "${files[@]}"; do
  kernel=()
  case "$f" in *'#'*) kernel=(--kernel "${f##*#}"); f=${f%#*} ;; esac
  name=$(basename "$f")
  cp "$f" "$WORK/$name"
  t0=$(date +%s%N)
  (cd "$WORK" && timeout 240 "$XEFORGE_BIN" stage autotune "$name" "${kernel[@]}" --device cuda --format json) > "$WORK/$name.json" 2> "$WORK/$name.err"
  rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 )); secs="$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
  { echo "==== $name (exit $rc, $secs s)"; cat "$WORK/$name.err"; cat "$WORK/$name.json"; echo; } >> "$OUT/examples.log"
  "$XEFORGE_PYTHON" - "$WORK/$name.json" "$name" "$secs" "$rc" >> "$OUT/examples_h200.md" <<'PY'
import json, sys
path, name, secs, rc = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
try:
    r = json.load(open(path))
except ValueError:
    print(f"| {name} | failed (exit {rc}) | {secs:.1f} | – | – | see examples.log |")
    raise SystemExit
rounds = [x for x in r.get("rounds", []) if x.get("verdict")]
ci = r.get("speedup_ci95") or (r.get("evaluation") or {}).get("timing", {}).get("speedup_ci95")
sp = r.get("speedup")
shown = "–" if sp is None else f"{sp:.2f}×" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
summary = (r.get("summary") or "").replace("|", "/")[:160]
print(f"| {name} | {r.get('status', '?')} | {secs:.1f} | {len(rounds)} | {shown} | {summary} |")
PY
done
cat "$OUT/examples_h200.md"
