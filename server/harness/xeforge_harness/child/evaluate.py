"""One evaluation, inside the child: compile, correctness over variants × seeds, guard, timing.

Every outcome leaves through `Stop` (a verdict with a message) or a normal return; `job.run` turns
anything else into `error`. The phase file tells the zygote which side (reference or candidate) was
running if this process dies or hangs.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .. import protocol as P
from ..spec import Spec, SpecError, Variant, load_spec
from . import compile_meta, device, guard, inputs, integrity, loading, timing
from .compare import aliased_inputs, changed_inputs, compare_one, default_tolerance, fingerprint, flatten


class Stop(Exception):
    def __init__(self, verdict: str, message: str, detail: str = ""):
        super().__init__(message)
        self.verdict = verdict
        self.message = message
        self.detail = detail


@dataclass
class Problem:
    kind: str
    spec: Spec | None
    family: str | None
    original: Any
    reference: Any  # None: the original is the reference
    candidate: Any = None
    snapshot: Any = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Timed:
    name: str
    size: int
    original: Any
    candidate: Any
    args: list


def _short(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip()
    return text if len(text) < 600 else text[:600] + "…"


def _is_compile_failure(e: BaseException) -> bool:
    try:
        from triton.compiler.errors import CompilationError
        from triton.runtime.errors import OutOfResources, PTXASError
    except ImportError:  # older Triton layouts: fall back to names
        return type(e).__name__ in {"CompilationError", "OutOfResources", "PTXASError"}
    return isinstance(e, (CompilationError, OutOfResources, PTXASError))


def candidate_failure(e: BaseException, what: str) -> Stop:
    if _is_compile_failure(e):
        return Stop(P.COMPILE_ERROR, f"the candidate's kernel does not compile ({what}): {_short(e)}", traceback.format_exc())
    if isinstance(e, torch.OutOfMemoryError):
        return Stop(P.RUNTIME_ERROR, f"the candidate ran out of device memory ({what}): {_short(e)}", traceback.format_exc())
    return Stop(P.RUNTIME_ERROR, f"the candidate failed ({what}): {_short(e)}", traceback.format_exc())


def evaluate(args: P.EvaluateArgs, phase: Callable[[str], None]) -> dict:
    result: dict = {"verdict": None, "message": ""}
    log: list[str] = []
    try:
        problem = _prepare(args, phase, result)
        _run(args, problem, phase, result)
        log.extend(problem.notes)
    except Stop as s:
        result["verdict"] = s.verdict
        result["message"] = s.message
        if s.verdict == P.ERROR:
            result["error"] = s.message
        if s.detail:
            log.append(s.detail)
    _fill_sections(result)
    result["log"] = "\n".join(log)
    return result


def _fill_sections(result: dict) -> None:
    """Every verdict carries every section, so clients need not special-case early stops."""
    verdict = result["verdict"]
    reached_candidate = verdict not in (P.ERROR, P.COMPILE_ERROR)
    result.setdefault("device", None)
    result.setdefault("compile", {"ok": False if verdict == P.COMPILE_ERROR else None, "configs": []})
    result.setdefault("correctness", {"ok": False if reached_candidate else None, "variants": []})
    result.setdefault("guard", {"ok": None, "new_torch_ops": []})
    result.setdefault("timing", timing.not_meaningful(f"not measured: verdict {verdict}"))


def _prepare(args: P.EvaluateArgs, phase, result: dict) -> Problem:
    phase("setup")
    try:
        kind = device.resolve(args.device)
    except device.DeviceError as e:
        raise Stop(P.ERROR, str(e)) from None
    device.prepare(kind)
    result["device"] = device.describe(kind)
    if hasattr(phase, "device"):
        phase.device(result["device"])

    spec = None
    if args.spec:
        try:
            spec = load_spec(args.spec)
        except SpecError as e:
            raise Stop(P.ERROR, str(e)) from None
    family = None
    if spec is not None:
        try:
            family = spec.resolve_family(args.family)
        except SpecError as e:
            raise Stop(P.ERROR, str(e)) from None

    phase("reference:import")
    original = _import_trusted(args.kernel, "original", "the original kernel file")
    reference = _import_trusted(args.reference, "reference", "the reference file") if args.reference else None
    if loading.model_class(original) is None:
        raise Stop(P.ERROR, f"the original kernel file defines no class Model: {args.kernel}")
    if reference is not None and loading.model_class(reference) is None:
        raise Stop(P.ERROR, f"the reference file defines no class Model: {args.reference}")
    source = reference if reference is not None and hasattr(reference, "get_inputs") else original
    if spec is None and not hasattr(source, "get_inputs"):
        raise Stop(P.ERROR, "no spec (none given, no <kernel>.yaml beside the kernel) and the kernel file defines no get_inputs()")
    problem = Problem(kind=kind, spec=spec, family=family, original=original, reference=reference)

    phase("candidate:import")
    problem.snapshot = integrity.Snapshot()
    try:
        problem.candidate = loading.import_file(args.candidate, "candidate")
    except SyntaxError as e:
        where = f"line {e.lineno}" + (f", column {e.offset}" if e.offset else "")
        raise Stop(P.COMPILE_ERROR, f"the candidate has a syntax error at {where}: {e.msg}", traceback.format_exc()) from None
    except BaseException as e:  # noqa: BLE001  (SystemExit from a candidate is a failure too)
        raise Stop(P.COMPILE_ERROR, f"the candidate does not import: {_short(e)}", traceback.format_exc()) from None
    _check_integrity(problem)
    if loading.model_class(problem.candidate, allow_model_new=True) is None:
        raise Stop(P.COMPILE_ERROR, "the candidate defines no class Model")
    return problem


def _check_integrity(problem: Problem) -> None:
    changed = problem.snapshot.changed() if problem.snapshot is not None else []
    if changed:
        shown = ", ".join(changed[:8]) + (f" and {len(changed) - 8} more" if len(changed) > 8 else "")
        raise Stop(P.REJECTED, f"the candidate replaces functions the verification relies on: {shown}")


def _import_trusted(path: str, role: str, what: str):
    try:
        return loading.import_file(path, role)
    except BaseException as e:  # noqa: BLE001
        raise Stop(P.ERROR, f"{what} does not import ({path}): {_short(e)}", traceback.format_exc()) from None


def _run(args: P.EvaluateArgs, problem: Problem, phase, result: dict) -> None:
    kind = problem.kind
    variants: list[Variant | None] = list(problem.spec.variants(problem.family)) if problem.spec else [None]
    original_ops: set[str] = set()
    candidate_ops: set[str] = set()
    reports: list[dict] = []
    result["correctness"] = {"ok": False, "family": problem.family, "variants": reports}
    result["guard"] = {"ok": True, "new_torch_ops": []}
    result["compile"] = {"ok": True, "configs": []}
    result["timing"] = timing.not_meaningful("not measured: the candidate is not shown correct")
    timed: Timed | None = None
    failure: Stop | None = None

    for variant in variants:
        report, failure, sample = _check_variant(args, problem, variant, phase, original_ops, candidate_ops)
        reports.append(report)
        if sample is not None and (timed is None or sample.size > timed.size):
            timed = sample
        if failure is not None:
            break

    _check_integrity(problem)
    new_ops = guard.new_compute_ops(candidate_ops, original_ops)
    result["guard"] = {"ok": not new_ops, "new_torch_ops": new_ops}
    result["compile"] = _compile_report(problem)
    if new_ops:
        raise Stop(P.REJECTED, "the candidate runs PyTorch operators the original kernel file does not: " + ", ".join(new_ops))
    if failure is not None:
        raise failure
    result["correctness"]["ok"] = True

    if kind == "cpu":
        result["timing"] = timing.not_meaningful("the Triton interpreter on CPU: times say nothing about a GPU; no speedup is claimed")
    elif args.no_timing:
        result["timing"] = timing.not_meaningful("timing was not requested (--no-timing)")
    elif timed is None:
        result["timing"] = timing.not_meaningful("no variant to time")
    else:
        phase("candidate:timing")
        try:
            result["timing"] = timing.measure(
                lambda: timed.original(*timed.args),
                lambda: timed.candidate(*timed.args),
                kind,
                args.runs,
                args.warmup,
            )
        except Exception as e:
            raise candidate_failure(e, "while timing") from None
        result["timing"]["variant"] = timed.name
        verdict = timing.classify(result["timing"])
        t = result["timing"]
        lo, hi = t["speedup_ci95"]
        if verdict == "faster":
            result.update(verdict=P.ACCEPTED, message=f"correct and faster: {t['speedup']:.3f}x (95% interval {lo:.3f}–{hi:.3f})")
        elif verdict == "slower":
            result.update(verdict=P.SLOWER, message=f"correct but slower: {t['speedup']:.3f}x (95% interval {lo:.3f}–{hi:.3f})")
        else:
            result.update(verdict=P.CORRECT, message=f"correct; not shown faster: {t['speedup']:.3f}x (95% interval {lo:.3f}–{hi:.3f})")
        return
    result.update(verdict=P.CORRECT, message="correct on every variant and seed; " + result["timing"]["reason"])


def _compile_report(problem: Problem) -> dict:
    if problem.kind == "cpu":
        return {"ok": True, "configs": [], "metadata_available": False,
                "note": "the Triton interpreter compiles nothing: no shared memory, register or spill figures"}
    try:
        configs = compile_meta.collect(problem.candidate) if problem.candidate is not None else []
    except Exception as e:  # metadata is a report, never a reason to fail a candidate
        return {"ok": True, "configs": [], "metadata_available": False, "note": f"could not read Triton's kernel cache: {_short(e)}"}
    return {"ok": True, "configs": configs, "metadata_available": True}


def _numel(args: list) -> int:
    return sum(a.numel() for a in args if isinstance(a, torch.Tensor))


def _check_variant(args, problem: Problem, variant: Variant | None, phase, original_ops: set, candidate_ops: set):
    """Returns (report, failure or None, timing sample or None)."""
    kind, dev = problem.kind, device.torch_device(problem.kind)
    name = variant.name if variant is not None else "default"
    spec = problem.spec
    source = problem.reference if problem.reference is not None and hasattr(problem.reference, "get_inputs") else problem.original
    dtype = variant.dtype if variant is not None else None
    report: dict = {"name": name, "seeds": 0, "max_abs": 0.0, "rel_err": 0.0}

    phase("reference:init")
    try:
        init_args = spec.init_args(variant) if variant is not None else inputs.file_init_args(source)
        ref_cls = loading.model_class(problem.reference or problem.original)
        ref_model = inputs.build_model(ref_cls, init_args, dev, dtype)
        orig_model = ref_model if problem.reference is None else inputs.build_model(loading.model_class(problem.original), init_args, dev, dtype)
    except Exception as e:
        raise Stop(P.ERROR, f"the reference model cannot be built for {name}: {_short(e)}", traceback.format_exc()) from None

    phase("candidate:init")
    try:
        cand_model = inputs.build_model(loading.model_class(problem.candidate, allow_model_new=True), init_args, dev, dtype)
    except Exception as e:
        raise candidate_failure(e, f"building Model for {name}") from None
    note = inputs.copy_weights(ref_model, cand_model)
    if note:
        problem.notes.append(f"{name}: candidate {note}")
    if orig_model is not ref_model:
        note = inputs.copy_weights(ref_model, orig_model)
        if note:
            problem.notes.append(f"{name}: original {note}")

    ref_prints, cand_prints = [], []
    sample = None
    for n, seed in enumerate(inputs.seeds(args.seeds)):
        phase("reference:inputs")
        try:
            base = inputs.spec_inputs(spec, variant, seed, dev) if variant is not None else inputs.file_inputs(source, seed, dev)
        except Exception as e:
            raise Stop(P.ERROR, f"cannot make inputs for {name}: {_short(e)}", traceback.format_exc()) from None

        phase("reference:forward")
        ref_args = inputs.clone_args(base)
        try:
            with torch.no_grad(), guard.OpRecorder() as rec:
                ref_out = ref_model(*ref_args)
            device.synchronize(kind)
            if problem.reference is None:
                original_ops |= rec.ops
            elif n == 0:
                with torch.no_grad(), guard.OpRecorder() as rec_orig:
                    orig_model(*inputs.clone_args(base))
                device.synchronize(kind)
                original_ops |= rec_orig.ops
        except Exception as e:
            raise Stop(P.ERROR, f"the reference failed on {name}: {_short(e)}", traceback.format_exc()) from None
        ref_outs = flatten(ref_out)
        ref_changed = changed_inputs(base, ref_args)
        ref_alias = aliased_inputs(ref_outs, ref_args)

        phase("candidate:forward")
        cand_args = inputs.clone_args(base)
        try:
            with torch.no_grad(), guard.OpRecorder() as rec:
                cand_out = cand_model(*cand_args)
            device.synchronize(kind)
        except Exception as e:
            candidate_ops |= rec.ops
            raise candidate_failure(e, f"{name}, seed {seed}") from None
        candidate_ops |= rec.ops
        cand_outs = flatten(cand_out)
        report["seeds"] = n + 1

        phase("candidate:check")
        failure = _compare(name, seed, variant, ref_outs, cand_outs, report)
        if failure is None:
            failure = _check_memory(name, variant, base, ref_args, cand_args, ref_changed, ref_alias, cand_outs, report)
        if failure is not None:
            report["ok"] = False
            report["reason"] = failure
            return report, Stop(P.INCORRECT, failure), None
        ref_prints.append(fingerprint(ref_outs))
        cand_prints.append(fingerprint(cand_outs))
        if n == 0:
            sample = Timed(name, _numel(base), orig_model, cand_model, inputs.clone_args(base))

    if len(set(cand_prints)) == 1 and len(set(ref_prints)) > 1:
        reason = f"{name}: the candidate returns the same output for every seed while the reference's output changes"
        report["ok"] = False
        report["reason"] = reason
        return report, Stop(P.INCORRECT, reason), None
    report["ok"] = True
    return report, None, sample


def _compare(name, seed, variant, ref_outs, cand_outs, report) -> str | None:
    if len(ref_outs) != len(cand_outs):
        return f"{name}, seed {seed}: {len(cand_outs)} outputs, the reference returns {len(ref_outs)}"
    for j, (r, o) in enumerate(zip(ref_outs, cand_outs)):
        rtol, atol = default_tolerance(r.dtype) if isinstance(r, torch.Tensor) else (0.0, 0.0)
        if variant is not None:
            rtol = variant.rtol if variant.rtol is not None else rtol
            atol = variant.atol if variant.atol is not None else atol
        if j == 0:
            report["rtol"], report["atol"] = rtol, atol
        diff = compare_one(r, o, rtol, atol, f"{name}, seed {seed}, output {j}")
        report["max_abs"] = max(report["max_abs"], diff.max_abs)
        report["rel_err"] = max(report["rel_err"], diff.rel_err)
        if not diff.ok:
            return diff.reason
    return None


def _check_memory(name, variant, base, ref_args, cand_args, ref_changed, ref_alias, cand_outs, report) -> str | None:
    for j, i in aliased_inputs(cand_outs, cand_args).items():
        if ref_alias.get(j) != i:
            return f"{name}: output {j} is input {i} (shares its memory); the reference returns a new tensor"
    for i in changed_inputs(base, cand_args):
        if i not in ref_changed:
            return f"{name}: the candidate modifies input {i}; the reference leaves it unchanged"
    for i in ref_changed:
        r, c = ref_args[i], cand_args[i]
        rtol, atol = default_tolerance(r.dtype)
        if variant is not None:
            rtol = variant.rtol if variant.rtol is not None else rtol
            atol = variant.atol if variant.atol is not None else atol
        diff = compare_one(r, c, rtol, atol, f"{name}, input {i} after the call")
        if not diff.ok:
            return diff.reason
    return None
