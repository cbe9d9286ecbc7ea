#!/usr/bin/env bash
# The autotune stage run several times on a few kernels of the generalisation suite, each timed comparison
# of the harness logged in full (XEFORGE_HARNESS_DIAG_LOG: per-pair times, each side's issue and device
# time): for finding why the stage judged a config differently from the harness run on its own
# (tests/bench/stages/timing_gap.py) or from do_bench.
#
#   OUT=dir REPEAT=2 BUDGETS="15 0" tests/bench/stages/stage_repeat.sh KERNEL...
#
# BUDGETS: the stage's --budget values tried (0: its default). Writes OUT/<kernel>-b<budget>-<k>.json
# (the stage's JSON), .err (its progress), OUT/diag.jsonl (every timing, tagged with its run) and
# OUT/summary.md (each run's rounds: config, verdict, speedup). Needs a GPU, a prebuilt binary
# ($XEFORGE_BIN), python3 with torch and triton.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${OUT:-$ROOT/tests/bench/.work}
BIN=$(realpath "${XEFORGE_BIN:-$ROOT/target/release/xeforge}")
REPEAT=${REPEAT:-2}
BUDGETS=${BUDGETS:-0}
export XEFORGE_PYTHON=${XEFORGE_PYTHON:-$(command -v python3)}
export XEFORGE_HARNESS_PATH=${XEFORGE_HARNESS_PATH:-$ROOT/server/harness}
export XEFORGE_HARNESS_DIAG=1 XEFORGE_HARNESS_DIAG_LOG=$OUT/diag.jsonl
mkdir -p "$OUT"
: > "$OUT/summary.md"
# MONITOR=1: every 0.5 s, who holds the GPU and the busiest processes (OUT/monitor.log), to see what
# else runs while a comparison is timed.
if [ "${MONITOR:-0}" = 1 ]; then
  (while :; do
     echo "@ $(date +%s.%N)"
     nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader 2>/dev/null
     ps -eo pid,ppid,pcpu,psr,comm --sort=-pcpu --no-headers | head -6
     sleep 0.5
   done) > "$OUT/monitor.log" 2>&1 &
  MON=$!
  trap 'kill $MON 2>/dev/null' EXIT
fi
for k in "$@"; do
  for b in $BUDGETS; do
    for i in $(seq 1 "$REPEAT"); do
      W=$(mktemp -d "${TMPDIR:-/tmp}/xeforge-repeat.XXXXXX")
      printf '[project]\nname = "repeat"\n' > "$W/pyproject.toml"
      cp "$ROOT/tests/bench/stages/general/$k.py" "$ROOT/tests/bench/stages/general/$k.yaml" "$W/"
      tag="$k-b$b-$i"
      echo "{\"run\": \"$tag\", \"at\": $(date +%s)}" >> "$OUT/diag.jsonl"
      args=(stage autotune "$W/$k.py" --device "${DEVICE:-cuda}" --family "${FAMILY:-bench-gpu}" --format json)
      [ "$b" != 0 ] && args+=(--budget "$b")
      start=$SECONDS
      (cd "$W" && "$BIN" "${args[@]}") > "$OUT/$tag.json" 2> "$OUT/$tag.err"
      took=$((SECONDS - start))
      python3 - "$OUT/$tag.json" "$tag" "$took" >> "$OUT/summary.md" <<'PY'
import json, sys
path, tag, took = sys.argv[1], sys.argv[2], float(sys.argv[3])
try:
    d = json.load(open(path))
except ValueError:
    print(f"## {tag}: no JSON ({took:.0f} s)\n")
    sys.exit(0)
print(f"## {tag}: {d.get('status')} / {d.get('verdict')} in {took:.0f} s\n")
for r in d.get("rounds") or []:
    print(f"- {r.get('detail')}: {r.get('verdict')} {r.get('speedup')} {r.get('speedup_ci95')} runs={r.get('runs')} base={r.get('baseline_us')} cand={r.get('candidate_us')}")
print()
PY
      rm -rf "$W"
    done
  done
done
cat "$OUT/summary.md"
