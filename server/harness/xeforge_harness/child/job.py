"""Entry point of a forked child: run one job and return its result; never raises."""

from __future__ import annotations

import time
import traceback

from .. import protocol as P


class _NoChannel:
    """Phases go nowhere when a job runs without a zygote (unit tests)."""

    def __call__(self, phase: str) -> None:
        pass

    def device(self, info: dict) -> None:
        pass

    def group(self, pgid: int) -> None:
        pass


def run(job: dict, phase=None) -> dict:
    """`phase` is the zygote's `Channel`: where phases, the device and the candidate's group go."""
    started = time.monotonic()
    phase = phase or _NoChannel()
    try:
        kind = job.get("kind")
        if kind == "probe":
            result = probe(job.get("args") or {}, phase)
        elif kind == "evaluate":
            from .evaluate import evaluate

            result = evaluate(P.EvaluateArgs.from_mapping(job.get("args")), phase)
        elif kind == "sweep":
            from .evaluate import sweep

            result = sweep(P.SweepArgs.from_mapping(job.get("args")), phase)
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
