"""What process separation costs: per-candidate overhead and timing noise, before and after, same run.

    python tests/bench/harness_separation.py --before DIR --device cuda --out RESULT.md

`--before` is a directory holding an earlier `xeforge_harness` package (e.g. from
`git archive 5e5e539 server/harness | tar -x -C .bench-before`, then DIR=.bench-before/server/harness);
the current one is this checkout's `server/harness`. Each harness runs as a warm `serve`, and the two
are used in alternation, so drift on a shared machine hits both.

- overhead: for each candidate at the `ci` family without timing, wall time of the request minus
  nothing (the whole per-candidate cost a stage pays), median over rounds;
- noise: each problem's own kernel against itself on the `bench-gpu` family with timing; the width of
  the 95% speedup interval (hi − lo) and whether it contains 1, median over rounds;
- resolution: a candidate with a known real gain (`add_scale` fused into one kernel, two passes over
  memory instead of four) timed the same way; a protocol whose own per-call cost is large reads it
  closer to 1.

`--also NAME=DIR` adds a column for another earlier harness package (e.g. the one before the pool).
`--setting NAME:VAR=VALUE,VAR=VALUE` adds a column: the current harness run with those environment
variables (e.g. `torch-digest:XEFORGE_HARNESS_DIGEST=torch`), timed in the same alternation.
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
OVERHEAD = [
    ("vector_add", "fixtures/add_correct.py"),
    ("softmax", "problems/softmax.py"),
    ("matmul", "problems/matmul.py"),
    ("vector_add", "fixtures/add_off_by_one.py"),
]
NOISE = ["vector_add", "softmax", "matmul"]
GAIN = [("add_scale", "fixtures/add_scale_fused.py")]


class Serve:
    def __init__(self, root: Path, extra: dict | None = None):
        env = dict(os.environ)
        env.update(extra or {})
        env["PYTHONPATH"] = str(root.resolve())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xeforge_harness", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=env,
            cwd=str(TESTS),
        )

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
    ap.add_argument("--setting", action="append", default=[], help="NAME:VAR=VALUE,... an extra column")
    ap.add_argument("--only", help="comma-separated problems to time (default: all); the overhead rows are skipped")
    ap.add_argument("--raw", type=Path, help="write every timed reply's timing object here (JSON lines)")
    ap.add_argument("--timed", help="comma-separated problems to time, the overhead rows kept (default: all)")
    ap.add_argument("--also", action="append", default=[], help="NAME=DIR: another earlier harness, a column of its own")
    a = ap.parse_args()
    raw = a.raw.open("w") if a.raw else None
    sides = {"before": Serve(a.before)}
    for other in a.also:
        label, _, path = other.partition("=")
        sides[label] = Serve(Path(path))
    sides["after"] = Serve(REPO / "server" / "harness")
    for setting in a.setting:
        label, _, assigns = setting.partition(":")
        sides[label] = Serve(REPO / "server" / "harness", dict(kv.split("=", 1) for kv in assigns.split(",") if kv))
    over: dict = {k: {} for k in sides}
    timed: dict = {k: {} for k in sides}
    verdicts: dict = {k: {} for k in sides}
    for side in sides.values():  # warm: first CUDA init and compiles are not per-candidate costs
        side.evaluate(
            {
                "kernel": str(TESTS / "problems/vector_add.py"),
                "candidate": str(TESTS / "fixtures/add_correct.py"),
                "device": a.device,
                "no_timing": True,
            }
        )
    pairs = [(p, f"problems/{p}.py") for p in NOISE] + GAIN
    if a.only or a.timed:
        pairs = [(p, c) for p, c in pairs if p in (a.only or a.timed).split(",")]
    for r in range(a.rounds):
        order = list(sides) if r % 2 == 0 else list(reversed(sides))
        for name in order:
            s = sides[name]
            for problem, cand in [] if a.only else OVERHEAD:
                args = {
                    "kernel": str(TESTS / "problems" / f"{problem}.py"),
                    "candidate": str(TESTS / cand),
                    "device": a.device,
                    "no_timing": True,
                }
                wall, reply = s.evaluate(args)
                over[name].setdefault(f"{problem} / {cand}", []).append(wall)
                verdicts[name][f"{problem} / {cand}"] = reply["verdict"]
            if a.device != "cpu":
                for problem, cand in pairs:
                    args = {
                        "kernel": str(TESTS / "problems" / f"{problem}.py"),
                        "candidate": str(TESTS / cand),
                        "device": a.device,
                        "family": "bench-gpu",
                    }
                    wall, reply = s.evaluate(args)
                    t = reply.get("timing") or {}
                    if raw:
                        raw.write(
                            json.dumps(
                                {
                                    "side": name,
                                    "round": r,
                                    "problem": problem,
                                    "candidate": cand,
                                    "verdict": reply.get("verdict"),
                                    "timing": t,
                                }
                            )
                            + "\n"
                        )
                        raw.flush()
                    shown = {k: v for k, v in t.items() if k not in ("batches_us", "method")}
                    print(f"round {r} {name} {problem} / {cand}: {reply.get('verdict')} {json.dumps(shown)} ({wall:.1f} s)", flush=True)
                    if t.get("speedup_ci95"):
                        lo, hi = t["speedup_ci95"]
                        timed[name].setdefault(f"{problem} / {cand}", []).append(
                            {
                                "width": hi - lo,
                                "has1": lo <= 1 <= hi,
                                "wall": wall,
                                "speedup": t.get("speedup"),
                                "us": t.get("baseline_us"),
                                "batch": t.get("batch"),
                                "verdict": reply.get("verdict"),
                                "detail": _detail(t),
                            }
                        )
        report(a, sides, over, verdicts, timed, pairs, r + 1)
    for s in sides.values():
        s.close()
    return 0


def _detail(t: dict) -> str | None:
    """Where a separated harness's time goes, per call: gross A/B, the request's own cost taken off, the
    charge for input-making, and the medians of each side's batch and input-making times."""
    b = t.get("batches_us")
    if not b:
        return None
    med = statistics.median
    ga, gb = t.get("gross_us", [0, 0])
    return (
        f"batch {t.get('batch')}, gross {ga:.1f}/{gb:.1f} µs, overhead {t.get('request_overhead_us', 0):.1f} µs, "
        f"charged {t.get('prepare_charged_us', 0) / max(1, t.get('runs', 1)):.0f} µs/batch, "
        f"batch A/B {med(b['original']):.0f}/{med(b['candidate']):.0f} µs, "
        f"inputs A/B {med(b['inputs_original']):.0f}/{med(b['inputs_candidate']):.0f} µs"
    )


