"""Soak: one `xeforge lsp` process, documents opened, edited and closed in a loop for a fixed time,
resident memory sampled; then the idle memory of a large open file beside `ruff server`'s, same file.

Every loop turn opens one of --docs distinct documents (a ~300-line Triton module whose copy number
changes its names), sends --edits typing edits, waits for the diagnostics of the last version and
closes it. RSS is sampled every --sample seconds. "Growth" compares the median of the samples in the
first and the last fifth of the run after warm-up (the first --warmup seconds are not counted).

Usage: python tests/bench/lsp/soak.py [--xeforge BIN] [--ruff BIN] [--seconds 600] [--out FILE]
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_latency import KERNEL, make_file, rss_kb, start, started  # noqa: E402


def module(i: int) -> str:
    head = "import triton\nimport triton.language as tl\n"
    return head + "".join(KERNEL.replace("@I@", f"{i}_{j}") for j in range(300 // KERNEL.count("\n") + 1))


def soak(binary: str, seconds: float, docs: int, edits: int, sample: float) -> dict:
    s = started([binary, "lsp"])
    t0 = time.monotonic()
    samples: list[tuple[float, int]] = []
    next_sample = 0.0
    turns = 0
    while time.monotonic() - t0 < seconds:
        i = turns % docs
        uri = f"file:///tmp/xeforge-soak/m{i}.py"
        text = module(i)
        s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 0, "text": text}})
        line = text.count("\n") // 2
        for v in range(1, edits + 1):
            # Typing: insert a character, then delete it, alternating.
            start_char = 4
            if v % 2:
                change = {
                    "range": {"start": {"line": line, "character": start_char}, "end": {"line": line, "character": start_char}},
                    "text": "x",
                }
            else:
                change = {
                    "range": {"start": {"line": line, "character": start_char}, "end": {"line": line, "character": start_char + 1}},
                    "text": "",
                }
            s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v}, "contentChanges": [change]})
        s.wait_diags(uri, edits)
        s.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        turns += 1
        now = time.monotonic() - t0
        if now >= next_sample:
            samples.append((now, rss_kb(s.p.pid) or 0))
            next_sample = now + sample
    s.close()
    return {"turns": turns, "samples": samples}


def idle(cmds: list[list[str]], text: str, wait: float) -> list[tuple[float, float]]:
    """Each server with `text` open, left alone for `wait` s (side by side): (idle RSS MiB, ms from
    the next edit to its diagnostics)."""
    uri = "file:///tmp/xeforge-bench/kern.py"
    servers = [start(cmd, text, uri) for cmd in cmds]
    time.sleep(wait)
    out = []
    line = text.count("\n") // 2
    for s in servers:
        kb = rss_kb(s.p.pid)
        t = time.perf_counter()
        s.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 1},
                "contentChanges": [
                    {"range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 4}}, "text": "x"}
                ],
            },
        )
        out.append((kb / 1024, (s.wait_diags(uri, 1) - t) * 1000))
    for s in servers:
        s.close()
    return out


def main() -> int:
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
    ap = argparse.ArgumentParser()
    ap.add_argument("--xeforge", default=os.environ.get("XEFORGE_BIN", os.path.join(root, "target/release/xeforge")))
    ap.add_argument("--ruff", default=os.path.join(root, ".venv/bin/ruff"))
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--warmup", type=float, default=60)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--edits", type=int, default=6)
    ap.add_argument("--sample", type=float, default=5)
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument(
        "--idle",
        type=float,
        default=35,
        help="seconds a server is left alone before its RSS is read "
        "(xeforge lets a large idle document's tree go after 30 s, lint.idleReleaseMs)",
    )
    ap.add_argument("--out")
    a = ap.parse_args()

    r = soak(a.xeforge, a.seconds, a.docs, a.edits, a.sample)
    kept = [(t, kb) for t, kb in r["samples"] if t >= a.warmup] or r["samples"]
    fifth = max(1, len(kept) // 5)
    first = statistics.median(kb for _, kb in kept[:fifth]) / 1024
    last = statistics.median(kb for _, kb in kept[-fifth:]) / 1024
    peak = max(kb for _, kb in r["samples"]) / 1024
    big = make_file(a.lines)
    ruff_version = os.popen(f"{a.ruff} --version").read().strip() or "ruff"
    rounds = [idle([[a.xeforge, "lsp"], [a.ruff, "server"]], big, a.idle) for _ in range(3)]
    x_idle, r_idle = (statistics.median(r[i][0] for r in rounds) for i in (0, 1))
    x_edit, r_edit = (statistics.median(r[i][1] for r in rounds) for i in (0, 1))
    lines = [
        "# Soak: documents opened, edited and closed in a loop; idle memory beside ruff",
        "",
        f"`python3 tests/bench/lsp/soak.py --seconds {a.seconds:g} --docs {a.docs} --edits {a.edits}` "
        f"(xeforge `{os.path.relpath(a.xeforge, root) if a.xeforge.startswith(root) else a.xeforge}`, {ruff_version})",
        "",
        f"- {r['turns']} documents opened, edited {a.edits}× and closed in {a.seconds:g} s ({a.docs} distinct URIs, ~300 lines each)",
        f"- RSS after the {a.warmup:g} s warm-up: median of the first fifth {first:.1f} MiB, of the last fifth {last:.1f} MiB "
        f"(growth {last - first:+.1f} MiB, {100 * (last - first) / first:+.1f}%); peak {peak:.1f} MiB",
        f"- idle RSS with a {big.count(chr(10))}-line file open, {a.idle:g} s after its diagnostics (median of 3 starts, servers side by side): "
        f"xeforge {x_idle:.1f} MiB, {ruff_version} {r_idle:.1f} MiB (ratio {x_idle / r_idle:.2f})",
        f"- the first edit after that idle time, to its diagnostics: xeforge {x_edit:.0f} ms (a fresh parse and analysis), "
        f"{ruff_version} {r_edit:.0f} ms",
        "",
        "RSS samples (s, MiB): " + ", ".join(f"{t:.0f}:{kb / 1024:.1f}" for t, kb in r["samples"][:: max(1, len(r["samples"]) // 40)]),
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
