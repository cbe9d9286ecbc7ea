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

    paths = {"kernel": args.kernel, "candidate": args.candidate, "reference": args.reference, "spec": args.spec}
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
    job_args = {
        "kernel": resolved["kernel"],
        "candidate": resolved["candidate"],
        "reference": resolved["reference"],
        "spec": spec_path,
        "device": kind,
        "family": args.family,
        "seeds": args.seeds,
        "timeout": args.timeout,
        "no_timing": args.no_timing,
        "runs": args.runs,
        "warmup": args.warmup,
        "timing_family": args.timing_family,
    }
    return workers.for_device(kind).run({"kind": "evaluate", "args": job_args, "timeout": args.timeout})


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
