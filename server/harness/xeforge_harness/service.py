"""Requests → jobs: what the CLI and `serve` do with a probe or evaluate request.

Everything that can be checked without torch (argument types, files, the spec) is checked here in
the parent, so those errors cost no process start and name the offending field.
"""

from __future__ import annotations

import os

from . import files
from . import protocol as P
from .pool import Backend, Cancelled
from .spec import SpecError, find_spec_for, load_spec


def evaluate(raw_args: dict, workers: Backend, *, paths_allowed: bool = True, cancelled: Cancelled | None = None) -> dict:
    """One candidate. `paths_allowed` false (HTTP): every file must come as contents (files.py).
    `cancelled`: polled while the job waits for a lane and runs (a stdio `cancel`)."""
    try:
        with files.received(raw_args, paths_allowed=paths_allowed) as (raw, names):
            return files.unplace(_evaluate(raw, workers, names, cancelled), names)
    except P.ArgsError as e:
        return P.error_result(str(e), field=e.field)


def _evaluate(raw_args: dict, workers: Backend, names: dict[str, str], cancelled: Cancelled | None) -> dict:
    args = P.EvaluateArgs.from_mapping(raw_args)
    checked = _checked(args, {"candidate": args.candidate}, workers)
    if "verdict" in checked:
        return checked
    job_args = {**_job_args(args, checked), "candidate": checked["candidate"]}
    verified = _verified(checked, ("kernel", "candidate", "spec", "reference"), names)
    result = workers.run(checked["device"], {"kind": "evaluate", "args": job_args, "timeout": args.timeout}, cancelled)
    return _named(result, verified)


def sweep(raw_args: dict, workers: Backend, *, paths_allowed: bool = True, cancelled: Cancelled | None = None) -> dict:
    """Several candidates of one problem in one job (see `child.evaluate.sweep`)."""
    try:
        with files.received(raw_args, paths_allowed=paths_allowed) as (raw, names):
            return files.unplace(_sweep(raw, workers, names, cancelled), names)
    except P.ArgsError as e:
        return P.sweep_failed(P.error_result(str(e), field=e.field))


def _sweep(raw_args: dict, workers: Backend, names: dict[str, str], cancelled: Cancelled | None) -> dict:
    args = P.SweepArgs.from_mapping(raw_args)
    named = {f"candidates[{i}]": c for i, c in enumerate(args.candidates)}
    checked = _checked(args.base, named, workers)
    if "verdict" in checked:
        return P.sweep_failed(checked)
    job_args = {
        **_job_args(args.base, checked),
        "candidates": [checked[k] for k in named],
        "budget_s": args.budget_s,
        "min_candidates": args.min_candidates,
    }
    # The zygote's limit: the trusted side's setup, then each candidate's own limit; a budget caps it.
    per = args.base.timeout
    limit = per * (1 + len(args.candidates))
    if args.budget_s is not None:
        limit = min(limit, args.budget_s + 2 * per)
    shared = _verified(checked, ("kernel", "spec", "reference"), names)
    per_candidate = [_verified(checked, (k,), names)[k] for k in named]
    result = workers.run(checked["device"], {"kind": "sweep", "args": job_args, "timeout": limit}, cancelled)
    result["files"] = {**shared, "candidates": per_candidate}
    for i, one in enumerate(result.get("results") or []):
        # Results come in candidate order; a sweep stopped early has fewer.
        if isinstance(one, dict) and i < len(per_candidate):
            _named(one, {**shared, "candidate": per_candidate[i]})
    return result


def _verified(checked: dict, keys: tuple[str, ...], names: dict[str, str]) -> dict:
    """What the job will read, hashed now: name (the client's, or the path), bytes, sha256."""
    return {k: files.describe(checked[k], names.get(checked[k])) for k in keys if checked.get(k)}


def _named(result: dict, verified: dict) -> dict:
    """The result with `files`: exactly which contents it is a verdict on."""
    if isinstance(result, dict):
        result["files"] = verified
    return result


def _checked(args: P.EvaluateArgs, candidates: dict[str, str], workers: Backend) -> dict:
    """Files, spec and device checked before any process starts: the resolved paths and device, or an
    `error` result naming the offending field."""
    paths = {"kernel": args.kernel, **candidates, "reference": args.reference, "spec": args.spec}
    for name, path in paths.items():
        if path is not None and not os.path.isfile(path):
            return P.error_result(f"argument '{name}': no such file: {path}", field=name)
    resolved = {k: os.path.abspath(v) if v else None for k, v in paths.items()}

    kernel = resolved["kernel"]
    spec_path = resolved["spec"] or (find_spec_for(kernel) if kernel else None)
    if spec_path is not None:
        try:
            spec = load_spec(spec_path)
            spec.resolve_family(args.family)
            if args.timing_family:
                spec.resolve_family(args.timing_family)
        except SpecError as e:
            return P.error_result(str(e), field=f"spec.{e.field}" if e.field != "family" else "family")
    elif args.family:
        return P.error_result("argument 'family': there is no spec to take a variant family from", field="family")

    kind, failure = workers.resolve(args.device)
    if failure is not None:
        return failure
    return {**resolved, "spec": spec_path, "device": kind}


def _job_args(args: P.EvaluateArgs, checked: dict) -> dict:
    """Every argument the job needs, the paths resolved (all fields, so none is lost on the way)."""
    out = {name: getattr(args, name) for name in P.EvaluateArgs.__dataclass_fields__ if name != "candidate"}
    out.update(kernel=checked["kernel"], reference=checked["reference"], spec=checked["spec"], device=checked["device"])
    return out


def probe(raw_args: dict, workers: Backend, cancelled: Cancelled | None = None) -> dict:
    if not isinstance(raw_args, dict):
        return P.error_result("argument 'args': expected a JSON object", field="args")
    device = raw_args.get("device", "auto")
    if device not in P.DEVICES:
        return P.error_result(f"argument 'device': expected one of {', '.join(P.DEVICES)}, got {device!r}", field="device")
    kind, failure = workers.resolve(device)
    if failure is not None or kind is None:
        return failure or P.error_result("the harness could not tell which device to use", field="device")
    return workers.run(kind, {"kind": "probe", "args": {"device": kind}, "timeout": 120}, cancelled)
