#!/usr/bin/env bash
# The harness suite on a GPU machine, in one call:
#
#   OUT=/some/dir tests/harness/gpu/run_gpu_suite.sh                          # device cuda
#   OUT=/tmp/dry XEFORGE_TEST_DEVICE=cpu tests/harness/gpu/run_gpu_suite.sh   # dry run here
#
# Uses whatever python3 has (torch, triton; pytest and PyYAML if present). If <repo>/.whl/*.whl exist
# they are installed into /tmp/site first (for machines without PyYAML or pytest and no network).
# Writes into $OUT: suite.log (everything printed), probe.json, pytest.log and pytest*.xml (when pytest is
# there; else summary.json from the pytest-free driver), harness_separation.md when XEFORGE_BEFORE names
# an earlier harness package (the before/after overhead and noise bench, run first on a quiet device;
# XEFORGE_BENCH_SETTINGS adds columns, e.g. "--setting torch-digest:XEFORGE_HARNESS_DIGEST=torch").
# XEFORGE_GPU_PARALLEL=0 leaves out the parallel pytest run (the timing tests still run);
# XEFORGE_GPU_TESTS narrows it (default tests/harness, e.g. "tests/harness/test_adversarial.py tests/harness/test_sweep.py").
# Exit status 0 iff every check passed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
device="${XEFORGE_TEST_DEVICE:-cuda}"
py="${PYTHON:-python3}"
OUT="${OUT:-/tmp/xeforge-gpu-suite}"
mkdir -p "$OUT"
exec > >(tee "$OUT/suite.log") 2>&1
start=$(date +%s)

echo "== xeforge harness suite, device $device, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; fi
"$py" --version

if compgen -G "$repo/.whl/*.whl" >/dev/null; then
    echo "== installing $(ls "$repo"/.whl/*.whl | wc -l) wheel(s) from .whl into /tmp/site"
    "$py" -m pip install --quiet --no-index --no-deps --upgrade --target /tmp/site "$repo"/.whl/*.whl || echo "warning: wheel install failed"
    export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$repo/server/harness${PYTHONPATH:+:$PYTHONPATH}"
"$py" -c 'import torch, triton; print(f"torch {torch.__version__}, triton {triton.__version__}")' || { echo "torch/triton not importable"; exit 1; }
have_yaml=1; "$py" -c 'import yaml' 2>/dev/null || { have_yaml=0; echo "warning: PyYAML missing: the YAML specs cannot be read (put a PyYAML wheel in .whl/)"; }
have_pytest=1; "$py" -c 'import pytest' 2>/dev/null || { have_pytest=0; echo "pytest missing: the driver runs the verdict matrix instead"; }

echo "== probe"
"$py" -m xeforge_harness probe --device "$device" | tee "$OUT/probe.json"

# The bench first, on a quiet device: nothing else runs beside it.
if [ -n "${XEFORGE_BEFORE:-}" ] && [ -d "$XEFORGE_BEFORE" ]; then
    echo "== bench: process separation, before ($XEFORGE_BEFORE) and after"
    timeout "${XEFORGE_BENCH_S:-200}" "$py" "$repo/tests/bench/harness_separation.py" --before "$XEFORGE_BEFORE" --device "$device" \
        --rounds "${XEFORGE_BENCH_ROUNDS:-1}" --out "$OUT/harness_separation.md" ${XEFORGE_BENCH_SETTINGS:-} 2>&1 | grep -v "^USDT"
fi

rc_pytest=0
if [ "$have_pytest" = 1 ]; then
    # Everything but the timing tests in parallel (pytest-xdist where present: verdicts do not depend
    # on a quiet device), then the timing tests alone, serially.
    par=""; "$py" -c 'import xdist' 2>/dev/null && par="-n ${XEFORGE_GPU_WORKERS:-6}"
    if [ "${XEFORGE_GPU_PARALLEL:-1}" = 1 ]; then  # 0: the timing tests alone (a call that also runs the bench)
        echo "== pytest (XEFORGE_TEST_DEVICE=$device) $par"
        (cd "$repo" && XEFORGE_TEST_DEVICE="$device" timeout "${XEFORGE_GPU_PYTEST_S:-330}" "$py" -m pytest -q -p no:cacheprovider $par \
            --ignore=tests/harness/test_timing.py ${XEFORGE_GPU_TESTS:-tests/harness} --junitxml="$OUT/pytest.xml" -rA 2>&1 | grep -v "^USDT" > "$OUT/pytest.log")
        rc_pytest=$?
        tail -n 60 "$OUT/pytest.log"
    fi
    echo "== pytest timing (serial)"
    (cd "$repo" && XEFORGE_TEST_DEVICE="$device" timeout "${XEFORGE_GPU_TIMING_S:-200}" "$py" -m pytest -q -p no:cacheprovider tests/harness/test_timing.py \
        --junitxml="$OUT/pytest-timing.xml")
    rc=$?; [ "$rc" = 0 ] || rc_pytest=$rc
fi

rc_driver=0
if [ "$have_pytest" = 0 ]; then
    echo "== driver: verdicts and timing without pytest"
    timeout 240 "$py" "$here/gpu_suite.py" --device "$device" --out "$OUT" --verdicts
    rc_driver=$?
fi

echo "== done in $(( $(date +%s) - start )) s: pytest rc=$rc_pytest, driver rc=$rc_driver (yaml=$have_yaml)"
[ "$rc_pytest" = 0 ] && [ "$rc_driver" = 0 ]
