"""A sweep of configs through one warm `serve`: one `sweep` request against one `evaluate` per config.

    python3 tests/bench/harness_sweep.py [--kernels vector_add softmax_rows ...] [--configs 4] [--device cuda]
        [--out DIR]  (writes harness_sweep.md and harness_sweep.json there)

For each kernel of tests/bench/stages/general: the stage's own config space (`xeforge stage autotune
--emit-space`, $XEFORGE_BIN), its first N configs judged as the autotune stage judges them (correctness on
`ci`, timing on `bench-gpu`'s largest variant, 20 pairs), first by N `evaluate` requests, then by one
`sweep`, on the same warm `serve`. Reported: wall seconds of each path, the sweep's setup and each
candidate's own seconds, and where a candidate's seconds go (the judge's tally of worker requests), so a
per-config cost can be attacked where it is. The verdicts of both paths are listed side by side: a sweep
must judge as `evaluate` does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "tests" / "bench" / "stages" / "general"
sys.path.insert(0, str(REPO / "tests" / "harness"))


def serve() -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "server" / "harness")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return subprocess.Popen(
        [sys.executable, "-m", "xeforge_harness", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
        env=env,
    )


def ask(proc: subprocess.Popen, command: str, args: dict, rid: list[int]) -> tuple[dict, float]:
    rid[0] += 1
    t = time.monotonic()
    proc.stdin.write(json.dumps({"id": rid[0], "command": command, "args": args}) + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    return json.loads(line), time.monotonic() - t


def space(name: str, work: Path, n: int) -> list[str]:
    binary = os.environ.get("XEFORGE_BIN", str(REPO / "target" / "release" / "xeforge"))
    for ext in ("py", "yaml"):
        (work / f"{name}.{ext}").write_text((SUITE / f"{name}.{ext}").read_text())
    out = work / "space"
    subprocess.run(
        [binary, "stage", "autotune", str(work / f"{name}.py"), "--device", "cuda", "--emit-space", str(out)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    index = json.loads((out / "index.json").read_text())
    files = [str(out / e["file"]) for e in index if not e.get("start")]
    return files[:n]


def top(requests: dict, k: int = 6) -> str:
    items = sorted(requests.items(), key=lambda x: -x[1]["s"])[:k]
    return ", ".join(f"{op} {v['s']:.2f} s/{v['n']}" for op, v in items)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--kernels", nargs="*", default=["vector_add", "softmax_rows", "gemm_bf16_2d"])
    p.add_argument("--configs", type=int, default=4)
    p.add_argument("--device", default="cuda")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--out", default=str(REPO / "tests" / "bench" / ".work"))
    ns = p.parse_args()
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    proc = serve()
    rid = [0]
    rows, raw = [], {}
    try:
        for name in ns.kernels:
            work = Path(tempfile.mkdtemp(prefix=f"xeforge-sweep-{name}-"))
            cands = space(name, work, ns.configs)
            print(f"{name}: {len(cands)} configs", flush=True)
            base = {"kernel": str(work / f"{name}.py"), "device": ns.device, "family": "ci", "runs": ns.runs, "timeout": 300}
            if ns.device != "cpu":  # the interpreter times nothing; a rehearsal checks on `ci` alone
                base["timing_family"] = "bench-gpu"
            singles, single_wall = [], 0.0
            for c in cands:
                r, w = ask(proc, "evaluate", {**base, "candidate": c}, rid)
                singles.append(r)
                single_wall += w
            sw, sweep_wall = ask(proc, "sweep", {**base, "candidates": cands}, rid)
            raw[name] = {"evaluate": singles, "sweep": sw}
            results = sw.get("results", [])
            own = [r.get("elapsed", {}).get("candidate_s") for r in results]
            rows.append(
                {
                    "kernel": name,
                    "configs": len(cands),
                    "evaluate_s": round(single_wall, 1),
                    "sweep_s": round(sweep_wall, 1),
                    "setup_s": sw.get("setup_s"),
                    "candidate_s": own,
                    "verdicts": [(a.get("verdict"), b.get("verdict")) for a, b in zip(singles, results)],
                    "breakdown": top(results[0].get("elapsed", {}).get("requests", {})) if results else sw.get("message"),
                    "evaluate_breakdown": top(singles[0].get("elapsed", {}).get("requests", {})) if singles else "",
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    finally:
        try:
            ask(proc, "shutdown", {}, rid)
        except Exception:  # noqa: BLE001
            proc.kill()
    (out / "harness_sweep.json").write_text(json.dumps(raw, indent=1, default=str))
    lines = [
        "# A sweep of configs: one `sweep` request against one `evaluate` per config, one warm `serve`",
        "",
        f"`python3 tests/bench/harness_sweep.py --device {ns.device} --configs {ns.configs} --runs {ns.runs}`; correctness on `ci`, "
        "timing on `bench-gpu`'s largest variant, as the autotune stage asks.",
        "",
        "| kernel | configs | evaluate × N, s | one sweep, s | sweep setup, s | each candidate, s | verdicts (evaluate / sweep) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        each = ", ".join("–" if x is None else f"{x:.1f}" for x in r["candidate_s"])
        verdicts = ", ".join(f"{a}/{b}" for a, b in r["verdicts"])
        lines.append(f"| {r['kernel']} | {r['configs']} | {r['evaluate_s']} | {r['sweep_s']} | {r['setup_s']} | {each} | {verdicts} |")
    lines += ["", "Where the first candidate's seconds go (the judge's tally of worker requests, op seconds/count):", ""]
    for r in rows:
        lines.append(f"- {r['kernel']}, in the sweep: {r['breakdown']}")
        lines.append(f"- {r['kernel']}, alone: {r['evaluate_breakdown']}")
    (out / "harness_sweep.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
