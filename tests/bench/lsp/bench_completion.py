"""Completion latency of `xeforge lsp` against basedpyright (and ruff, whose server offers no completion:
reported as such from its initialize answer) on the same generated files, in the same run.

Each round types `tl.` on a new line in the middle kernel (one didChange) and asks for completion
right after it, so the time includes the server bringing its analysis up to that version; the next
round deletes the line again. Latency is from writing the completion request to the arrival of its
answer. The servers take turns per round, the order alternating.

Usage: python tests/bench/lsp/bench_completion.py [--xeforge BIN] [--basedpyright BIN] [--ruff BIN]
       [--rounds N] [--sizes 2000,20000] [--out FILE]
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_latency import ROOT, Server, default_xeforge, make_file, median_p99  # noqa: E402


def started(cmd):
    s = Server(cmd)
    init = s.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": None,
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "textDocument": {
                    "publishDiagnostics": {"versionSupport": True},
                    "completion": {"completionItem": {"resolveSupport": {"properties": ["documentation"]}}},
                },
            },
        },
    )
    s.notify("initialized", {})
    return s, init["result"]["capabilities"]


def completion_rounds(servers, text, rounds):
    uri = "file:///tmp/xeforge-bench/kern.py"
    for s in servers:
        s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 0, "text": text}})
    time.sleep(2.0)  # let each finish its first analysis
    lines = text.split("\n")
    target = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].strip() == "acc = acc * 2.0")
    line = target + 1
    lat = [[] for _ in servers]
    counts = [0 for _ in servers]
    version = 0
    for r in range(rounds):
        version += 1
        ins = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": "    z = tl.\n"}
        version_ins = version
        version += 1
        rem = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}}, "text": ""}
        order = list(range(len(servers)))
        if r % 2:
            order.reverse()
        for k in order:
            s = servers[k]
            s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version_ins}, "contentChanges": [ins]})
            t0 = time.perf_counter()
            m = s.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": {"line": line, "character": 11}})
            lat[k].append((time.perf_counter() - t0) * 1000)
            res = m.get("result") or []
            counts[k] = len(res["items"] if isinstance(res, dict) else res)
            s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [rem]})
    return [(*median_p99(times), counts[k]) for k, times in enumerate(lat)]


def main():
    ap = argparse.ArgumentParser()
    root = ROOT
    ap.add_argument("--xeforge", default=default_xeforge())
    ap.add_argument("--basedpyright", default="basedpyright-langserver")
    ap.add_argument("--ruff", default=os.path.join(root, ".venv/bin/ruff"))
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--sizes", default="2000,20000")
    ap.add_argument("--out")
    a = ap.parse_args()
    notes = []
    if os.path.exists(a.ruff):
        ruff, caps = started([a.ruff, "server"])
        version = subprocess.run([a.ruff, "--version"], capture_output=True, text=True).stdout.strip()
        if "completionProvider" not in caps:
            notes.append(f"{version}: its server advertises no completionProvider, so there is nothing to compare.")
        ruff.close()
    have_bp = shutil.which(a.basedpyright) is not None
    if not have_bp:
        notes.append(f"basedpyright: `{a.basedpyright}` not found, not measured.")
    bp_cmd = [a.basedpyright.replace("-langserver", ""), "--version"]
    bp_version = subprocess.run(bp_cmd, capture_output=True, text=True).stdout.strip() if have_bp else ""
    rows = []
    for size in map(int, a.sizes.split(",")):
        text = make_file(size)
        n = text.count("\n")
        named = [("xeforge", [a.xeforge, "lsp"])]
        if have_bp:
            named.append((bp_version.splitlines()[0] if bp_version else "basedpyright", [a.basedpyright, "--stdio"]))
        servers = [started(cmd)[0] for _, cmd in named]
        results = completion_rounds(servers, text, a.rounds)
        for s in servers:
            s.close()
        for (name, _), (med, p99, count) in zip(named, results):
            rows.append(f"| {n} | {name} | {med:.2f} | {p99:.2f} | {count} |")
            print(rows[-1], file=sys.stderr)
    out = ["| lines | server | median ms | p99 ms | items |", "|---|---|---|---|---|"] + rows
    report = "\n".join(out) + "\n" + "".join(f"\n{x}\n" for x in notes)
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
