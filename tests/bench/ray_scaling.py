"""Stage wall time against the number of lanes: the model of docs/harness-scaling.md, checked.

Runs a set of candidates (the legitimate rewrites of tests/harness/adversarial/, every one its own
job) through `serve --http` with 1 lane, splits each job's seconds into phases from the harness's own
tally (`elapsed.requests`), predicts the wall time with G lanes from those numbers (list scheduling,
the model's formula), then measures it: the same jobs sent at once, as many in flight as lanes, to a
server with G lanes. Both backends: local lanes, and `--ray local` (a private Ray cluster).

    PYTHONPATH=server/harness python tests/bench/ray_scaling.py --device cpu --lanes 2 [--out FILE]

On the CPU every phase runs on the host's cores, so G lanes on C cores predict min(G, C)-fold at best;
on GPUs (one lane per device) compile and the judge's work use the host's CPU and correctness and
timing the lane's own device.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ADV = REPO / "tests" / "harness" / "adversarial"
PROBLEMS = REPO / "tests" / "harness" / "problems"
sys.path.insert(0, str(ADV))
import cases  # noqa: E402  (the adversarial matrix: which problem each candidate is for)

# Worker requests (child/worker.py ops) by phase: what the model calls compile, correctness, timing.
PHASES = {
    "compile": ("load", "model", "warm", "compile_meta"),
    "correctness": ("reference", "run", "describe"),
    "timing": ("prepare", "go", "bounds", "outputs", "redigest", "flush", "touch"),
}


def _phases(result: dict) -> dict[str, float]:
    spent = (result.get("elapsed") or {}).get("requests") or {}
    out = {p: 0.0 for p in PHASES}
    for name, v in spent.items():
        op = name.split(":", 1)[-1]
        for phase, ops in PHASES.items():
            if op in ops:
                out[phase] += float(v.get("s") or 0.0)
    out["job"] = float((result.get("elapsed") or {}).get("wall_s") or 0.0)
    return out


class Server:
    def __init__(self, lanes: int, ray: str | None, device: str):
        env = dict(os.environ, PYTHONPATH=str(REPO / "server" / "harness"))
        if device != "cpu" and lanes == 1:
            env["CUDA_VISIBLE_DEVICES"] = env.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]  # one GPU: one lane
        env.pop("XEFORGE_HARNESS_TOKEN", None)
        self.tmp = tempfile.mkdtemp(prefix="xfrb-", dir="/tmp")
        env["RAY_TMPDIR"] = self.tmp
        cmd = [sys.executable, "-m", "xeforge_harness", "serve", "--http", "127.0.0.1:0", "--cpu-workers", str(lanes)]
        if ray:
            cmd += ["--ray", ray]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        first = json.loads(self.proc.stdout.readline())
        self.base, self.token = first["listening"], first["token"]

    def evaluate(self, args: dict) -> tuple[float, dict]:
        data = json.dumps({"args": args}).encode()
        req = urllib.request.Request(
            self.base + "/evaluate", data=data, headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        )
        t = time.monotonic()
        with urllib.request.urlopen(req, timeout=900) as resp:
            body = json.loads(resp.read())
        return time.monotonic() - t, body

    def close(self) -> None:
        try:
            urllib.request.urlopen(
                urllib.request.Request(self.base + "/shutdown", data=b"{}", headers={"Authorization": f"Bearer {self.token}"}), timeout=60
            )
            self.proc.wait(timeout=60)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def _content(path: Path) -> dict:
    return {"name": path.name, "content": path.read_text()}


def _jobs(device: str) -> list[dict]:
    out = []
    for file, problem, expected, gpu_only, _note in cases.CASES:
        if expected != "legit" or gpu_only:
            continue
        args = {"kernel": _content(PROBLEMS / f"{problem}.py"), "candidate": _content(ADV / file), "device": device, "family": "ci"}
        spec = PROBLEMS / f"{problem}.yaml"
        if spec.exists():
            args["spec"] = _content(spec)
        out.append(args)
    return out


def predict(jobs_s: list[float], lanes: int) -> float:
    """The model: jobs in submission order, each to the lane that frees first (what the pool does)."""
    free = [0.0] * lanes
    for w in jobs_s:
        i = free.index(min(free))
        free[i] += w
    return max(free)


def measure(lanes: int, ray: str | None, jobs: list[dict], device: str) -> dict:
    server = Server(lanes, ray, device)
    try:
        with cf.ThreadPoolExecutor(lanes) as pool:  # warm: each lane's first job
            list(pool.map(server.evaluate, jobs[:lanes]))
        t = time.monotonic()
        if lanes == 1:
            sequential, parallel = [server.evaluate(j) for j in jobs], []
        else:
            with cf.ThreadPoolExecutor(lanes) as pool:
                sequential, parallel = [], list(pool.map(server.evaluate, jobs))
        wall = time.monotonic() - t
    finally:
        server.close()
    return {"sequential": sequential, "parallel": parallel, "wall": wall}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--lanes", type=int, default=2)
    ap.add_argument("--ray", default="local", help="the Ray backend's address (a GPU cluster: its own); lanes on a GPU: its GPUs")
    ap.add_argument("--repeat", type=int, default=3, help="the job list this many times over (a longer, steadier run)")
    ap.add_argument("--out")
    ns = ap.parse_args()
    jobs = _jobs(ns.device) * max(1, ns.repeat)
    lines = [
        "# Stage wall time against lanes: model and measurement",
        "",
        f"`tests/bench/ray_scaling.py --device {ns.device} --lanes {ns.lanes} --repeat {ns.repeat}`; {len(jobs)} jobs (the "
        f"legitimate rewrites of the adversarial suite, {ns.repeat} times over), {os.cpu_count()} host cores, "
        f"Python {sys.version.split()[0]}.",
        "",
        "| backend | phases per job, median s (compile / correctness / timing / job) | round trip − job, median s | "
        "1 lane, s | predicted, G lanes, s | measured, G lanes, s | verdicts |",
        "|---|---|---|---|---|---|---|",
    ]
    for ray in (None, ns.ray):
        one = measure(1, ray, jobs, ns.device)
        many = measure(ns.lanes, ray, jobs, ns.device)
        trips = [t for t, _ in one["sequential"]]
        phases = [_phases(r) for _, r in one["sequential"]]
        overhead = statistics.median(t - p["job"] for t, p in zip(trips, phases))
        med = {k: statistics.median(p[k] for p in phases) for k in ("compile", "correctness", "timing", "job")}
        predicted = predict(trips, ns.lanes)
        verdicts = sorted({r.get("verdict") for _, r in one["sequential"] + many["parallel"]})
        lines.append(
            f"| {'ray' if ray else 'local'} | {med['compile']:.2f} / {med['correctness']:.2f} / {med['timing']:.2f} / {med['job']:.2f} "
            f"| {overhead:.3f} | {one['wall']:.1f} | {predicted:.1f} (G={ns.lanes}) | {many['wall']:.1f} | {', '.join(map(str, verdicts))} |"
        )
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if ns.out:
        Path(ns.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
