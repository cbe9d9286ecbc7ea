"""Verdicts, request arguments and result envelopes shared by the CLI and `serve`."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

ACCEPTED = "accepted"
CORRECT = "correct"
SLOWER = "slower"
INCORRECT = "incorrect"
COMPILE_ERROR = "compile_error"
RUNTIME_ERROR = "runtime_error"
TIMEOUT = "timeout"
CRASHED = "crashed"
REJECTED = "rejected"
ERROR = "error"

VERDICTS = (ACCEPTED, CORRECT, SLOWER, INCORRECT, COMPILE_ERROR, RUNTIME_ERROR, TIMEOUT, CRASHED, REJECTED, ERROR)
CORRECT_VERDICTS = (ACCEPTED, CORRECT, SLOWER)  # the outputs matched; timing decides among these
DEVICES = ("auto", "xpu", "cuda", "cpu")

DEFAULT_SEEDS = 3
DEFAULT_TIMEOUT_S = 120.0
MIN_SEEDS = 3  # the contract's floor: fewer seeds cannot tell a constant output from a right one


class ArgsError(ValueError):
    """A request whose arguments are unusable; `field` names the argument."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"argument '{field}': {message}")


@dataclass(frozen=True)
class EvaluateArgs:
    kernel: str
    candidate: str
    spec: str | None = None
    reference: str | None = None
    device: str = "auto"
    family: str | None = None
    seeds: int = DEFAULT_SEEDS
    timeout: float = DEFAULT_TIMEOUT_S
    no_timing: bool = False
    runs: int = 100
    warmup: int = 25
    # Time on this family's largest variant instead of the checked family's (checked: small, timed: large).
    timing_family: str | None = None
    # Sequential stopping: end timing once the interval's upper end is below this ratio (decided slower
    # than the caller's best so far); checked every STOP_EVERY pairs from MIN_RUNS on.
    stop_below: float | None = None
    # With `no_timing`: after the checks, call the candidate once on each timing-family variant (inputs
    # made on the device, untimed, unchecked), so that what its first call of that shape does (compiles,
    # an autotuner's search) shows in the compile report. The verdict is the checked family's.
    search_timed: bool = False
    # The kernel a stage works on: the original must launch it on the checked inputs, or nothing checked
    # says anything about it (a wrapper that picks another kernel of the file by dtype or size).
    target_kernel: str | None = None

    @staticmethod
    def from_mapping(raw: Any) -> EvaluateArgs:
        """Arguments by the CLI flag names; `no-timing` and `no_timing` are both accepted."""
        if not isinstance(raw, dict):
            raise ArgsError("args", "expected a JSON object")
        args = {str(k).replace("-", "_"): v for k, v in raw.items()}
        known = set(EvaluateArgs.__dataclass_fields__)
        unknown = sorted(set(args) - known)
        if unknown:
            raise ArgsError(unknown[0], "unknown argument")
        for required in ("kernel", "candidate"):
            if not isinstance(args.get(required), str) or not args[required]:
                raise ArgsError(required, "a file path is required")
        for opt in ("spec", "reference", "family", "timing_family", "target_kernel"):
            if args.get(opt) is not None and not isinstance(args[opt], str):
                raise ArgsError(opt, "expected a string")
        device = args.get("device", "auto")
        if device not in DEVICES:
            raise ArgsError("device", f"expected one of {', '.join(DEVICES)}, got {device!r}")
        seeds = _int(args, "seeds", DEFAULT_SEEDS)
        if seeds < MIN_SEEDS:
            raise ArgsError("seeds", f"at least {MIN_SEEDS} seeds are required, got {seeds}")
        timeout = args.get("timeout", DEFAULT_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ArgsError("timeout", f"expected a positive number of seconds, got {timeout!r}")
        no_timing = args.get("no_timing", False)
        if not isinstance(no_timing, bool):
            raise ArgsError("no_timing", "expected true or false")
        search_timed = args.get("search_timed", False)
        if not isinstance(search_timed, bool):
            raise ArgsError("search_timed", "expected true or false")
        if search_timed and not no_timing:
            raise ArgsError("search_timed", "only with no_timing (a timed evaluation runs the timed family anyway)")
        runs = _int(args, "runs", 100)
        warmup = _int(args, "warmup", 25)
        if runs < 10:
            raise ArgsError("runs", "at least 10 timed pairs are needed for a 95% interval")
        if warmup < 1:
            raise ArgsError("warmup", "expected a positive count")
        stop_below = args.get("stop_below")
        if stop_below is not None and (isinstance(stop_below, bool) or not isinstance(stop_below, (int, float)) or not stop_below > 0):
            raise ArgsError("stop_below", f"expected a positive ratio, got {stop_below!r}")
        return EvaluateArgs(
            kernel=args["kernel"],
            candidate=args["candidate"],
            spec=args.get("spec"),
            reference=args.get("reference"),
            device=device,
            family=args.get("family"),
            seeds=seeds,
            timeout=float(timeout),
            no_timing=no_timing,
            runs=runs,
            warmup=warmup,
            timing_family=args.get("timing_family"),
            stop_below=float(stop_below) if stop_below is not None else None,
            search_timed=search_timed,
            target_kernel=args.get("target_kernel"),
        )


MAX_SWEEP = 64  # candidates in one sweep: one forked worker each, up front


@dataclass(frozen=True)
class SweepArgs:
    """Arguments of `sweep`: several candidates of one problem, judged one after another by one judge.

    The trusted side (the original imported, references computed, the original timed alone) is set
    up once; every candidate still gets a worker process of its own, forked before anything ran.
    `base` holds the shared arguments, its `candidate` the first candidate.
    """

    base: EvaluateArgs
    candidates: tuple[str, ...]
    # Stop starting candidates once the next one would not fit in this many seconds of the sweep.
    budget_s: float | None = None
    # Judged whatever the budget says.
    min_candidates: int = 1

    @staticmethod
    def from_mapping(raw: Any) -> SweepArgs:
        if not isinstance(raw, dict):
            raise ArgsError("args", "expected a JSON object")
        args = {str(k).replace("-", "_"): v for k, v in raw.items()}
        if "candidate" in args:
            raise ArgsError("candidate", "a sweep takes `candidates`, a list of files")
        candidates = args.pop("candidates", None)
        if not isinstance(candidates, list) or not candidates or not all(isinstance(c, str) and c for c in candidates):
            raise ArgsError("candidates", "a non-empty list of file paths is required")
        if len(candidates) > MAX_SWEEP:
            raise ArgsError("candidates", f"at most {MAX_SWEEP} candidates in one sweep, got {len(candidates)}")
        budget = args.pop("budget_s", None)
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget > 0):
            raise ArgsError("budget_s", f"expected a positive number of seconds, got {budget!r}")
        least = _int(args, "min_candidates", 1)
        args.pop("min_candidates", None)
        if least < 1:
            raise ArgsError("min_candidates", "expected a positive count")
        base = EvaluateArgs.from_mapping({**args, "candidate": candidates[0]})
        return SweepArgs(
            base=base, candidates=tuple(candidates), budget_s=float(budget) if budget is not None else None, min_candidates=least
        )


def _int(args: dict, name: str, default: int) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgsError(name, f"expected an integer, got {value!r}")
    return value


def error_result(message: str, log: str = "", **extra: Any) -> dict:
    """The envelope for verdict `error`: the harness itself could not run."""
    out = {"verdict": ERROR, "error": message, "message": message}
    out.update(extra)
    out["log"] = log
    return out


def sweep_failed(result: dict) -> dict:
    """A sweep that judged no candidate: its `error` result, with the sweep's own fields."""
    return {**result, "kind": "sweep", "results": []}


def cancelled_result(kind: str | None, why: str, **extra: Any) -> dict:
    """The reply to a job its client cancelled: an `error` marked `cancelled`, never a verdict (nobody
    waits for one); a sweep's has the sweep's own fields."""
    result = error_result(f"cancelled: {why}", cancelled=True, **extra)
    return sweep_failed(result) if kind == "sweep" else result


def dumps(result: Any) -> str:
    """One JSON line for a client: NaN and infinities (a `max_abs` of an output gone non-finite) are
    not JSON, so they are written as null, which the contract's optional numbers accept."""
    return json.dumps(_finite(result))


def _finite(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def exit_status(result: dict) -> int:
    return 2 if result.get("verdict") == ERROR else 0
