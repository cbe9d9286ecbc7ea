#!/usr/bin/env bash
# Download and unpack the pinned corpus (packages.txt) into $XEFORGE_CORPUS_DIR (default /tmp/xeforge-corpus).
# Third-party code: never commit it. Re-running reuses what is already unpacked.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${XEFORGE_CORPUS_DIR:-/tmp/xeforge-corpus}"
mkdir -p "$dir/_dl"
python="${PYTHON:-python3}"
grep -vE '^\s*(#|$)' "$here/packages.txt" | while read -r spec kind; do
  name="${spec%%==*}"
  dest="$dir/$name"
  [ -f "$dest/.unpacked" ] && continue
  rm -rf "$dest" && mkdir -p "$dest" "$dir/_dl/$name"
  echo "fetching $spec ($kind)" >&2
  if [ "$kind" = sdist ]; then
    "$python" -m pip download -q --no-deps --no-binary :all: --no-build-isolation "$spec" -d "$dir/_dl/$name" \
      || "$python" -m pip download -q --no-deps "$spec" -d "$dir/_dl/$name"
  else
    "$python" -m pip download -q --no-deps --only-binary :all: "$spec" -d "$dir/_dl/$name"
  fi
  for f in "$dir/_dl/$name"/*; do
    case "$f" in
      *.whl|*.zip) "$python" -m zipfile -e "$f" "$dest" ;;
      *.tar.gz|*.tgz) tar xzf "$f" -C "$dest" ;;
    esac
  done
  touch "$dest/.unpacked"
done
echo "$dir"
