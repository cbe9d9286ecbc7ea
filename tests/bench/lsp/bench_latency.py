"""didChange → publishDiagnostics latency of `xeforge lsp` and `ruff server` on the same files and
the same edit script, in the same run.

The servers run side by side and get each edit in turn, so the machine's noise falls on both.
Latency is from writing a didChange to the arrival of the last byte of the publishDiagnostics
frame stamped with that version (before the client decodes it).

Usage: python tests/bench/lsp/bench_latency.py [--xeforge BIN] [--ruff BIN] [--edits N]
Writes a markdown table to stdout (and to --out if given). Both servers get a push-only client
(no pull-diagnostics capability) and UTF-16 positions, so the work per edit is comparable.
"""

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time

# One kernel, its autotune configs and a launch; `@I@` is the copy's number. Shared with the
# in-process bench (tests/bench/edit_pipeline.rs), so both time the same module.
KERNEL = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_block.py.tmpl")).read()


def make_file(lines):
    head = "import triton\nimport triton.language as tl\n"
    block = KERNEL.count("\n")
    n = max(1, lines // block)
    return head + "".join(KERNEL.replace("@I@", str(i)) for i in range(n))


class Server:
    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.q = queue.Queue()
        self.id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        f = self.p.stdout
        while True:
            n = None
            while True:
                line = f.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    n = int(line.split(b":")[1])
            body = f.read(n)
            # Stamped when the frame has arrived, before decoding it: the client's JSON parse
            # grows with the message and is not the server's latency.
            t = time.perf_counter()
            msg = json.loads(body)
            if "method" in msg and "id" in msg:  # server→client request: answer null
                self.send(
                    {
                        "jsonrpc": "2.0",
                        "id": msg["id"],
                        "result": None if msg["method"] != "workspace/configuration" else [{} for _ in msg["params"]["items"]],
                    }
                )
                continue
            self.q.put((t, msg))

    def send(self, obj):
        b = json.dumps(obj).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
        self.p.stdin.flush()

    def request(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            _, m = self.q.get(timeout=60)
            if m.get("id") == self.id:
                return m

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_diags(self, uri, version, timeout=60):
        deadline = time.time() + timeout
        while True:
            t, m = self.q.get(timeout=max(0.01, deadline - time.time()))
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
                if m["params"].get("version") == version:
                    return t

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.p.wait(timeout=5)
        except Exception:
            self.p.kill()


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None


def started(cmd):
    """A server past `initialize`: push diagnostics with versions, UTF-16 positions."""
    s = Server(cmd)
    s.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": None,
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "textDocument": {"publishDiagnostics": {"versionSupport": True}},
            },
        },
    )
    s.notify("initialized", {})
    return s


def start(cmd, text, uri):
    s = started(cmd)
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 0, "text": text}})
    s.wait_diags(uri, 0)
    return s


def run(cmds, text, edits, mode):
    """Every server gets the same edits, interleaved: edit v goes to each server in turn (the
    order alternating), so a noisy phase of the machine falls on all of them alike."""
    uri = "file:///tmp/xeforge-bench/kern.py"
    servers = [start(cmd, text, uri) for cmd in cmds]
    time.sleep(0.5)
    idle = [rss_kb(s.p.pid) for s in servers]
    lines = text.split("\n")
    # Middle of the file, inside `acc = acc * 2.0`: an identifier for typing, a '(' to break syntax.
    target = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].strip() == "acc = acc * 2.0")
    col = lines[target].index("acc * 2.0") + 3
    lat = [[] for _ in servers]
    for v in range(1, edits + 1):
        insert = v % 2 == 1
        ch = "x" if mode == "typing" else "("
        if insert:
            change = {"range": {"start": {"line": target, "character": col}, "end": {"line": target, "character": col}}, "text": ch}
        else:
            change = {"range": {"start": {"line": target, "character": col}, "end": {"line": target, "character": col + 1}}, "text": ""}
        order = list(range(len(servers)))
        if (v // 2) % 2:
            order.reverse()
        for k in order:
            s = servers[k]
            t0 = time.perf_counter()
            s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v}, "contentChanges": [change]})
            t1 = s.wait_diags(uri, v)
            if mode == "typing" or insert:  # for breaking edits, measure the edit that breaks
                lat[k].append((t1 - t0) * 1000)
    for s in servers:
        s.close()
    return [(*median_p99(times), idle[k]) for k, times in enumerate(lat)]


def median_p99(times: list[float]) -> tuple[float, float]:
    """Median and 99th percentile (nearest rank) of latencies."""
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def default_xeforge() -> str:
    """$XEFORGE_BIN, else the release build, else the debug build of this checkout."""
    built = os.path.join(ROOT, "target/release/xeforge")
    if not os.path.exists(built):
        built = os.path.join(ROOT, "target/debug/xeforge")
    return os.environ.get("XEFORGE_BIN", built)


def main():
    ap = argparse.ArgumentParser()
    root = ROOT
    ap.add_argument("--xeforge", default=default_xeforge())
    ap.add_argument("--ruff", default=os.path.join(root, ".venv/bin/ruff"))
    ap.add_argument("--edits", type=int, default=200)
    ap.add_argument("--out")
    ap.add_argument("--sizes", default="2000,20000", help="comma-separated line counts")
    ap.add_argument("--modes", default="typing,breaking")
    ap.add_argument("--servers", default="xeforge,ruff")
    a = ap.parse_args()
    ruff_version = subprocess.run([a.ruff, "--version"], capture_output=True, text=True).stdout.strip()
    rows = []
    servers = [
        (n, c)
        for key, n, c in (("xeforge", "xeforge", [a.xeforge, "lsp"]), ("ruff", ruff_version, [a.ruff, "server"]))
        if key in a.servers.split(",")
    ]
    for lines in map(int, a.sizes.split(",")):
        text = make_file(lines)
        n = text.count("\n")
        for mode in a.modes.split(","):
            results = run([c for _, c in servers], text, a.edits, mode)
            for (name, _), (med, p99, idle) in zip(servers, results):
                rows.append(f"| {n} | {mode} | {name} | {med:.2f} | {p99:.2f} | {idle / 1024:.1f} |")
                print(rows[-1], file=sys.stderr)
    out = ["| lines | edit | server | median ms | p99 ms | idle RSS MiB |", "|---|---|---|---|---|---|"] + rows
    report = "\n".join(out) + "\n"
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
