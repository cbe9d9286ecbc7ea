"""Parent side of the zygote: start it with a sanitized environment, send jobs, survive its death."""

from __future__ import annotations

import itertools
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from . import envsafe
from . import protocol as P
from .zygote import CANCEL

_STARTUP_TIMEOUT_S = 300.0  # a cold `import torch` on a loaded CI machine can take a while
_REPLY_GRACE_S = 30.0  # on top of the job's own limit, for the zygote's bookkeeping
_CANCEL_POLL_S = 0.25  # how often a cancellable job asks whether it was cancelled


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    env = envsafe.sanitized(dict(os.environ if base is None else base))
    root = _package_root()
    parts = [root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class _Pending:
    """One job sent to a zygote: its reply when it comes, and how far its limit has grown."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: dict | None = None
        self.extended = 0.0  # seconds the job waited for its device's permits (the zygote says)
        self.waiting_since: float | None = None  # it waits for one now: its limit does not run


class Zygote:
    """A warm `python -m xeforge_harness.zygote`, restarted on demand if it ever dies.

    Several jobs may be in flight on one zygote at once (from several threads): each is sent with an
    id of its own, and a reader thread hands each reply to the job it answers. The jobs of one
    zygote share its device, and its gate decides which of their phases run at once (`gate.py`).

    `interpret=True` starts it with TRITON_INTERPRET=1: Triton builds its standard library
    (`tl.max`, `tl.sum`, ...) when it is imported, so the interpreter must be chosen before that import
    and one warm process cannot serve both the interpreter and a real GPU backend.
    """

    def __init__(self, interpret: bool = False, python: str | None = None, env: dict[str, str] | None = None):
        self.interpret = interpret
        self.python = python or sys.executable
        self.env = dict(env or {})  # pinning (CUDA_VISIBLE_DEVICES=i) for a lane of one device
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}
        self._lock = threading.Lock()  # starting, writing, closing
        self._pending: dict[int, _Pending] = {}  # the current process's jobs in flight
        self._ids = itertools.count(1)

    def start(self) -> dict:
        with self._lock:
            return self._start()

    def _start(self) -> dict:
        if self.proc is not None and self.proc.poll() is None:
            return self.info
        proc = subprocess.Popen(
            [self.python, "-m", "xeforge_harness.zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self._environment(),
            start_new_session=True,  # a Ctrl-C to the server does not reach the zygote mid-job
            text=True,
            bufsize=1,
        )
        line = _readline(proc, _STARTUP_TIMEOUT_S)
        if line is None:
            _close(proc)
            raise RuntimeError("the harness worker did not start (no ready line)")
        self.proc = proc
        self.info = json.loads(line)
        pending: dict[int, _Pending] = {}
        self._pending = pending
        threading.Thread(target=self._read, args=(proc, pending), daemon=True).start()
        return self.info

    def _environment(self) -> dict[str, str]:
        env = child_environment()
        env.update(self.env)
        if self.interpret:
            env["TRITON_INTERPRET"] = "1"
        return env

    def _read(self, proc: subprocess.Popen, pending: dict[int, _Pending]) -> None:
        """The replies of one zygote process, each to its job; at its end, every job still waiting
        is answered that the worker stopped."""
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                try:
                    message = json.loads(line)
                    key = message["id"]
                except (ValueError, KeyError, TypeError):
                    print(f"xeforge_harness: unreadable line from the harness worker: {line[:200]!r}", file=sys.stderr)
                    continue
                one = pending.get(key)
                if one is None:
                    continue
                if message.get("waiting"):
                    one.waiting_since = time.monotonic()
                if "waited_s" in message:
                    one.extended += float(message.get("waited_s") or 0.0)
                    one.waiting_since = None
                if "result" in message:
                    result = message["result"]
                    one.result = result if isinstance(result, dict) else P.error_result("the harness worker sent an unreadable reply")
                    one.done.set()
        except (OSError, ValueError):
            pass
        for one in list(pending.values()):
            if not one.done.is_set():
                one.result = P.error_result("the harness worker stopped answering")
                one.done.set()

    def run(self, job: dict, cancelled: Callable[[], bool] | None = None) -> dict:
        """Run one job; always returns a result envelope, never raises for job failures.

        `cancelled`, polled while the job runs: once it says so, the zygote is asked to stop the job
        (its processes killed; the reply is an `error` with `cancelled`)."""
        key = next(self._ids)
        one = _Pending()
        with self._lock:
            try:
                self._start()
            except (RuntimeError, OSError, ValueError) as e:
                return P.error_result(f"cannot start the harness worker: {e}")
            proc, pending = self.proc, self._pending
            assert proc is not None and proc.stdin is not None
            pending[key] = one
            try:
                proc.stdin.write(json.dumps({"id": key, "job": job}) + "\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError) as e:
                pending.pop(key, None)
                self._close_locked()
                return P.error_result(f"the harness worker is gone: {e}")
        try:
            limit = float(job.get("timeout", P.DEFAULT_TIMEOUT_S)) + _REPLY_GRACE_S
            started = time.monotonic()
            asked = False
            while not one.done.is_set():
                now = time.monotonic()
                waiting = now - one.waiting_since if one.waiting_since is not None else 0.0
                remaining = started + limit + one.extended + waiting - now
                if remaining <= 0:
                    # A wedged zygote (its own limits would have answered by now) is replaced on the
                    # next job; its other jobs are answered that it stopped.
                    self._close_if(proc)
                    return P.error_result("the harness worker stopped answering")
                if cancelled is not None and not asked and cancelled():
                    asked = True
                    self._send(proc, f"{CANCEL} {key}")
                one.done.wait(remaining if cancelled is None or asked else min(remaining, _CANCEL_POLL_S))
            return one.result if one.result is not None else P.error_result("the harness worker stopped answering")
        finally:
            pending.pop(key, None)

    def _send(self, proc: subprocess.Popen, line: str) -> None:
        with self._lock:
            try:
                assert proc.stdin is not None
                proc.stdin.write(line + "\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError, AssertionError):
                pass  # a gone zygote answers nothing; its reader answers the jobs

    def _close_if(self, proc: subprocess.Popen) -> None:
        with self._lock:
            if self.proc is proc:
                self._close_locked()

    def close(self) -> None:
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            _close(proc)

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _readline(proc: subprocess.Popen, timeout: float) -> str | None:
    """One line of a starting zygote within `timeout` seconds (None: none, or it died)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        return None
    line = proc.stdout.readline()
    return line if line else None


def _close(proc: subprocess.Popen) -> None:
    """End a zygote: its stdin closed (it stops its jobs and exits), killed if it does not."""
    try:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        proc.kill()
        proc.wait()


Cancelled = Callable[[], bool]  # polled while a job waits for a lane or runs: true once its client gave up


class Backend(Protocol):
    """What `service` needs from whatever runs jobs: the local lanes below, or a cluster (`raypool`).

    `run` may be called from several threads at once; it blocks until a lane of the device kind has a
    free slot (a lane is one device; it runs up to `jobs_per_device` jobs at once), runs the job there
    and returns its result (an `error` result, never an exception, when it cannot). A job's processes
    stay on its lane's device from start to end; the lane's zygote holds the device's gate
    (`gate.py`): a timed comparison runs with the device to itself, so no two candidates are ever
    timed on one device at once and nothing else runs there meanwhile; other phases may share it.
    Once `cancelled()` says so, a job still waiting for a slot is dropped and a running one stopped:
    the result is `protocol.cancelled_result`.

    `pool` says how many jobs can run at once (slots per device kind): what a client may submit at a
    time without its requests waiting here for a slot.
    """

    def resolve(self, requested: str) -> tuple[str | None, dict | None]: ...

    def run(self, kind: str, job: dict, cancelled: Cancelled | None = None) -> dict: ...

    def info(self) -> dict: ...

    def pool(self) -> dict: ...

    def warm(self, kind: str) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Backend: ...

    def __exit__(self, *exc) -> None: ...


# The variable that pins a process to one device, per backend.
_PIN = {"cuda": "CUDA_VISIBLE_DEVICES", "xpu": "ZE_AFFINITY_MASK"}


class Lane:
    """One warm zygote, pinned to one local device (or the interpreter): the jobs it runs at once share
    that device under its zygote's gate."""

    def __init__(self, name: str, zygote: Zygote, pinned: str | None = None):
        self.name = name
        self.zygote = zygote
        self.pinned = pinned  # the device id this lane's processes see as device 0, if pinned

    def run(self, job: dict, cancelled: Cancelled | None = None) -> dict:
        result = self.zygote.run(job, cancelled)
        if self.pinned is not None:
            mark_device(result, self.pinned)
        return result


def mark_device(result: dict, index: str) -> None:
    """The pinned device's id in every `device` of a result (a sweep's results' too, and the device a
    timed comparison names): a job's processes, its timing included, all ran on that one device."""
    if not isinstance(result, dict):
        return
    for one in [result, *(result.get("results") or [])]:
        if not isinstance(one, dict):
            continue
        timing = one.get("timing")
        for device in (one.get("device"), timing.get("device") if isinstance(timing, dict) else None):
            if isinstance(device, dict):
                device["index"] = index


class Slots:
    """Which lane a job runs on: the least busy lane of its kind that has a free slot, `per_lane` jobs
    at once each (ties: the first lane), so jobs spread over the devices before any device runs two.
    Thread-safe; `take` waits for a slot (dropped once `cancelled` says so), `give` frees it."""

    def __init__(self, lanes: list, per_lane: int = 1):
        self.lanes = list(lanes)
        self.per_lane = max(1, per_lane)
        self._busy = [0] * len(self.lanes)
        self._closed: dict[int, int] = {}  # lanes being emptied for jobs that need one alone: how many
        self._cond = threading.Condition()

    def take(self, cancelled: Cancelled | None = None, avoid=None):
        """A lane with a free slot, now held by the caller; None once `cancelled` says so first.
        `avoid`: a lane not to take (a retry elsewhere), unless it is the only one."""
        with self._cond:
            while True:
                lane = self._least_busy(avoid)
                if lane is not None:
                    self._busy[lane] += 1
                    return self.lanes[lane]
                if cancelled is not None and cancelled():
                    return None
                self._cond.wait(_CANCEL_POLL_S if cancelled is not None else None)

    def _least_busy(self, avoid) -> int | None:
        free = [i for i, n in enumerate(self._busy) if n < self.per_lane and i not in self._closed]
        if avoid is not None and len(self.lanes) > 1:
            free = [i for i in free if self.lanes[i] is not avoid]
        return min(free, key=lambda i: (self._busy[i], i)) if free else None

    def give(self, lane) -> None:
        with self._cond:
            self._busy[self._index(lane)] -= 1
            self._cond.notify_all()

    def take_alone(self, cancelled: Cancelled | None = None):
        """A whole lane: the least busy one is closed to new jobs, and once the jobs it runs have
        ended it is the caller's alone (every slot); None once `cancelled` says so first."""
        with self._cond:
            i = min(range(len(self.lanes)), key=lambda i: (i in self._closed, self._busy[i], i))
            self._closed[i] = self._closed.get(i, 0) + 1
            try:
                while self._busy[i] > 0:
                    if cancelled is not None and cancelled():
                        return None
                    self._cond.wait(_CANCEL_POLL_S if cancelled is not None else None)
                self._busy[i] = self.per_lane
                return self.lanes[i]
            finally:
                self._closed[i] -= 1
                if not self._closed[i]:
                    del self._closed[i]
                self._cond.notify_all()

    def give_alone(self, lane) -> None:
        with self._cond:
            self._busy[self._index(lane)] = 0
            self._cond.notify_all()

    def _index(self, lane) -> int:
        return next(i for i, x in enumerate(self.lanes) if x is lane)

    def busy(self) -> list[int]:
        with self._cond:
            return list(self._busy)

    @property
    def size(self) -> int:
        return len(self.lanes) * self.per_lane


class Workers:
    """The local backend: one lane per local device, started on first use.

    - `cpu` (the Triton interpreter): `cpu_workers` lanes (default 1); nothing is timed there.
    - `cuda` / `xpu`: one lane per device the backend reports. With one device that is the single
      unpinned compiler zygote, exactly as before lanes existed; with several, lane i runs with
      CUDA_VISIBLE_DEVICES (ZE_AFFINITY_MASK) set to the i-th device, so its jobs see that device
      alone, and a device name and index go into each result.
    Each lane runs up to `jobs_per_device` jobs at once (default 1: a job has its device to itself
    from start to end). With more, the jobs of a lane share its device under its zygote's gate: a
    timed comparison runs alone on the device, every other phase (setup, compile, correctness) may
    run beside other jobs' (`gate.py`). Independent requests run on different devices in parallel.
    """

    def __init__(self, python: str | None = None, cpu_workers: int = 1, jobs_per_device: int = 1):
        self.python = python
        self.cpu_workers = max(1, cpu_workers)
        self.jobs_per_device = max(1, jobs_per_device)
        # The unpinned compiler zygote: resolves `auto`, counts devices, and is the lane of a one-device host.
        self._probe = Lane("compiler", Zygote(interpret=False, python=python))
        self._lanes: dict[str, list[Lane]] = {}
        self._slots: dict[str, Slots] = {}
        self._lock = threading.Lock()
        # Held while `auto` is probed, apart from `_lock`: a probe can take minutes on a cold start, and
        # `ping` (which reads the lanes) must answer meanwhile.
        self._resolving = threading.Lock()
        self._auto: str | None = None
        self._auto_reply: dict | None = None  # that probe's whole reply (its device count)

    def _slots_for(self, kind: str) -> Slots:
        with self._lock:
            if kind not in self._slots:
                lanes = self._make_lanes(kind)
                self._lanes[kind] = lanes
                self._slots[kind] = Slots(lanes, self.jobs_per_device)
            return self._slots[kind]

    def _make_lanes(self, kind: str) -> list[Lane]:
        if kind == "cpu":
            names = ["interpreter"] + [f"interpreter#{i}" for i in range(1, self.cpu_workers)]
            return [Lane(n, Zygote(interpret=True, python=self.python)) for n in names]
        ids = self._device_ids(kind)
        if len(ids) <= 1:
            return [self._probe]
        return [Lane(f"{kind}:{i}", Zygote(interpret=False, python=self.python, env={_PIN[kind]: i}), pinned=i) for i in ids]

    def _device_ids(self, kind: str) -> list[str]:
        """The ids to pin lanes to: the entries of an inherited CUDA_VISIBLE_DEVICES (ZE_AFFINITY_MASK),
        else 0..n-1 for the n devices a probe child counts. One id, or none known: no pinning."""
        # The probe that resolved `auto` to this kind has counted its devices already: a second probe
        # (a child that starts the device's runtime again) only delayed the first request.
        reply = self._auto_reply if self._auto == kind and self._auto_reply else None
        if reply is None:
            reply = self._probe.run({"kind": "probe", "args": {"device": kind}, "timeout": 120})
        count = reply.get("count")
        if not isinstance(count, int) or count < 2 or kind not in _PIN:
            return []
        inherited = [x.strip() for x in os.environ.get(_PIN[kind], "").split(",") if x.strip()]
        return inherited[:count] if len(inherited) >= count else [str(i) for i in range(count)]

    def run(self, kind: str, job: dict, cancelled: Cancelled | None = None) -> dict:
        slots = self._slots_for(kind)
        lane = slots.take(cancelled)
        if lane is None:
            return P.cancelled_result(job.get("kind"), "the client cancelled the job before a lane was free")
        try:
            result = lane.run({**job, "slots": self.jobs_per_device}, cancelled)
        finally:
            slots.give(lane)
        return again_alone(slots, job, result, lambda alone, one: alone.run(one, cancelled), cancelled)

    def resolve(self, requested: str) -> tuple[str | None, dict | None]:
        """`auto` → the device a child finds (xpu, else cuda, else cpu), asked once per session.

        Returns (kind, None) or (None, error result).
        """
        if requested != "auto":
            return requested, None
        with self._resolving:
            if self._auto is None:
                reply = self._probe.run({"kind": "probe", "args": {"device": "auto"}, "timeout": 120})
                kind = (reply.get("device") or {}).get("kind")
                if kind is None:
                    return None, reply
                self._auto, self._auto_reply = kind, reply
            return self._auto, None

    def warm(self, kind: str) -> None:
        """Start every lane of `kind` now (in parallel), before the first request needs one."""
        self._slots_for(kind)
        lanes = self._lanes[kind]
        threads = [threading.Thread(target=lane.zygote.start, daemon=True) for lane in lanes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def info(self) -> dict:
        out = {}
        with self._lock:
            lanes = [self._probe] + [lane for group in self._lanes.values() for lane in group if lane is not self._probe]
        for lane in lanes:
            if lane.zygote.info or lane is not self._probe:
                out[lane.name] = lane.zygote.info
        return out

    def pool(self) -> dict:
        """Jobs at once per device kind (lanes × `jobs_per_device`): `cpu`'s configured lanes, and each
        kind whose lanes exist (the kind `auto` found is started by `serve` before the first request);
        `size` is `auto`'s kind's."""
        devices = {"cpu": self.cpu_workers}
        with self._lock:
            devices.update({kind: len(lanes) for kind, lanes in self._lanes.items()})
        return pool_report("local", self._auto, devices, self.jobs_per_device)

    def close(self) -> None:
        with self._lock:
            lanes = {id(lane): lane for lane in [self._probe] + [x for group in self._lanes.values() for x in group]}
            self._lanes.clear()
            self._slots.clear()
        for lane in lanes.values():
            lane.zygote.close()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Unavailable:
    """The backend when the requested one cannot start (no `ray`, no cluster): `serve` keeps answering,
    every request with this `error`, so the client sees why instead of a dead process."""

    def __init__(self, message: str):
        self.message = message

    def resolve(self, requested: str) -> tuple[str | None, dict | None]:
        return None, P.error_result(self.message, field="ray")

    def run(self, kind: str, job: dict, cancelled: Cancelled | None = None) -> dict:
        return P.error_result(self.message, field="ray")

    def warm(self, kind: str) -> None:
        pass

    def info(self) -> dict:
        return {"error": self.message}

    def pool(self) -> dict:
        return pool_report("unavailable", None, {})

    def close(self) -> None:
        pass

    def __enter__(self) -> Unavailable:
        return self

    def __exit__(self, *exc) -> None:
        pass


def out_of_memory(result: object) -> bool:
    """A worker ran out of device memory while the job shared its device (the result, or a sweep's)."""
    if not isinstance(result, dict):
        return False
    return any(isinstance(one, dict) and one.get("out_of_memory") for one in [result, *(result.get("results") or [])])


def again_alone(slots: Slots, job: dict, result: dict, run_on: Callable[[Any, dict], dict], cancelled: Cancelled | None) -> dict:
    """A job that ran out of device memory beside other jobs is judged again with a device to itself
    (`Slots.take_alone`), so that no verdict depends on what else shared the device: the second
    result is the answer, `rerun_alone`⁺ says why (the first's message)."""
    if slots.per_lane <= 1 or not out_of_memory(result) or (cancelled is not None and cancelled()):
        return result
    lane = slots.take_alone(cancelled)
    if lane is None:
        return result
    try:
        again = run_on(lane, {**job, "slots": 1})
    finally:
        slots.give_alone(lane)
    if isinstance(again, dict):
        first = result.get("message") or next(
            (one.get("message") for one in result.get("results") or [] if isinstance(one, dict) and one.get("out_of_memory")), ""
        )
        again["rerun_alone"] = f"ran out of device memory beside other jobs: {first}"
    return again


def pool_report(backend: str, auto: str | None, devices: dict[str, int], per_device: int = 1) -> dict:
    """`ping`'s `pool`: `kinds`, jobs that can run at once per device kind (its lanes, each a device,
    times `per_device`); `size`, the count for the kind `auto` resolves to (1 while that is not known
    yet: one job at a time is always safe); `devices`, the lanes per kind; `per_device`, the jobs a
    lane runs at once (their timed comparisons one at a time)."""
    per = max(1, per_device)
    kinds = {kind: n * per for kind, n in devices.items()}
    return {
        "backend": backend,
        "kind": auto,
        "size": max(1, kinds.get(auto, 1)) if auto else 1,
        "kinds": kinds,
        "devices": dict(devices),
        "per_device": per,
    }


def make_backend(ray: str | None = None, cpu_workers: int = 1, jobs_per_device: int = 1) -> Backend:
    """The local lanes, or with `ray` (an address: `auto`, `local`, `ray://host:10001`, `host:port`)
    the Ray backend (`raypool`); a Ray that cannot start gives `Unavailable`, saying why."""
    if not ray:
        return Workers(cpu_workers=cpu_workers, jobs_per_device=jobs_per_device)
    from .raypool import RayUnavailable, RayWorkers

    try:
        return RayWorkers(ray, cpu_workers=cpu_workers, jobs_per_device=jobs_per_device)
    except RayUnavailable as e:
        print(f"xeforge_harness: {e}", file=sys.stderr)
        return Unavailable(str(e))