def report(a, sides, over, verdicts, timed, pairs, rounds) -> None:
    names = list(sides)
    lines = [
        f"# Harness process separation: overhead and timing noise, before and after ({a.device})",
        "",
        f"`python tests/bench/harness_separation.py --before <earlier harness> --device {a.device} --rounds {a.rounds}"
        + "".join(f" --also {x}" for x in a.also)
        + "".join(f" --setting {x}" for x in a.setting)
        + f"`; every harness a warm `serve`, used in alternation; {rounds} round(s).",
        "",
        "## Per-candidate wall time at the ci family, no timing (median s)",
        "",
        "| candidate | " + " | ".join(names) + " | verdicts |",
        "|---|" + "---|" * (len(names) + 1),
    ]
    for key in over["after"] if over["after"] else []:
        cells = [f"{statistics.median(over[n][key]):.3f}" for n in names]
        lines.append(f"| {key} | " + " | ".join(cells) + " | " + " → ".join(verdicts[n][key] for n in names) + " |")
    meds = {n: statistics.median([x for v in over[n].values() for x in v]) for n in names if over[n]}
    lines += (
        []
        if not meds
        else [
            "",
            "Median over all: "
            + ", ".join(f"{n} {m:.3f} s" for n, m in meds.items())
            + f"; added by the separation: {meds['after'] - meds['before']:+.3f} s per candidate.",
            "",
        ]
    )
    if a.device != "cpu":
        lines += [
            "## Timed at bench-gpu (median over rounds): interval width, and the median speedup",
            "",
            "The first rows time each problem's own kernel against itself (the interval should contain 1 and be "
            "narrow); the last times a real gain.",
            "",
            "| problem / candidate | " + " | ".join(f"{n}: width / speedup / contains 1 / verdict" for n in names) + " |",
            "|---|" + "---|" * len(names),
        ]
        for problem, cand in pairs:
            key = f"{problem} / {cand}"
            cells = []
            for n in names:
                rows = timed[n].get(key, [])
                if not rows:
                    cells.append("—")
                    continue
                w = statistics.median(r["width"] for r in rows)
                sp = statistics.median(r["speedup"] for r in rows if r["speedup"] is not None)
                cells.append(f"{w:.4f} / {sp:.4f} / {sum(r['has1'] for r in rows)}/{len(rows)} / {rows[-1]['verdict']}")
            lines.append(f"| {key} | " + " | ".join(cells) + " |")
        details = [
            f"- {n}, {problem} / {cand}: {r['detail']}"
            for problem, cand in pairs
            for n in names
            for r in timed[n].get(f"{problem} / {cand}", [])[-1:]
            if r.get("detail")
        ]
        if details:
            lines += ["", "Where the separated harness's time goes (last round; per call unless said):", ""] + details
    text = "\n".join(lines) + "\n"
    print(text, flush=True)
    if a.out:
        a.out.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
