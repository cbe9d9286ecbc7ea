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
    """Pins the judge (this thread) and every thread of the given worker processes for the timed
    batches, and puts back what each had. Best effort: a process it may not move is left where it is.

    Held only while batches are timed: a full output comparison between batches (a gigabyte of
    outputs for a large element-wise kernel) on one core, or a thread pool first started while pinned
    and so confined to that core for good, made a stage's final round 7x slower on an H100
    (tests/bench/results/autotune_general_h100.md, call 2026-12-05j)."""

    def __init__(self, workers: list[int]):
        self.workers = workers
        self.saved: dict[int, set[int]] = {}  # tid -> the CPUs it had
        self.home: dict[int, set[int]] = {}  # pid -> what its threads get back (a thread born pinned included)
        self.where: dict | None = None
        self.cores: tuple[int, int] | None = None
        cores = physical_cores()
        if len(cores) < 3:
            return
        k = lane()
        judge_core, worker_core = cores[(1 + 2 * k) % len(cores)], cores[(2 + 2 * k) % len(cores)]
        if judge_core == worker_core:
            return
        self.cores = (judge_core, worker_core)
        self.hold()

    def hold(self) -> None:
        """Pin (again, after `release`)."""
        if self.cores is None:
            return
        judge_core, worker_core = self.cores
        moved = self._move(0, {judge_core}, os.getpid())
        for pid in self.workers:
            for tid in _threads(pid):
                moved += self._move(tid, {worker_core}, pid)
        if moved:
            self.where = {"judge": judge_core, "workers": worker_core}

    def release(self) -> None:
        """Every thread of the judge and the workers back where it was; one started while pinned gets
        what its process had."""
        for tid, cpus in self.saved.items():
            _set(tid, cpus)
        for pid, cpus in self.home.items():
            for tid in _threads(pid):
                if tid not in self.saved:
                    _set(tid, cpus)
        self.saved.clear()

    def _move(self, tid: int, cpus: set[int], pid: int) -> int:
        try:
            before = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, cpus)
        except OSError:
            return 0
        self.saved.setdefault(tid, before)
        self.home.setdefault(pid, before)
        return 1


def _set(tid: int, cpus: set[int]) -> None:
    try:
        os.sched_setaffinity(tid, cpus)
    except OSError:
        pass
