"""Entry point of a forked child: run one job and return its result; never raises."""

from __future__ import annotations

import json
import os
import time
import traceback

from .. import protocol as P
from ..gate import DEVICE, MODES

# Tests only: accept `script` jobs (sleeps in given permits of the device, no code of anyone's), with
# which the pool and the gate are checked in fractions of a second instead of whole evaluations.
SCRIPT_JOBS_ENV = "XEFORGE_HARNESS_SCRIPT_JOBS"


class _NoChannel:
    """Phases go nowhere when a job runs without a zygote (unit tests)."""

    def __call__(self, phase: str) -> None:
        pass

    def device(self, info: dict) -> None:
        pass

    def group(self, pgid: int) -> None:
        pass

    def permit(self, mode: str) -> float:
        return 0.0

    def release(self) -> None:
        pass


def run(job: dict, phase=None) -> dict:
    """`phase` is the zygote's `Channel`: where phases, the device and the candidate's group go."""
    started = time.monotonic()
    phase = phase or _NoChannel()
    try:
        kind = job.get("kind")
        if kind == "probe":
            phase.permit(DEVICE)  # it starts the device's runtime: not beside another job's timing
            result = probe(job.get("args") or {}, phase)
        elif kind == "evaluate":
            from .evaluate import evaluate

            result = evaluate(P.EvaluateArgs.from_mapping(job.get("args")), phase)
        elif kind == "sweep":
            from .evaluate import sweep

            result = sweep(P.SweepArgs.from_mapping(job.get("args")), phase)
        elif kind == "script" and os.environ.get(SCRIPT_JOBS_ENV) == "1":
            result = script(job.get("args") or {}, phase)
        else:
            result = P.error_result(f"unknown job kind {kind!r}")
    except P.ArgsError as e:
        result = P.error_result(str(e))
    except Exception as e:  # a harness bug must still produce a reply
        result = P.error_result(f"harness failure: {type(e).__name__}: {e}", traceback.format_exc())
    result.setdefault("elapsed", {})["child_s"] = round(time.monotonic() - started, 4)
    return result


def probe(args: dict, phase) -> dict:
    from . import device

    phase("setup")
    requested = args.get("device", "auto")
    if requested not in P.DEVICES:
        return P.error_result(f"argument 'device': expected one of {', '.join(P.DEVICES)}, got {requested!r}")
    try:
        kind = device.resolve(requested)
    except device.DeviceError as e:
        return P.error_result(str(e))
    return {
        "ok": True,
        "device": device.describe(kind),
        "properties": device.properties(kind),
        "count": device.count(kind),
        "available": {k: device.available(k) for k in ("xpu", "cuda", "cpu")},
        "log": "",
    }


def script(args: dict, phase) -> dict:
    """A test's stand-in for an evaluation: `steps`, each `[mode, seconds]` (hold `device` or `timing`
    and sleep), `["release", 0]`, `["crash", 0]` (die on a signal, holding what it holds),
    `["hang", seconds]`, or `["oom", 0]` (end as out of device memory, when the device is shared).
    Each step's activity (when it held its permit and slept) is appended to `args.log` as a JSON
    line, so a test can check from the jobs' side what ran at once."""
    name = str(args.get("name", "job"))
    log = args.get("log")
    for mode, seconds in args.get("steps") or []:
        if mode == "crash":
            os.kill(os.getpid(), 9)
        if mode == "release":
            phase.release()
            continue
        if mode == "oom":  # as a worker out of device memory would, but only beside other jobs
            if getattr(phase, "shared", False):
                return {"ok": False, "name": name, "out_of_memory": True, "message": "out of device memory", "log": ""}
            continue
        if mode in MODES:
            phase(f"script:{mode}")
            phase.permit(mode)
        t0 = time.monotonic()
        time.sleep(float(seconds))
        if log and mode in MODES:
            line = json.dumps({"job": name, "mode": mode, "t0": t0, "t1": time.monotonic(), "zygote": os.getppid()}) + "\n"
            fd = os.open(str(log), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
    return {"ok": True, "name": name, "log": ""}
