#!/usr/bin/env bash
# Builds editors/vscode/xeforge-<version>.vsix in one step.
#   XEFORGE_BUNDLE_BIN=/path/to/xeforge   also ship that binary inside the .vsix
#                                         (as bin/<platform>-<arch>/xeforge, found before PATH)
#   XEFORGE_VSIX_OUT=/path/file.vsix      where to write the package
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/vsce ] || [ ! -x node_modules/.bin/esbuild ]; then
  npm ci --no-audit --no-fund
fi
rm -rf dist bin
node scripts/build.mjs --production
target=()
if [ -n "${XEFORGE_BUNDLE_BIN:-}" ]; then
  triple=$(node -p 'process.platform + "-" + process.arch')
  mkdir -p "bin/$triple"
  cp "$XEFORGE_BUNDLE_BIN" "bin/$triple/xeforge"
  chmod +x "bin/$triple/xeforge"
  # A package with a binary is for one platform (VS Code's platform-specific extensions).
  target=(--target "$triple")
fi
version=$(node -p 'require("./package.json").version')
out=${XEFORGE_VSIX_OUT:-$PWD/xeforge-$version.vsix}
# Dependencies are bundled by esbuild, so the package carries none of node_modules.
node_modules/.bin/vsce package "${target[@]}" --no-dependencies --skip-license --allow-missing-repository --out "$out"
# The binary lives in the package now; a copy left in the tree would be mistaken for a source file.
rm -rf bin
echo "$out"
