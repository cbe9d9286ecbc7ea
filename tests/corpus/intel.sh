#!/usr/bin/env bash
# The Intel corpus (issue 14): intel/intel-xpu-backend-for-triton's own Triton code — `benchmarks/`,
# `python/tutorials/`, `python/test/` — at main 6c1649935d (2026-08-22) and the tags v3.3.0b1 and v3.7.0,
# unpacked into $XEFORGE_CORPUS_DIR/intel-xpu-backend-for-triton/<rev>/ (default /tmp/xeforge-corpus)
# beside the PyPI packages of fetch.sh, so run_corpus.sh and the benchmarks pick it up.
# Third-party code: never commit it.
#
# Usage: intel.sh [GIT_DIR]
#   GIT_DIR: a clone (or bare mirror) of the repository holding those revisions. Without it the
#   three trees are downloaded from GitHub's codeload (needs access to github.com).
set -euo pipefail
dir="${XEFORGE_CORPUS_DIR:-/tmp/xeforge-corpus}/intel-xpu-backend-for-triton"
repo="https://codeload.github.com/intel/intel-xpu-backend-for-triton/tar.gz"
paths=(benchmarks python/tutorials python/test)
git_dir="${1:-}"
[ -f "$dir/.unpacked" ] && { echo "$dir"; exit 0; }
rm -rf "$dir" && mkdir -p "$dir"
for rev in 6c1649935d v3.3.0b1 v3.7.0; do
  mkdir -p "$dir/$rev"
  if [ -n "$git_dir" ]; then
    # Each revision's own tree; a path a revision lacks is left out.
    have=()
    for p in "${paths[@]}"; do
      git --git-dir="$git_dir" cat-file -e "$rev:$p" 2>/dev/null && have+=("$p")
    done
    git --git-dir="$git_dir" archive "$rev" "${have[@]}" | tar x -C "$dir/$rev"
  else
    ref="$rev"
    case "$rev" in v*) ref="refs/tags/$rev" ;; esac
    curl -fsSL "$repo/$ref" | tar xz -C "$dir/$rev" --strip-components=1 --wildcards \
      '*/benchmarks/*' '*/python/tutorials/*' '*/python/test/*'
  fi
  # Only the Python sources are the corpus.
  find "$dir/$rev" -type f ! -name '*.py' -delete
done
touch "$dir/.unpacked"
echo "$dir"
