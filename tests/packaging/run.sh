#!/usr/bin/env bash
# The install a Python user makes: build the `xeforge` wheel from this checkout (maturin), install it
# into a fresh virtual environment outside the checkout, with no Rust on PATH and no source tree in
# reach, and use it: `xeforge check` on an example, `python -m xeforge`, and `xeforge stage autotune`
# on the CPU interpreter through the harness the wheel installed. Also: a harness of another version
# is refused with a message naming both. Writes sizes and timings to $XEFORGE_PACKAGING_REPORT if set.
#   XEFORGE_VENV  the test venv (torch, triton, PyYAML; default <repo>/.venv)
# Exit 0 on success, 1 on failure, 77 when maturin cannot be installed.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VENV=${XEFORGE_VENV:-$ROOT/.venv}
MATURIN_VERSION=1.16.0
fail() { echo "FAIL: $*"; exit 1; }

TOOLS=$ROOT/tests/.cache/packaging-tools
if [ ! -x "$TOOLS/bin/maturin" ]; then
  python3 -m venv "$TOOLS" && "$TOOLS/bin/pip" install -q "maturin==$MATURIN_VERSION" \
    || { echo "SKIP: could not install maturin==$MATURIN_VERSION from PyPI"; exit 77; }
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
t0=$(date +%s)
(cd "$ROOT/server" && "$TOOLS/bin/maturin" build --release --quiet -o "$WORK/dist") >"$WORK/build.log" 2>&1 \
  || { tail -n 40 "$WORK/build.log"; fail "maturin build"; }
build_s=$(( $(date +%s) - t0 ))
WHEEL=$(ls "$WORK"/dist/xeforge-*.whl 2>/dev/null | head -n 1)
[ -n "$WHEEL" ] || fail "no wheel in $WORK/dist"
echo "wheel: $(basename "$WHEEL") ($(du -k "$WHEEL" | cut -f1) KiB, built in ${build_s} s)"
"$VENV/bin/python" - "$WHEEL" <<'PY' || fail "the wheel's contents"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["xeforge_harness/__init__.py", "xeforge_harness/child/evaluate.py", "xeforge/__main__.py"]
missing = [n for n in need if n not in names]
scripts = [n for n in names if n.endswith(".data/scripts/xeforge")]
assert not missing, f"missing from the wheel: {missing}"
assert scripts, "the xeforge binary is not in the wheel's scripts"
print("wheel carries: the xeforge binary, xeforge_harness, python -m xeforge")
PY

# A fresh environment, away from the checkout: no Rust on PATH, no PYTHONPATH.
ENV=$WORK/env
python3 -m venv "$ENV" || fail "python3 -m venv"
export PATH="$ENV/bin:/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin"
unset PYTHONPATH XEFORGE_HARNESS_PATH XEFORGE_PYTHON CARGO_HOME RUSTUP_HOME
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  # /usr/bin may carry a distribution's Rust; hide it behind a PATH of our own.
  mkdir -p "$WORK/path" && for t in python3 env sh bash git strip; do p=$(command -v $t) && ln -s "$p" "$WORK/path/$t"; done
  export PATH="$ENV/bin:$WORK/path"
fi
command -v cargo >/dev/null && fail "cargo is still on PATH"
t1=$(date +%s%N)
"$ENV/bin/pip" install -q "$WHEEL" >"$WORK/pip.log" 2>&1 || { cat "$WORK/pip.log"; fail "pip install the wheel"; }
mkdir -p "$WORK/project"
cp "$ROOT/tests/editors/fixtures/add_kernel.py" "$WORK/project/"
cd "$WORK/project" || fail "cd"
"$ENV/bin/xeforge" check --device arc-pro-b70 --toolchain xpu-3.7 --format json add_kernel.py >"$WORK/check.json" 2>"$WORK/check.err"
t2=$(date +%s%N)
grep -q '"XF104"' "$WORK/check.json" || { cat "$WORK/check.json" "$WORK/check.err"; fail "xeforge check from the wheel found no XF104"; }
echo "pip install → first diagnostic: $(( (t2 - t1) / 1000000 )) ms"
python -m xeforge --version | grep -q "^xeforge " || fail "python -m xeforge --version"
echo "check from the wheel: ok; python -m xeforge: ok"

# The stage needs torch and triton: the test venv lends them (appended after the env's own
# site-packages, so the harness imported is the wheel's, not a checkout's).
SITE=$("$ENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
"$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))' >"$SITE/zz-test-venv.pth"
"$ENV/bin/python" - <<'PY' || fail "the harness the environment imports is not the wheel's"
import os, sys, xeforge_harness
assert os.path.realpath(xeforge_harness.__file__).startswith(os.path.realpath(sys.prefix)), xeforge_harness.__file__
PY
# A wrapper-style file (no Model, no spec); its scalar is given as a user would, in one line.
sed 's/^def scale(/# xeforge: dims alpha=2.0\ndef scale(/' "$ROOT/tests/fixtures/cover/scale_wrapper.py" >"$WORK/project/scale_wrapper.py"
grep -q '^# xeforge: dims' "$WORK/project/scale_wrapper.py" || fail "the fixture has no 'def scale(' to annotate"
XEFORGE_HARNESS_SANDBOX_UID=off "$ENV/bin/xeforge" stage autotune scale_wrapper.py --device cpu --format json --budget 120 \
  >"$WORK/stage.json" 2>"$WORK/stage.err"
rc=$?
"$ENV/bin/python" - "$WORK/stage.json" "$ENV/bin/python" <<'PY' || { tail -n 30 "$WORK/stage.err"; fail "stage autotune through the wheel's harness (rc $rc)"; }
import json, sys
out = json.load(open(sys.argv[1]))
record = json.load(open(out["record"]))
assert record["harness"].startswith(sys.argv[2] + " "), f"the stage did not run the environment's own python {sys.argv[2]}: {record['harness']}"
assert out["verdict"] in ("correct", "accepted"), f"no verified result: {json.dumps(out)[:1500]}"
print(f"stage autotune through the installed harness ({record['harness']}): {out['status']}, verdict {out['verdict']}")
PY

# A harness of another version is refused, and the message names both versions.
INIT=$("$ENV/bin/python" -c 'import xeforge_harness; print(xeforge_harness.__file__)')
sed -i 's/^__version__ = .*/__version__ = "0.0.0-other"/' "$INIT"
XEFORGE_HARNESS_SANDBOX_UID=off "$ENV/bin/xeforge" stage autotune scale_wrapper.py --device cpu --format json --budget 60 \
  >"$WORK/mismatch.json" 2>"$WORK/mismatch.err"
grep -q "0.0.0-other" "$WORK/mismatch.json" "$WORK/mismatch.err" && grep -q "must be the same version" "$WORK/mismatch.json" "$WORK/mismatch.err" \
  || { cat "$WORK/mismatch.json"; tail -n 20 "$WORK/mismatch.err"; fail "a harness of another version was not refused by name"; }
echo "a harness of another version: refused, naming both versions"

if [ -n "${XEFORGE_PACKAGING_REPORT:-}" ]; then
  printf 'wheel_kib=%s build_s=%s install_to_first_diagnostic_ms=%s\n' "$(du -k "$WHEEL" | cut -f1)" "$build_s" "$(( (t2 - t1) / 1000000 ))" >>"$XEFORGE_PACKAGING_REPORT"
fi
echo "packaging: ok"
