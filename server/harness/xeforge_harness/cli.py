"""`python -m xeforge_harness probe | evaluate | serve` — see README.md for the JSON."""

from __future__ import annotations

import argparse
import json
import sys

from . import __version__, envsafe, service
from . import protocol as P
from .pool import make_backend


class _Parser(argparse.ArgumentParser):
    """Usage errors are harness errors too: one JSON object on stdout, exit status 2."""

    def error(self, message: str):  # type: ignore[override,unused-ignore]
        print(json.dumps(P.error_result(f"usage: {message}")))
        self.print_usage(sys.stderr)
        sys.exit(2)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m xeforge_harness", description="Verify Triton kernel rewrites: correct, guarded, faster.")
    p.add_argument("--version", action="version", version=f"xeforge_harness {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    pr = sub.add_parser("probe", help="describe the device the harness would use")
    pr.add_argument("--device", default="auto", choices=P.DEVICES)

    ev = sub.add_parser("evaluate", help="evaluate one candidate against the original kernel")
    ev.add_argument("--kernel", required=True, help="the original kernel file (class Model)")
    ev.add_argument("--candidate", required=True, help="the rewrite to verify")
    ev.add_argument("--spec", help="AI Bench YAML spec (default: <kernel>.yaml beside the kernel)")
    ev.add_argument("--reference", help="a PyTorch reference with its own Model (default: the original kernel)")
    ev.add_argument("--device", default="auto", choices=P.DEVICES)
    ev.add_argument("--family", help="variant family to check (default: ci, else the spec's default_variant)")
    ev.add_argument("--seeds", type=int, default=P.DEFAULT_SEEDS)
    ev.add_argument("--timeout", type=float, default=P.DEFAULT_TIMEOUT_S, help="wall-clock limit for the candidate's process, seconds")
    ev.add_argument("--no-timing", action="store_true")
    ev.add_argument("--timing-family", help="time on this family's largest variant (default: the checked family)")
    ev.add_argument("--runs", type=int, default=100, help="timed baseline/candidate pairs (GPU only)")
    ev.add_argument("--stop-below", type=float, help="stop timing once the interval lies below this speedup (sequential stopping)")
    ev.add_argument("--warmup", type=int, default=25, help="untimed pairs before timing (GPU only)")
    ev.add_argument(
        "--search-timed",
        action="store_true",
        help="with --no-timing: one untimed call on each timing-family variant (its compiles and autotune searches)",
    )
    ev.add_argument("--target-kernel", help="the Triton kernel a stage works on: the original must launch it on the checked inputs")

    sw = sub.add_parser("sweep", help="judge several candidates of one problem, one after another (one trusted side)")
    sw.add_argument("--kernel", required=True, help="the original kernel file")
    sw.add_argument("--candidate", required=True, action="append", dest="candidates", help="a rewrite to verify (repeat)")
    for flag in ("--spec", "--reference", "--family", "--timing-family", "--target-kernel"):
        sw.add_argument(flag)
    sw.add_argument("--device", default="auto", choices=P.DEVICES)
    sw.add_argument("--seeds", type=int, default=P.DEFAULT_SEEDS)
    sw.add_argument("--timeout", type=float, default=P.DEFAULT_TIMEOUT_S, help="wall-clock limit per candidate, seconds")
    sw.add_argument("--no-timing", action="store_true")
    sw.add_argument("--runs", type=int, default=100)
    sw.add_argument("--warmup", type=int, default=25)
    sw.add_argument("--stop-below", type=float)
    sw.add_argument("--budget", type=float, dest="budget_s", help="start no candidate that would not fit in this many seconds")
    sw.add_argument("--min-candidates", type=int, default=1, help="judged whatever the budget says")

    sv = sub.add_parser("serve", help="answer JSON requests on stdin/stdout, or over HTTP")
    sv.add_argument("--http", metavar="HOST:PORT", help="serve POST /evaluate and /probe on this address instead of stdio")
    sv.add_argument(
        "--max-body", type=int, default=None, metavar="BYTES", help="largest HTTP request body accepted (default 8 MiB; 413 beyond)"
    )
    sv.add_argument("--cpu-workers", type=int, default=1, help="interpreter workers that judge candidates at once on the CPU")
    sv.add_argument(
        "--jobs-per-device",
        type=int,
        default=1,
        metavar="N",
        help="jobs each device (each interpreter lane) runs at once: their setup, compile and correctness may overlap, "
        "a timed comparison has the device to itself (default 1: a job has its device to itself)",
    )
    for sp in (pr, ev, sw, sv):
        sp.add_argument(
            "--ray",
            metavar="ADDRESS",
            help="run jobs on a Ray cluster: auto (RAY_ADDRESS or this machine's cluster, else a private one), local, ray://HOST:10001, HOST:PORT",
        )
    return p


def main(argv: list[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    envsafe.protect_process()  # the process that prints the verdict: no candidate may write into it
    if ns.command == "serve":
        from . import serve

        return serve.main(ns.http, ns.max_body or serve.DEFAULT_MAX_BODY, ns.cpu_workers, ns.ray, ns.jobs_per_device)

    with make_backend(ns.ray) as workers:
        if ns.command == "probe":
            result = service.probe({"device": ns.device}, workers)
        elif ns.command == "sweep":
            raw = {
                k: getattr(ns, k)
                for k in (
                    "kernel",
                    "candidates",
                    "spec",
                    "reference",
                    "device",
                    "family",
                    "seeds",
                    "timeout",
                    "no_timing",
                    "runs",
                    "warmup",
                    "timing_family",
                    "stop_below",
                    "budget_s",
                    "min_candidates",
                    "target_kernel",
                )
            }
            result = service.sweep(raw, workers)
        else:
            raw = {
                k: getattr(ns, k)
                for k in (
                    "kernel",
                    "candidate",
                    "spec",
                    "reference",
                    "device",
                    "family",
                    "seeds",
                    "timeout",
                    "no_timing",
                    "runs",
                    "warmup",
                    "timing_family",
                    "stop_below",
                    "search_timed",
                    "target_kernel",
                )
            }
            result = service.evaluate(raw, workers)
    print(P.dumps(result))
    return P.exit_status(result)
