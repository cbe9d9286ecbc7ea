#!/usr/bin/env bash
# Real-code test: `xeforge check` over pinned third-party Triton libraries from PyPI.
# Fails on any panic or any kernel Python's parser sees but xeforge's model misses.
# Writes tests/corpus/results.md. Corpus goes to $XEFORGE_CORPUS_DIR (default /tmp/xeforge-corpus), never the repo.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
corpus="$("$here/fetch.sh" | tail -1)"
# Intel's own code beside the PyPI packages (downloaded from GitHub; XEFORGE_INTEL_GIT_DIR: a local
# clone instead). Where neither is reachable the run goes on without it, and says so.
"$here/intel.sh" ${XEFORGE_INTEL_GIT_DIR:+"$XEFORGE_INTEL_GIT_DIR"} >/dev/null 2>&1 \
  || echo "note: the Intel corpus could not be fetched (tests/corpus/intel.sh); run without it" >&2
bin="${XEFORGE_BIN:-}"
if [ -z "$bin" ]; then
  (cd "$repo" && cargo build --release --quiet)
  bin="$repo/target/release/xeforge"
fi
run="$(mktemp -d)"
trap 'rm -rf "$run"' EXIT
# Filenames in the output are relative to the working directory: run from / so they are absolute.
cd /
for d in "$corpus"/*/; do
  name="$(basename "$d")"
  [ "$name" = _dl ] && continue
  set +e
  "$bin" check --format json --exit-zero "$d" >"$run/$name.json" 2>"$run/$name.stderr"
  echo $? >"$run/$name.rc"
  "$bin" check --show-kernels --exit-zero "$d" >"$run/$name.kernels.json" 2>>"$run/$name.stderr"
  rc=$?
  set -e
  [ "$rc" = 0 ] || echo "$rc" >"$run/$name.rc"
done
python3 "$here/summarize.py" "$corpus" "$run" "$here/results.md"
