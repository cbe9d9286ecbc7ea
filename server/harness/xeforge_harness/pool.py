"""Parent side of the zygote: start it with a sanitized environment, send jobs, survive its death."""

from __future__ import annotations

import json
import os
import queue
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Protocol

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


class Zygote:
    """A warm `python -m xeforge_harness.zygote`, restarted on demand if it ever dies.

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

    def start(self) -> dict:
        if self.proc is not None and self.proc.poll() is None:
            return self.info
        self.proc = subprocess.Popen(
            [self.python, "-m", "xeforge_harness.zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self._environment(),
            start_new_session=True,  # a Ctrl-C to the server does not reach the zygote mid-job
            text=True,
            bufsize=1,
        )
        line = self._readline(_STARTUP_TIMEOUT_S)
        if line is None:
            self.close()
            raise RuntimeError("the harness worker did not start (no ready line)")
        self.info = json.loads(line)
        return self.info

    def _environment(self) -> dict[str, str]:
        env = child_environment()
        env.update(self.env)
        if self.interpret:
            env["TRITON_INTERPRET"] = "1"
        return env

    def run(self, job: dict, cancelled: Callable[[], bool] | None = None) -> dict:
        """Run one job; always returns a result envelope, never raises for job failures.

        `cancelled`, polled while the job runs: once it says so, the zygote is asked to stop the job
        (its processes killed; the reply is an `error` with `cancelled`)."""
        try:
            self.start()
        except (RuntimeError, OSError, ValueError) as e:
            return P.error_result(f"cannot start the harness worker: {e}")
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            self.close()
            return P.error_result(f"the harness worker is gone: {e}")
        limit = float(job.get("timeout", P.DEFAULT_TIMEOUT_S)) + _REPLY_GRACE_S
        line = self._readline(limit, cancelled)
        if line is None:
            self.close()  # a wedged zygote is replaced on the next job
            return P.error_result("the harness worker stopped answering")
        try:
            return json.loads(line)
        except ValueError as e:
            return P.error_result(f"the harness worker sent an unreadable reply: {e}")

    def _readline(self, timeout: float, cancelled: Callable[[], bool] | None = None) -> str | None:
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        asked = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if cancelled is not None and not asked and cancelled():
                asked = True
                self._send_cancel()
            wait = remaining if cancelled is None or asked else min(remaining, _CANCEL_POLL_S)
            ready, _, _ = select.select([self.proc.stdout], [], [], wait)
            if ready:
                line = self.proc.stdout.readline()
                return line if line else None  # "" is EOF: the zygote died

    def _send_cancel(self) -> None:
        try:
            assert self.proc is not None and self.proc.stdin is not None
            self.proc.stdin.write(CANCEL + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, AssertionError):
            pass  # a gone zygote answers nothing; the read below sees EOF

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


Cancelled = Callable[[], bool]  # polled while a job waits for a lane or runs: true once its client gave up


class Backend(Protocol):
    """What `service` needs from whatever runs jobs: the local lanes below, or a cluster (`raypool`).

    `run` may be called from several threads at once; it blocks until a worker of the device kind is
    free, runs the job there alone and returns its result (an `error` result, never an exception, when
    it cannot). A job that times candidates holds its device for its whole run: no two candidates are
    ever timed on one device at once. Once `cancelled()` says so, a job still waiting for a lane is
    dropped and a running one stopped: the result is `protocol.cancelled_result`.

    `pool` says how many jobs can run at once (the lanes per device kind): what a client may submit
    at a time without its requests waiting here for a lane.
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
    """One warm zygote, pinned to one local device (or the interpreter), running one job at a time."""

    def __init__(self, name: str, zygote: Zygote, pinned: str | None = None):
        self.name = name
        self.zygote = zygote
        self.pinned = pinned  # the device id this lane's processes see as device 0, if pinned
        self.lock = threading.Lock()

    def run(self, job: dict, cancelled: Cancelled | None = None) -> dict:
        with self.lock:
            result = self.zygote.run(job, cancelled)
        if self.pinned is not None:
            for one in [result, *(result.get("results") or [])]:
                if isinstance(one, dict) and isinstance(one.get("device"), dict):
                    one["device"]["index"] = self.pinned
        return result


