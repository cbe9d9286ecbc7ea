#!/usr/bin/env bash
# Formatters and linters for every language in the repository, as `tests/run_all.sh` runs them:
# Rust (rustfmt, clippy with -D warnings), Python (ruff check and format, ruff.toml; mypy on the harness), TypeScript
# (tsc --noEmit and ESLint, eslint.config.mjs, on the VS Code extension), Lua (StyLua on the Neovim plugin, stylua.toml).
# Installs what it needs: ruff into the test venv, the extension's node modules, StyLua from npm.
# Exit status non-zero if any check fails; each failure is named.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${XEFORGE_PYTHON:-$ROOT/.venv/bin/python}
TOOLS=${XEFORGE_TOOL_CACHE:-$ROOT/tests/.cache/tools}
RUFF_VERSION=0.17.6
MYPY_VERSION=1.13.0
STYLUA_VERSION=2.5.2
failed=()

check() {
  local name=$1; shift
  printf -- '--- %s\n' "$name"
  "$@" || failed+=("$name")
}

# rustfmt and clippy are rustup components a minimal toolchain may lack.
for tool in rustfmt clippy; do
  cargo "${tool/rustfmt/fmt}" --version >/dev/null 2>&1 || rustup component add "$tool" || failed+=("$tool install")
done
check "rustfmt" cargo fmt --check
check "clippy" cargo clippy --all-targets --quiet -- -D warnings

if ! "$PY" -m ruff --version 2>/dev/null | grep -q "$RUFF_VERSION"; then
  "$PY" -m pip install -q "ruff==$RUFF_VERSION" || failed+=("ruff install")
fi
check "ruff check" "$PY" -m ruff check --no-cache .
check "ruff format" "$PY" -m ruff format --check --no-cache .

# The harness package's types (server/harness/pyproject.toml [tool.mypy]).
if ! "$PY" -m mypy --version 2>/dev/null | grep -q "$MYPY_VERSION"; then
  "$PY" -m pip install -q "mypy==$MYPY_VERSION" "types-PyYAML" || failed+=("mypy install")
fi
check "mypy (harness)" bash -c "cd server/harness && '$PY' -m mypy --config-file pyproject.toml"

# Installed again when a lockfile change added a tool (ESLint) that an older node_modules lacks.
if [ ! -x editors/vscode/node_modules/.bin/eslint ] || [ ! -x editors/vscode/node_modules/.bin/tsc ]; then
  (cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error) || failed+=("npm ci (editors/vscode)")
fi
check "tsc --noEmit" bash -c 'cd editors/vscode && npx --no-install tsc -p . --noEmit'
check "eslint" bash -c 'cd editors/vscode && npx --no-install eslint .'

STYLUA=$TOOLS/stylua/node_modules/.bin/stylua
if ! "$STYLUA" --version 2>/dev/null | grep -q "$STYLUA_VERSION"; then
  mkdir -p "$TOOLS/stylua"
  (cd "$TOOLS/stylua" && { [ -f package.json ] || npm init -y >/dev/null; } \
    && npm install --no-audit --no-fund --loglevel=error "@johnnymorganz/stylua-bin@$STYLUA_VERSION") || failed+=("stylua install")
fi
check "stylua" "$STYLUA" --check editors/nvim tests/editors/nvim

if [ ${#failed[@]} -gt 0 ]; then
  printf 'lint FAILED: %s\n' "${failed[*]}"
  exit 1
fi
echo "lint: all checks passed"
