"""What process separation costs: per-candidate overhead and timing noise, before and after, same run.

    python tests/bench/harness_separation.py --before DIR --device cuda --out RESULT.md

`--before` is a directory holding an earlier `xeforge_harness` package (e.g. from
`git archive 5e5e539 server/harness | tar -x -C .bench-before`, then DIR=.bench-before/server/harness);
the current one is this checkout's `server/harness`. Each harness runs as a warm `serve`, and the two
are used in alternation, so drift on a shared machine hits both.

- overhead: for each candidate at the `ci` family without timing, wall time of the request minus
  nothing (the whole per-candidate cost a stage pays), median over rounds;
- noise: each problem's own kernel against itself on the `bench-gpu` family with timing; the width of
  the 95% speedup interval (hi − lo) and whether it contains 1, median over rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests" / "harness"
OVERHEAD = [("vector_add", "fixtures/add_correct.py"), ("softmax", "problems/softmax.py"), ("matmul", "problems/matmul.py"),
            ("vector_add", "fixtures/add_off_by_one.py")]
NOISE = ["vector_add", "softmax", "matmul"]


class Serve:
    def __init__(self, root: Path):
        env = dict(os.environ)
        env["PYTHONPATH"] = str(root.resolve())
        self.proc = subprocess.Popen([sys.executable, "-m", "xeforge_harness", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1, env=env, cwd=str(TESTS))

    def evaluate(self, args: dict) -> tuple[float, dict]:
        t0 = time.perf_counter()
        self.proc.stdin.write(json.dumps({"id": 1, "command": "evaluate", "args": args}) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        return time.perf_counter() - t0, reply

    def close(self) -> None:
        self.proc.stdin.write(json.dumps({"id": 0, "command": "shutdown"}) + "\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, type=Path)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    sides = {"before": Serve(a.before), "after": Serve(REPO / "server" / "harness")}
    over: dict = {k: {} for k in sides}
    noise: dict = {k: {} for k in sides}
    verdicts: dict = {k: {} for k in sides}
    for side in sides.values():  # warm: first CUDA init and compiles are not per-candidate costs
        side.evaluate({"kernel": str(TESTS / "problems/vector_add.py"), "candidate": str(TESTS / "fixtures/add_correct.py"),
                       "device": a.device, "no_timing": True})
    for r in range(a.rounds):
        order = list(sides) if r % 2 == 0 else list(reversed(sides))
        for name in order:
            s = sides[name]
            for problem, cand in OVERHEAD:
                args = {"kernel": str(TESTS / "problems" / f"{problem}.py"), "candidate": str(TESTS / cand), "device": a.device,
                        "no_timing": True}
                wall, reply = s.evaluate(args)
                over[name].setdefault(f"{problem} / {cand}", []).append(wall)
                verdicts[name][f"{problem} / {cand}"] = reply["verdict"]
            if a.device != "cpu":
                for problem in NOISE:
                    args = {"kernel": str(TESTS / "problems" / f"{problem}.py"), "candidate": str(TESTS / "problems" / f"{problem}.py"),
                            "device": a.device, "family": "bench-gpu"}
                    wall, reply = s.evaluate(args)
                    t = reply.get("timing") or {}
                    if t.get("speedup_ci95"):
                        lo, hi = t["speedup_ci95"]
                        noise[name].setdefault(problem, []).append((hi - lo, lo <= 1 <= hi, wall, t.get("speedup"), t.get("meaningful")))
    for s in sides.values():
        s.close()

    lines = [f"# Harness process separation: overhead and timing noise, before and after ({a.device})", "",
             f"`python tests/bench/harness_separation.py --before <earlier harness> --device {a.device} --rounds {a.rounds}`; "
             "both harnesses warm `serve`s, used in alternation.", "",
             "## Per-candidate wall time at the ci family, no timing (median s)", "",
             "| candidate | before | after | verdict before → after |", "|---|---|---|---|"]
    for key in over["after"]:
        b, f = statistics.median(over["before"][key]), statistics.median(over["after"][key])
        lines.append(f"| {key} | {b:.3f} | {f:.3f} | {verdicts['before'][key]} → {verdicts['after'][key]} |")
    allb = statistics.median([x for v in over["before"].values() for x in v])
    alla = statistics.median([x for v in over["after"].values() for x in v])
    lines += ["", f"Median over all: before {allb:.3f} s, after {alla:.3f} s, added {alla - allb:+.3f} s per candidate.", ""]
    if a.device != "cpu":
        lines += ["## The same kernel against itself, bench-gpu, timed (median over rounds)", "",
                  "| problem | interval width before | after | contains 1 (before / after) | median speedup before / after | wall s before / after |",
                  "|---|---|---|---|---|---|"]
        for problem in NOISE:
            def med(side, i):
                xs = [row[i] for row in noise[side].get(problem, []) if row[i] is not None]
                return statistics.median(xs) if xs else float("nan")

            def hits(side):
                rows = noise[side].get(problem, [])
                return f"{sum(1 for r in rows if r[1])}/{len(rows)}"

            lines.append(f"| {problem} | {med('before', 0):.4f} | {med('after', 0):.4f} | {hits('before')} / {hits('after')} | "
                         f"{med('before', 3):.4f} / {med('after', 3):.4f} | {med('before', 2):.1f} / {med('after', 2):.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        a.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