class Workers:
    """The local backend: one lane per local device, started on first use.

    - `cpu` (the Triton interpreter): `cpu_workers` lanes (default 1); nothing is timed there.
    - `cuda` / `xpu`: one lane per device the backend reports. With one device that is the single
      unpinned compiler zygote, exactly as before lanes existed; with several, lane i runs with
      CUDA_VISIBLE_DEVICES (ZE_AFFINITY_MASK) set to the i-th device, so its jobs see that device
      alone, and a device name and index go into each result.
    A job (one evaluate, one sweep) holds its lane from start to end, so a device times one candidate
    at a time, while independent requests run on different devices in parallel.
    """

    def __init__(self, python: str | None = None, cpu_workers: int = 1):
        self.python = python
        self.cpu_workers = max(1, cpu_workers)
        # The unpinned compiler zygote: resolves `auto`, counts devices, and is the lane of a one-device host.
        self._probe = Lane("compiler", Zygote(interpret=False, python=python))
        self._lanes: dict[str, list[Lane]] = {}
        self._idle: dict[str, queue.Queue[Lane]] = {}
        self._lock = threading.Lock()
        # Held while `auto` is probed, apart from `_lock`: a probe can take minutes on a cold start, and
        # `ping` (which reads the lanes) must answer meanwhile.
        self._resolving = threading.Lock()
        self._auto: str | None = None

    def _lanes_for(self, kind: str) -> queue.Queue[Lane]:
        with self._lock:
            if kind not in self._idle:
                lanes = self._make_lanes(kind)
                self._lanes[kind] = lanes
                idle: queue.Queue[Lane] = queue.Queue()
                for lane in lanes:
                    idle.put(lane)
                self._idle[kind] = idle
            return self._idle[kind]

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
        reply = self._probe.run({"kind": "probe", "args": {"device": kind}, "timeout": 120})
        count = reply.get("count")
        if not isinstance(count, int) or count < 2 or kind not in _PIN:
            return []
        inherited = [x.strip() for x in os.environ.get(_PIN[kind], "").split(",") if x.strip()]
        return inherited[:count] if len(inherited) >= count else [str(i) for i in range(count)]

    def run(self, kind: str, job: dict, cancelled: Cancelled | None = None) -> dict:
        idle = self._lanes_for(kind)
        lane = take_lane(idle, cancelled)
        if lane is None:
            return P.cancelled_result(job.get("kind"), "the client cancelled the job before a lane was free")
        try:
            return lane.run(job, cancelled)
        finally:
            idle.put(lane)

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
                self._auto = kind
            return self._auto, None

    def warm(self, kind: str) -> None:
        """Start every lane of `kind` now (in parallel), before the first request needs one."""
        self._lanes_for(kind)
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
        """Lanes per device kind: `cpu`'s configured count, and each kind whose lanes exist (the kind
        `auto` found is started by `serve` before the first request); `size` is `auto`'s kind's."""
        kinds = {"cpu": self.cpu_workers}
        with self._lock:
            kinds.update({kind: len(lanes) for kind, lanes in self._lanes.items()})
        return pool_report("local", self._auto, kinds)

    def close(self) -> None:
        with self._lock:
            lanes = {id(lane): lane for lane in [self._probe] + [x for group in self._lanes.values() for x in group]}
            self._lanes.clear()
            self._idle.clear()
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


def take_lane(idle: queue.Queue, cancelled: Cancelled | None):
    """The next free lane, waiting as long as it takes; None once `cancelled` says so first."""
    if cancelled is None:
        return idle.get()
    while not cancelled():
        try:
            return idle.get(timeout=_CANCEL_POLL_S)
        except queue.Empty:
            continue
    return None


def pool_report(backend: str, auto: str | None, kinds: dict[str, int]) -> dict:
    """`ping`'s `pool`: jobs that can run at once per device kind, and `size`, the count for the kind
    `auto` resolves to (1 while that is not known yet: one job at a time is always safe)."""
    return {"backend": backend, "kind": auto, "size": max(1, kinds.get(auto, 1)) if auto else 1, "kinds": kinds}


def make_backend(ray: str | None = None, cpu_workers: int = 1) -> Backend:
    """The local lanes, or with `ray` (an address: `auto`, `local`, `ray://host:10001`, `host:port`)
    the Ray backend (`raypool`); a Ray that cannot start gives `Unavailable`, saying why."""
    if not ray:
        return Workers(cpu_workers=cpu_workers)
    from .raypool import RayUnavailable, RayWorkers

    try:
        return RayWorkers(ray, cpu_workers=cpu_workers)
    except RayUnavailable as e:
        print(f"xeforge_harness: {e}", file=sys.stderr)
        return Unavailable(str(e))
