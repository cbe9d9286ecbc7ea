#!/usr/bin/env bash
# Installs what the harness tests need (torch, triton, PyYAML, pytest) into a venv. Idempotent.
#
#   tests/harness/install_deps.sh            # venv at $XEFORGE_VENV, default <repo>/.venv
#
# Why plain PyPI: the CPU-only wheel index of PyTorch is not reachable from the project's machines
# (only the registries are), and a `--no-deps` torch without the nvidia-* wheels fails at import
# (torch preloads libcudart/libcublasLt). So the reliable way is the ordinary PyPI install: about
# 4.5 GB on disk, ~3.5 minutes with a cold pip cache on a 2-core machine, seconds when already there.
# Set XEFORGE_TORCH_INDEX to a CPU wheel index URL where one is reachable to get a ~1 GB install.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${XEFORGE_VENV:-$repo/.venv}"
torch_spec="${XEFORGE_TORCH_SPEC:-torch==2.15.0}"
triton_spec="${XEFORGE_TRITON_SPEC:-triton==3.9.0}"
# The Ray backend's tests (tests/harness/test_ray.py) start a local cluster (~240 MB, ~20 s from a
# warm cache), and one connects to it through Ray Client (a `ray://` address): the `client` extra,
# which adds grpcio only (a 7.4 MB wheel, 19 MB installed, 13 s from PyPI on a 2-core machine).
# The dashboard and the libraries are not used.
ray_spec="${XEFORGE_RAY_SPEC:-ray[client]==2.60.0}"
py="$venv/bin/python"

say() { echo "install_deps: $*"; }

if [ ! -x "$py" ]; then
    say "creating venv at $venv"
    python3 -m venv "$venv"
fi

check='import torch, triton, yaml, pytest, ray, grpc; print(f"torch {torch.__version__}, triton {triton.__version__}, ray {ray.__version__}, grpcio {grpc.__version__}")'
if versions="$("$py" -c "$check" 2>/dev/null)"; then
    say "already installed in $venv: $versions"
    exit 0
fi

start=$(date +%s)
if [ -n "${XEFORGE_TORCH_INDEX:-}" ]; then
    say "installing $torch_spec from $XEFORGE_TORCH_INDEX"
    "$py" -m pip install --quiet --index-url "$XEFORGE_TORCH_INDEX" "$torch_spec"
fi
say "installing $torch_spec $triton_spec $ray_spec PyYAML pytest numpy from PyPI (several GB the first time)"
"$py" -m pip install --quiet "$torch_spec" "$triton_spec" "$ray_spec" "PyYAML>=5.4" "pytest>=7" numpy
versions="$("$py" -c "$check")"
say "installed in $venv in $(( $(date +%s) - start )) s: $versions ($(du -sh "$venv" | cut -f1) on disk)"
