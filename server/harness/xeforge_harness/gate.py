"""The device gate: which phases of the jobs sharing one device may run at once.

A lane (one device, or one interpreter lane) may run several jobs at once (`serve --jobs-per-device
N`). Their phases ask the lane's zygote for a permit of the device, and this class alone decides:

- `device` (shared): everything but a timed comparison: the trusted side's setup and references,
  the candidate's import, compile (Triton's JIT on its first calls), correctness runs and checks,
  compile metadata. Any number of jobs hold it at once. Their results do not depend on what else
  runs: a comparison reads outputs, never times.
- `timing` (exclusive): a timed comparison (the original timed alone before the candidate exists,
  and the interleaved original/candidate pairs). Granted only when no other job holds anything on the
  device, and while it is held nothing else is granted there. So two candidates are never timed on
  one device at once, and no other job's phase runs beside one that is timed.

A job holds at most one permit at a time: asking for one gives back what it held first, so no job
waits while it holds something (no deadlock). Requests are served first come, first served: a
`device` request behind a waiting `timing` one waits too, so a timing request waits at most for
the phases already running (no starvation either way). A job that ends, however it ends (finished,
crashed, killed, cancelled, timed out), is `drop`ped: what it held and what it waited for are gone.

Pure bookkeeping, no clock and no I/O: the zygote calls it from its one loop and writes the grants.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable

DEVICE = "device"
TIMING = "timing"
MODES = (DEVICE, TIMING)

Event = Callable[[str, Hashable, str], None]  # (what: ask|grant|free|drop, job, mode)


class GateError(ValueError):
    pass


class Gate:
    def __init__(self, on_event: Event | None = None):
        self.held: dict[Hashable, str] = {}
        self.waiting: deque[tuple[Hashable, str]] = deque()
        self._on_event = on_event

    def request(self, job: Hashable, mode: str) -> list[Hashable]:
        """`job` asks for `mode`, giving back what it holds; the jobs granted now (maybe `job`)."""
        if mode not in MODES:
            raise GateError(f"unknown permit {mode!r}")
        self._give_back(job)
        self._leave_queue(job)
        self._event("ask", job, mode)
        self.waiting.append((job, mode))
        return self._grant()

    def release(self, job: Hashable) -> list[Hashable]:
        """`job` gives back what it holds (it keeps running, holding nothing); the jobs granted now."""
        self._give_back(job)
        return self._grant()

    def drop(self, job: Hashable) -> list[Hashable]:
        """`job` has ended: whatever it held or waited for is gone; the jobs granted now."""
        mode = self.held.pop(job, None)
        queued = self._leave_queue(job)
        if mode is not None or queued:
            self._event("drop", job, mode or "")
        return self._grant()

    def holds(self, job: Hashable) -> str | None:
        return self.held.get(job)

    def check(self) -> None:
        """The invariant: a `timing` holder is the only holder."""
        timing = [j for j, m in self.held.items() if m == TIMING]
        if timing and len(self.held) > 1:
            raise GateError(f"timing held by {timing} beside {sorted(map(str, self.held))}")

    def _give_back(self, job: Hashable) -> None:
        mode = self.held.pop(job, None)
        if mode is not None:
            self._event("free", job, mode)

    def _leave_queue(self, job: Hashable) -> bool:
        before = len(self.waiting)
        self.waiting = deque(w for w in self.waiting if w[0] != job)
        return len(self.waiting) < before

    def _grant(self) -> list[Hashable]:
        granted: list[Hashable] = []
        while self.waiting:
            job, mode = self.waiting[0]
            if mode == TIMING and self.held:
                break
            if mode == DEVICE and TIMING in self.held.values():
                break
            self.waiting.popleft()
            self.held[job] = mode
            granted.append(job)
            self._event("grant", job, mode)
            if mode == TIMING:
                break
        self.check()
        return granted

    def _event(self, what: str, job: Hashable, mode: str) -> None:
        if self._on_event is not None:
            self._on_event(what, job, mode)
