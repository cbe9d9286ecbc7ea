"""Per-candidate overhead of the harness: a warm `serve` vs a fresh `python -m xeforge_harness evaluate`.

    .venv/bin/python tests/bench/harness_overhead.py [--rounds 3] [--device cpu] [--out tests/bench/results/harness_overhead.md]

The same candidates go through both paths, interleaved by round. For each evaluation:
  wall      = request sent → reply read (serve), or process start → exit (fresh);
  work      = the `child_s` the candidate's own process reports (correctness, guard, ...);
  overhead  = wall − work: what the harness adds around the actual evaluation.
Reports medians per path and the ratio fresh/serve of the median overheads (goal: ≥ 5x).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests" / "harness"
CANDIDATES = [
    ("vector_add", "fixtures/add_correct.py"),
    ("vector_add", "fixtures/add_zeros.py"),
    ("vector_add", "fixtures/add_torch.py"),
    ("vector_add", "fixtures/add_syntax_error.py"),
    ("softmax", "problems/softmax.py"),
    ("matmul", "problems/matmul.py"),
]


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(REPO / "server" / "harness")] + [p for p in e.get("PYTHONPATH", "").split(os.pathsep) if p])
    return e


def args_for(problem: str, candidate: str, device: str) -> dict:
    return {"kernel": str(TESTS / "problems" / f"{problem}.py"), "candidate": str(TESTS / candidate), "device": device, "no_timing": True}


def fresh(a: dict) -> tuple[float, dict]:
    cmd = [
        sys.executable,
        "-m",
        "xeforge_harness",
        "evaluate",
        "--kernel",
        a["kernel"],
        "--candidate",
        a["candidate"],
        "--device",
        a["device"],
        "--no-timing",
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env())
    wall = time.perf_counter() - t0
    return wall, json.loads(proc.stdout.strip().splitlines()[-1])


class Serve:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xeforge_harness", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=env(),
        )

    def evaluate(self, a: dict) -> tuple[float, dict]:
        t0 = time.perf_counter()
        self.proc.stdin.write(json.dumps({"id": 1, "command": "evaluate", "args": a}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        return time.perf_counter() - t0, json.loads(line)

    def close(self) -> None:
        self.proc.stdin.write(json.dumps({"id": 0, "command": "shutdown"}) + "\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default=str(REPO / "tests" / "bench" / "results" / "harness_overhead.md"))
    ns = ap.parse_args()

    serve = Serve()
    serve.evaluate(args_for(*CANDIDATES[0], ns.device))  # warm-up: the serve start itself is paid once
    rows = {"serve": [], "fresh": []}
    for r in range(ns.rounds):
        for problem, candidate in CANDIDATES:
            a = args_for(problem, candidate, ns.device)
            order = ("serve", "fresh") if r % 2 == 0 else ("fresh", "serve")
            for path in order:
                wall, reply = serve.evaluate(a) if path == "serve" else fresh(a)
                work = (reply.get("elapsed") or {}).get("child_s") or 0.0
                rows[path].append(
                    {"candidate": candidate, "verdict": reply.get("verdict"), "wall": wall, "work": work, "overhead": wall - work}
                )
                print(
                    f"{path:5} {candidate:32} {reply.get('verdict'):14} wall {wall:7.3f}s work {work:6.3f}s overhead {wall - work:6.3f}s",
                    flush=True,
                )
    serve.close()

    med = {p: {k: statistics.median(x[k] for x in rows[p]) for k in ("wall", "work", "overhead")} for p in rows}
    ratio = med["fresh"]["overhead"] / med["serve"]["overhead"]
    wall_ratio = med["fresh"]["wall"] / med["serve"]["wall"]
    lines = [
        "# Harness overhead: warm `serve` vs fresh `evaluate` per candidate",
        "",
        f"Measured by `tests/bench/harness_overhead.py --rounds {ns.rounds} --device {ns.device}` on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; {len(CANDIDATES)} candidates × {ns.rounds} rounds per path, "
        "paths interleaved. Overhead = wall time − the time the candidate's own process spent evaluating (`elapsed.child_s`).",
        "",
        "| path | median wall (s) | median work (s) | median overhead (s) |",
        "|---|---|---|---|",
        *(f"| {p} | {med[p]['wall']:.3f} | {med[p]['work']:.3f} | {med[p]['overhead']:.3f} |" for p in ("serve", "fresh")),
        "",
        f"**Overhead ratio fresh / serve: {ratio:.1f}x** (goal ≥ 5x); whole-evaluation wall ratio: {wall_ratio:.1f}x.",
        "",
        "Where the fresh path's time goes: a new interpreter, then a worker that imports torch and triton",
        "(and warms torch._dynamo, which a dispatch mode's first operator would otherwise import), all per",
        "candidate. `serve` pays that once; per candidate it pays a fork, a few pipe writes and the cleanup of",
        "the candidate's work directory.",
        "",
        "Candidates: " + ", ".join(f"`{c}`" for _, c in CANDIDATES) + ".",
    ]
    Path(ns.out).parent.mkdir(parents=True, exist_ok=True)
    Path(ns.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
