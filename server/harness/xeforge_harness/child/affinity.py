"""CPU placement of a timed comparison: the judge on one physical core, both workers on another.

Why: every timed batch is clocked by the judge around the worker's whole call, launch issue
included, so the CPU a worker runs on is part of what is measured. On an H200 host (2026-12-05,
tests/harness/gpu-results/2026-12-05b-h200-noise) the same launches took 27 µs each in one stretch
of batches and 48 µs in the next, in one process and not the other of a pair: per-process CPU
regimes, not device clocks (constant throughout) and not the stop/continue of a side. The two
workers never run at the same time while timing (the one not timed is stopped), so putting both on
one core costs nothing and gives both sides of a pair the same CPU.
"""

from __future__ import annotations

import os


def physical_cores() -> list[int]:
    """One logical CPU per physical core this process may run on, in order (SMT siblings left out)."""
    allowed = sorted(os.sched_getaffinity(0))
    cores: list[int] = []
    taken: set[int] = set()
    for cpu in allowed:
        if cpu in taken:
            continue
        try:
            with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list", encoding="ascii") as f:
                taken |= cpu_list(f.read())
        except (OSError, ValueError):
            taken.add(cpu)
        cores.append(cpu)
    return cores


def cpu_list(text: str) -> set[int]:
    """`0-3,8` as {0, 1, 2, 3, 8}."""
    out: set[int] = set()
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def lane() -> int:
    """This job's device among the host's (the first id of the pinning variable the pool sets), so that
    comparisons timed at once on different devices get different cores."""
    for var in ("CUDA_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"):
        first = os.environ.get(var, "").split(",")[0].split(".")[0].strip()
        if first.isdigit():
            return int(first)
    return 0


def _threads(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


class Placement:
    """Pins the judge (this thread) and every thread of the given worker processes for the timed loop,
    and puts back what each had. Best effort: a process it may not move is left where it is."""

    def __init__(self, workers: list[int]):
        self.saved: dict[int, set[int]] = {}
        self.where: dict | None = None
        cores = physical_cores()
        if len(cores) < 3:
            return
        k = lane()
        judge_core, worker_core = cores[(1 + 2 * k) % len(cores)], cores[(2 + 2 * k) % len(cores)]
        if judge_core == worker_core:
            return
        moved = self._move(0, {judge_core})
        for pid in workers:
            for tid in _threads(pid):
                moved += self._move(tid, {worker_core})
        if moved:
            self.where = {"judge": judge_core, "workers": worker_core}

    def _move(self, tid: int, cpus: set[int]) -> int:
        try:
            before = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, cpus)
        except OSError:
            return 0
        self.saved[tid] = before
        return 1

    def restore(self) -> None:
        for tid, cpus in self.saved.items():
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                pass
        self.saved.clear()
