"""Requests → jobs: what the CLI and `serve` do with a probe or evaluate request.

Everything that can be checked without torch (argument types, files, the spec) is checked here in
the parent, so those errors cost no process start and name the offending field.
"""

from __future__ import annotations

import os

from . import protocol as P
from .pool import Workers
from .spec import SpecError, find_spec_for, load_spec


def evaluate(raw_args: dict, workers: Workers) -> dict:
    try:
        args = P.EvaluateArgs.from_mapping(raw_args)
    except P.ArgsError as e:
        return P.error_result(str(e), field=e.field)
    checked = _checked(args, {"candidate": args.candidate}, workers)
    if "verdict" in checked:
        return checked
    job_args = {**_job_args(args, checked), "candidate": checked["candidate"]}
    return workers.for_device(checked["device"]).run({"kind": "evaluate", "args": job_args, "timeout": args.timeout})


def sweep(raw_args: dict, workers: Workers) -> dict:
    """Several candidates of one problem in one job (see `child.evaluate.sweep`)."""
    try:
        args = P.SweepArgs.from_mapping(raw_args)
    except P.ArgsError as e:
        return P.sweep_failed(P.error_result(str(e), field=e.field))
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
    return workers.for_device(checked["device"]).run({"kind": "sweep", "args": job_args, "timeout": limit})


def _checked(args: P.EvaluateArgs, candidates: dict[str, str], workers: Workers) -> dict:
    """Files, spec and device checked before any process starts: the resolved paths and device, or an
    `error` result naming the offending field."""
    paths = {"kernel": args.kernel, **candidates, "reference": args.reference, "spec": args.spec}
    for name, path in paths.items():
        if path is not None and not os.path.isfile(path):
            return P.error_result(f"argument '{name}': no such file: {path}", field=name)
    resolved = {k: os.path.abspath(v) if v else None for k, v in paths.items()}

    spec_path = resolved["spec"] or find_spec_for(resolved["kernel"])
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


def probe(raw_args: dict, workers: Workers) -> dict:
    if not isinstance(raw_args, dict):
        return P.error_result("argument 'args': expected a JSON object", field="args")
    device = raw_args.get("device", "auto")
    if device not in P.DEVICES:
        return P.error_result(f"argument 'device': expected one of {', '.join(P.DEVICES)}, got {device!r}", field="device")
    kind, failure = workers.resolve(device)
    if failure is not None:
        return failure
    return workers.for_device(kind).run({"kind": "probe", "args": {"device": kind}, "timeout": 120})
