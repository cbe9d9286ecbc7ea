"""Several jobs per device (`serve --jobs-per-device P`): the model of docs/harness-scaling.md, checked.

Each job is a stand-in evaluation (a `script` job: sleeps in the device's permits, no candidate) of
`c` untimed seconds (compile and correctness: the `device` permit, shared) and `t` timed seconds
(the `timing` permit: the device alone); with `--batch B` a sweep of B such candidates after a setup
of `--setup-untimed` and `--setup-timed` seconds. The script prints, for P = 1..--max-per-device:

- the closed form, T ≈ ⌈J/(P·G)⌉·(s_u + P·s_t) + ⌈N/G⌉·t + ⌈N/(P·G)⌉·c (waves of P jobs per
  device; P no more than the ⌈J/G⌉ jobs a device gets);
- a simulation of the pool's scheduling with these phase times (`Slots`' least busy lane, the
  lane's `Gate`, first come first served), with no contention between phases that share a device;
- the wall time measured through `pool.Workers` on interpreter lanes standing for G devices.

The measured time is the simulation's plus the harness's own overhead (fork, pipes, grants); the
simulation is the closed form's whenever jobs arrive in waves. Untimed phases of real candidates
slow each other down where they compete (the host's cores, the device): c' between c and P·c.

    PYTHONPATH=server/harness python tests/bench/split_model.py --jobs 12 --untimed 0.6 --timed 0.3 --devices 1
"""

from __future__ import annotations

import argparse
import heapq
import math
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "server" / "harness"))

from xeforge_harness.gate import DEVICE, TIMING, Gate  # noqa: E402


def steps(args) -> list[list]:
    one = [[DEVICE, args.untimed], [TIMING, args.timed]]
    if args.batch <= 1:
        return one
    return [[DEVICE, args.setup_untimed], [TIMING, args.setup_timed], *(one * args.batch)]


def closed_form(args, per_device: int) -> float:
    jobs, g = args.jobs, args.devices
    p = min(per_device, math.ceil(jobs / g))  # a device never runs more jobs at once than it is sent
    candidates = jobs * max(1, args.batch)
    setup = math.ceil(jobs / (p * g)) * (args.setup_untimed + p * args.setup_timed) if args.batch > 1 else 0.0
    return setup + math.ceil(candidates / g) * args.timed + math.ceil(candidates / (p * g)) * args.untimed


def simulate(args, per_device: int) -> float:
    """The pool's scheduling, event by event, with the harness's own Gate and no overhead."""
    plan = steps(args)
    gates = [Gate() for _ in range(args.devices)]
    busy = [0] * args.devices
    queue = list(range(args.jobs))  # jobs waiting for a slot, in order
    where: dict[int, int] = {}
    step: dict[int, int] = {}
    events: list[tuple[float, int, int]] = []  # (time, seq, job): its step ends
    seq = 0
    now = 0.0

    def ask(job: int) -> None:
        nonlocal seq
        i = step[job]
        if i >= len(plan):  # done: frees its permit and its slot
            d = where.pop(job)
            busy[d] -= 1
            for granted in gates[d].drop(job):
                start(granted)
            place()
            return
        for granted in gates[where[job]].request(job, plan[i][0]):
            start(granted)

    def start(job: int) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(events, (now + float(plan[step[job]][1]), seq, job))

    def place() -> None:
        while queue:
            free = [d for d in range(args.devices) if busy[d] < per_device]
            if not free:
                return
            d = min(free, key=lambda d: (busy[d], d))
            job = queue.pop(0)
            busy[d] += 1
            where[job], step[job] = d, 0
            ask(job)

    place()
    while events:
        now, _, job = heapq.heappop(events)
        step[job] += 1
        ask(job)
    return now


def measure(args, per_device: int, folder: str) -> float:
    from xeforge_harness.pool import Workers

    workers = Workers(cpu_workers=args.devices, jobs_per_device=per_device)
    try:
        workers.warm("cpu")
        job = {"kind": "script", "args": {"steps": steps(args)}, "timeout": 600}
        sem = threading.Semaphore(args.devices * per_device)  # what a client keeps in flight: `ping`'s pool
        started = time.monotonic()

        def one() -> None:
            with sem:
                workers.run("cpu", job)

        threads = [threading.Thread(target=one) for _ in range(args.jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.monotonic() - started
    finally:
        workers.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--untimed", type=float, default=0.6, help="c: a candidate's compile and correctness seconds")
    ap.add_argument("--timed", type=float, default=0.3, help="t: a candidate's timed comparison seconds")
    ap.add_argument("--devices", type=int, default=1, help="G")
    ap.add_argument("--max-per-device", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1, help="candidates per job (a sweep)")
    ap.add_argument("--setup-untimed", type=float, default=0.0)
    ap.add_argument("--setup-timed", type=float, default=0.0)
    ap.add_argument("--simulate-only", action="store_true")
    args = ap.parse_args()
    os.environ["XEFORGE_HARNESS_SCRIPT_JOBS"] = "1"
    print(
        f"N = {args.jobs * max(1, args.batch)} candidates in {args.jobs} jobs, c = {args.untimed} s, t = {args.timed} s, G = {args.devices}"
    )
    print("| per device P | closed form, s | simulated, s | measured, s |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for p in range(1, args.max_per_device + 1):
            measured = "" if args.simulate_only else f"{measure(args, p, folder):.2f}"
            print(f"| {p} | {closed_form(args, p):.2f} | {simulate(args, p):.2f} | {measured} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
