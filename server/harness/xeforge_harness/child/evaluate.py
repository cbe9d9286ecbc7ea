"""One evaluation, run by the judge: a process that never imports the candidate and never touches
the device.

The judge forks two workers first thing (`link.Link`): a trusted one with the original (and the
reference) and an untrusted one with the candidate. It asks the trusted worker for inputs and
reference outputs, hands the same inputs to the candidate's worker, gets raw output tensors back
(`wire`: no pickle, no subclasses) and compares them itself. It clocks the timed calls itself
(`timing`) and writes the verdict itself, to the zygote through a pipe no worker holds.

Every outcome leaves through `Stop` (a verdict with a message) or a normal return; `job.run` turns
anything else into `error`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from .. import protocol as P
from .. import wire
from ..gate import DEVICE, TIMING
from ..spec import EDGES, Spec, SpecError, Variant, load_spec
from . import entry, guard, search_effects, source, timing
from .compare import compare_one, default_tolerance, fingerprint, flatten, same_values
from .link import Died, Failed, Hung, Link, stray_processes
from .worker import give_to_sandbox, sandbox_uid

JUDGE_GRACE_S = 5.0  # the judge's own bookkeeping after the candidate's deadline


def _at(link, sep: str = " ") -> str:
    """Where a worker that hung was when it was stopped (`Link.stuck_at`), for the message."""
    where = link.stuck_at()
    return f"{sep}it was at {where}" if where else ""


class Stop(Exception):
    def __init__(self, verdict: str, message: str, detail: str = ""):
        super().__init__(message)
        self.verdict = verdict
        self.message = message
        self.detail = detail


@dataclass
class Reference:
    """What the trusted worker computed for one (variant, seed)."""

    inputs: tuple  # (tree, tensors)
    outputs: Any  # decoded value
    structure: Any
    changed: dict[int, Any]
    alias: dict[int, int]
    sizes: dict  # input and output sizes and output scales, for timing (see worker._sizes)


@dataclass
class Problem:
    kind: str
    spec: Spec | None
    family: str | None
    variants: list[Variant | None]
    refs: dict[str, list[Reference]] = field(default_factory=dict)
    models: dict[str, tuple] = field(default_factory=dict)  # variant → (reply, tensors) of `model`
    original_ops: set[str] = field(default_factory=set)
    original_kernels: set[str] = field(default_factory=set)
    original_launches: int = 0
    original_launched: set[str] = field(default_factory=set)  # the original's Triton kernels, by name
    notes: list[str] = field(default_factory=list)
    # Variants only timed (`timing_family`): built and run once on both sides, checked by the timed protocol.
    timed_only: list[Variant] = field(default_factory=list)
    # The range check (`Judge._stress_reference`): variant, reference on scaled inputs, the inputs scaled.
    stress: tuple[str, Reference, list[str]] | None = None
    # The edge check (`Judge._edge_reference`): the derived variant and its reference.
    edge: tuple[Variant, Reference] | None = None
    # The layout check (`Judge._layout_reference`): variant, seed, and the reference on relaid inputs.
    layout: tuple[str, int, Reference] | None = None
    # Whether the original itself reached past its arguments on a checked call (the interpreter's bounds).
    original_oob: list[str] = field(default_factory=list)
    # The dots and narrowing casts the original's kernels ran (the interpreter's record).
    original_precision: set[str] = field(default_factory=set)
    # Whether a call of the original changed what an earlier call had returned (a buffer it hands out again).
    original_overwrites: bool = False
    # Whether the original's own launches race (two programs writing one element), on the interpreter.
    original_races: bool = False


def _name(v: Variant | None) -> str:
    return v.name if v is not None else "default"


def _tolerance(variant: Variant | None, dtype) -> tuple[float, float]:
    rtol, atol = default_tolerance(dtype)
    if variant is not None:
        rtol = variant.rtol if variant.rtol is not None else rtol
        atol = variant.atol if variant.atol is not None else atol
    return rtol, atol


@dataclass
class Call:
    """One checked call of the candidate, as the judge reads it back."""

    record: dict
    out_tree: Any
    outputs: Any
    changed: dict[int, Any]
    alias: dict[int, int]


@dataclass
class Prepared:
    """What the trusted side set up once, before any candidate's code exists anywhere."""

    problem: Problem
    entry_name: str | None
    timed: Variant | None
    solo: dict | None
    notes: list[str]


class Judge:
    def __init__(self, args: P.EvaluateArgs, phase: Callable[[str], None], candidates: int = 1):
        self.args = args
        self.phase = phase
        self.deadline = time.monotonic() + args.timeout
        self.dirs = [tempfile.mkdtemp(prefix="xeforge-trusted-")] + [
            tempfile.mkdtemp(prefix="xeforge-candidate-") for _ in range(candidates)
        ]
        kind = args.device
        # Fork every worker before anything else runs here: no device state, no user code, no reference
        # output, nothing to inherit. A sweep's later candidates get workers forked now, not from a judge
        # that by then holds the reference outputs.
        self.trusted = Link("trusted", self.dirs[0], kind)
        # Read, not run: what the original (and the reference) import, for a sandboxed candidate to find.
        preload = [m for f in (args.kernel, args.reference) if f for m in source.imported_modules(source.read(f))]
        self.candidates = [Link("candidate", d, kind, preload) for d in self.dirs[1:]]
        for link in self.candidates:
            if hasattr(phase, "group"):
                phase.group(link.pid)
        self.candidate = self.candidates[0]
        self.candidate_dir = self.dirs[1]
        self.kind = kind
        self.trusted_asleep = False
        self.device_memory: int | None = None  # from the trusted worker's `describe`: sizes timed batches
        self._device: dict | None = None
        # The jobs its lane runs at once on this device (`serve --jobs-per-device`): beside others, the
        # job asks its zygote for the device's permits (see `hold`), and a timed batch may use only its
        # share of the device's memory.
        self.slots = int(getattr(phase, "slots", 1) or 1)
        self.shared = bool(getattr(phase, "shared", False))
        self._permits: Any = phase if self.shared else None  # the zygote's `Channel`: permit, release, held
        self.permit_wait_s = 0.0
        # A worker ran out of device memory while judging the current candidate: on a shared device the
        # result says so (`out_of_memory`), and the pool judges it again with the device to itself.
        self.out_of_memory = False
        self.strays = 0  # processes of the candidate found outside its group while the device was shared

    def hold(self, mode: str, again: bool = False) -> None:
        """From now on hold `mode` of the device: `DEVICE` (shared with other jobs' untimed phases) or
        `TIMING` (the device to this job alone). The one rule for a device shared by several jobs:
        this job's workers run only while it holds a permit, so the candidate's process group is
        stopped (SIGSTOP) while the judge waits for one; a job that waits for `TIMING` waits until no
        other job runs anything on the device, and nothing else starts there until it gives it back.
        `again`: ask anew for what is held (a queued timed comparison goes first). The time waited is
        not the candidate's: its deadline moves by as much. Nothing to do when the device is not shared."""
        permits = self._permits
        if permits is None or (permits.held == mode and not again):
            return
        self.candidate.pause()
        if self.candidate.status is None:
            # What left the candidate's process group would not be stopped: killed before the wait,
            # and the candidate rejected for it (`strays`), as the timed protocol does.
            self.strays += len(stray_processes(self.candidate.pid))
        try:
            waited = permits.permit(mode)
        finally:
            self.candidate.resume()
        self.deadline += waited
        self.permit_wait_s += waited
        if self.strays:
            raise Stop(P.REJECTED, f"the candidate left {self.strays} process(es) running outside its process group")

    def use(self, index: int, args: P.EvaluateArgs) -> None:
        """Judge the sweep's candidate `index` next (`args.candidate` its file), with its own deadline."""
        if self.candidate is not self.candidates[index]:
            try:
                self.candidate.close()  # the last one's device memory goes before the next one starts
            except Exception:  # noqa: BLE001
                pass
        self.candidate = self.candidates[index]
        self.candidate_dir = self.dirs[1 + index]
        self.args = args
        self.strays = 0
        self.hold(DEVICE, again=True)  # between candidates, a timed comparison waiting on the device goes first
        self.deadline = time.monotonic() + args.timeout

    def _give(self, path: str) -> str:
        """A copy of `path` in the candidate's own directory, readable by whoever the candidate runs as."""
        folder = os.path.join(self.candidate_dir, "files")
        os.makedirs(folder, exist_ok=True)
        target = os.path.join(folder, os.path.basename(path))
        if not os.path.exists(target):
            shutil.copyfile(path, target)
        give_to_sandbox(folder)
        return target

    def close(self) -> None:
        for link in (*self.candidates, self.trusted):
            try:
                link.close()
            except Exception:  # noqa: BLE001  (cleanup must not hide the verdict)
                pass
        if not os.environ.get("XEFORGE_KEEP_WORKDIR"):
            for d in self.dirs:
                shutil.rmtree(d, ignore_errors=True)

    # --- calls ---------------------------------------------------------------------------------

    def trusted_call(
        self, msg: dict, tensors: Sequence = (), what: str = "the original kernel file", wake: bool = True, may_fail: bool = False
    ):
        """`may_fail`: an exception the original raised comes back as `Failed` (its process goes on)."""
        # In the timed loop the trusted worker sleeps between requests (see timing._Awake).
        asleep = wake and self.trusted_asleep
        try:
            if asleep:
                self.trusted.resume()
            return self.trusted.call(msg, tensors, self.deadline + JUDGE_GRACE_S)
        except Failed as e:
            if may_fail and e.kind != "oom":
                raise
            self.out_of_memory |= e.kind == "oom"
            raise Stop(P.ERROR, f"{what} failed: {e.error}", e.trace) from None
        except Hung:
            raise Stop(
                P.ERROR, f"{what} did not finish within {self.args.timeout:g} s{_at(self.trusted)}", self.trusted.log_tail()
            ) from None
        except Died as e:
            raise Stop(P.ERROR, f"{what}: the trusted process {e.how}", self.trusted.log_tail()) from None
        finally:
            if asleep:
                self.trusted.pause()

    def candidate_call(self, msg: dict, tensors: Sequence = (), what: str = ""):
        try:
            return self.candidate.call(msg, tensors, self.deadline)
        except Failed as e:
            self.out_of_memory |= e.kind == "oom"
            raise _candidate_failure(e, what) from None
        except Hung:
            raise Stop(
                P.TIMEOUT,
                f"the candidate did not finish within {self.args.timeout:g} s (while in {self.current}{_at(self.candidate, '; ')})",
            ) from None
        except Died as e:
            if self.candidate.status is not None and os.WIFEXITED(self.candidate.status) and self.current == "candidate:import":
                raise Stop(P.COMPILE_ERROR, f"the candidate does not import: its process {e.how} while importing") from None
            raise Stop(P.CRASHED, f"the candidate {e.how} (while in {self.current})") from None

    def set_phase(self, name: str) -> None:
        self.current = name
        self.phase(name)

    # --- the evaluation ------------------------------------------------------------------------

    def run(self, result: dict) -> None:
        self.judge(self.prepare(result), result)

    def prepare(self, result: dict) -> Prepared:
        """The trusted side: device, problem, the original imported, references, the original timed alone."""
        args = self.args
        self.set_phase("setup")
        self.hold(DEVICE)
        reply, _ = self.trusted_call({"op": "describe"}, what="the device")
        result["device"] = self._device = reply["device"]
        self.device_memory = reply.get("memory")
        if hasattr(self.phase, "device"):
            self.phase.device(result["device"])
        problem = self._problem()

        self.set_phase("reference:import")
        files = {"original": args.kernel}
        if args.reference:
            files["reference"] = args.reference
        reply, _ = self.trusted_call({"op": "load", "files": files, "spec": args.spec}, what="importing the original kernel file")
        entry_name = problem.spec.entry if problem.spec is not None else None
        if not reply["has_model"]["original"]:
            raise Stop(P.ERROR, entry.missing_message("original", args.kernel, entry_name))
        if args.reference and not reply["has_model"]["reference"]:
            raise Stop(P.ERROR, entry.missing_message("reference", args.reference, entry_name))
        has_inputs = reply["has_get_inputs"].get("reference") or reply["has_get_inputs"]["original"]
        if problem.spec is None and not has_inputs:
            raise Stop(P.ERROR, "no spec (none given, no <kernel>.yaml beside the kernel) and the kernel file defines no get_inputs()")
        self._reference_runs(problem)
        if problem.original_launches == 0 and source.triton_kernels(source.read(args.kernel)):
            # Both sides would take the same other path: "correct" would say nothing about a kernel.
            raise Stop(
                P.ERROR,
                f"the original launched no Triton kernel on {', '.join(_name(v) for v in problem.variants)}: its entry "
                "computes these inputs some other way on this device (a wrapper that falls back to torch off the GPU, "
                "`if x.device.type != 'cuda'`, or below a size), so no check here would say anything about its kernels; "
                "run on the device the kernel is for (--device cuda or xpu), or give sizes that reach it",
            )
        target = args.target_kernel
        if target and problem.original_launches and target not in problem.original_launched:
            # Another kernel of the file ran: a check would pass whatever the candidate did to this one.
            raise Stop(
                P.ERROR,
                f"the original never launched `{target}` on {', '.join(_name(v) for v in problem.variants)}: its entry "
                f"ran {', '.join(f'`{k}`' for k in sorted(problem.original_launched))} instead (a wrapper that picks a "
                "kernel by dtype or size), so no check here would say anything about it; give inputs that reach it "
                "(the dtype or sizes its branch needs)",
            )
        if problem.original_oob:
            problem.notes.append(
                f"the original reaches past its arguments on the checked sizes ({problem.original_oob[0]}): the candidate "
                "is not held to its arguments' bounds either"
            )
        self._stress_reference(problem)
        self._edge_reference(problem)
        self._layout_reference(problem)
        reply, _ = self.trusted_call({"op": "searches"}, what="reading the original's autotune searches")
        for f in reply.get("changed") or []:
            problem.notes.append(
                f"the original's autotune search of `{f['kernel']}` changes {', '.join(f['args'])} in place (no restore_value): "
                "its reference is what one call computes"
            )
        # A timed-only variant's reference call gives the timing its sizes and the original's record;
        # with nothing timed only its entry is built (a candidate's is built beside it, see `judge`).
        self._reference_runs(problem, problem.timed_only, seeds=0 if args.no_timing else 1, summary=True)
        timed = self._timed_variant(problem)
        solo = None
        if timed is not None:
            self.set_phase("reference:timing")
            self.hold(TIMING)
            solo = timing.solo(self, problem, timed)
            self.hold(DEVICE)
        return Prepared(problem=problem, entry_name=entry_name, timed=timed, solo=solo, notes=list(problem.notes))

    def judge(self, prep: Prepared, result: dict) -> None:
        """One candidate (`self.args.candidate`, in `self.candidate`) against what `prepare` set up."""
        args = self.args
        problem, entry_name, timed, solo = prep.problem, prep.entry_name, prep.timed, prep.solo
        problem.notes = list(prep.notes)  # each candidate's notes start from the trusted side's
        result.setdefault("device", self._device)
        self.hold(DEVICE)
        reaching = source.new_reaching(source.read(args.kernel), source.read(args.candidate))
        unread = source.unread_imports(source.read(args.kernel), source.read(args.candidate), _installed_roots())
        if unread:
            raise Stop(
                P.REJECTED,
                f"the candidate imports {', '.join(f'`{m}`' for m in unread)}, which the original does not import and which "
                "is not installed: code the checks have not read (a module written at run time, say) is not run",
            )
        if reaching and os.environ.get("XEFORGE_HARNESS_SOURCE_CHECK") == "off":
            problem.notes.append("the source check is off (XEFORGE_HARNESS_SOURCE_CHECK=off): " + ", ".join(c for c, _ in reaching[:4]))
        elif reaching:
            where = [(c.removeprefix(WHERE_PREFIX), n) for c, n in reaching if c.startswith(WHERE_PREFIX)]
            if len(where) == len(reaching):
                shown = ", ".join(f"{c} (line {n})" for c, n in where[:4])
                raise Stop(
                    P.REJECTED,
                    f"the candidate branches on where it runs ({shown}), which the original does not: on the "
                    "interpreter it would be checked on one path and on a GPU timed on another; choose tiles, "
                    "grids and paths from the sizes (or `torch.cuda.get_device_properties`), not from the device",
                )
            shown = ", ".join(f"`{c}` (line {n})" for c, n in reaching[:4])
            raise Stop(
                P.REJECTED,
                f"the candidate reaches into the interpreter's internals ({shown}): code that can rewrite "
                "the harness's recorders in its own process, run work they do not see, or compute one way "
                "where it is checked and another where it is timed is not run",
            )

        self.set_phase("candidate:import")
        files = {"candidate": self._give(args.candidate)}
        reply, _ = self.candidate_call(
            {"op": "load", "files": files, "spec": self._give(args.spec) if args.spec else None}, what="importing"
        )
        if not reply["has_model"]["candidate"]:
            raise Stop(
                P.COMPILE_ERROR,
                "the candidate defines no class Model"
                if entry_name in (None, "Model")
                else f"the candidate has no `{entry_name}` (the problem's entry)",
            )

        result["correctness"] = {"ok": False, "family": problem.family, "variants": []}
        result["guard"] = {"ok": True, "new_torch_ops": []}
        result["compile"] = {"ok": True, "configs": []}
        failure = None
        cand_ops: set[str] = set()
        cand_kernels: set[str] = set()
        self.cand_precision: set[str] = set()
        self.configs_unrun = 0
        launches: list[int] = []
        tampered: list[str] = []
        for variant in problem.variants:
            report, failure = self._check_variant(problem, variant, cand_ops, cand_kernels, launches, tampered)
            result["correctness"]["variants"].append(report)
            if failure is not None:
                break
        if failure is None and problem.stress is not None:
            failure = self._check_range(problem, result, cand_ops, cand_kernels, launches, tampered)
        if failure is None and problem.edge is not None:
            failure = self._check_edge(problem, result, cand_ops, cand_kernels, launches, tampered)
        if failure is None and problem.layout is not None:
            failure = self._check_layout(problem, result, cand_ops, cand_kernels, launches, tampered)
        if failure is None and self.configs_unrun:
            failure = self._check_every_config(problem, result, cand_ops, cand_kernels, launches, tampered)

        for variant in problem.timed_only:
            if failure is None:
                self._build_candidate(problem, variant)
                if args.no_timing and args.search_timed:
                    self._search(variant)
        result["compile"] = self._compile_report()
        self._guard(problem, result, cand_ops, cand_kernels, launches, tampered)
        self._search_effects(failure)
        if failure is not None:
            raise failure
        result["correctness"]["ok"] = True
        changes = source.precision_changes(source.read(args.kernel), source.read(args.candidate))
        result["correctness"]["precision"] = {"changed": changes}
        if changes:
            problem.notes.append("precision spellings changed: " + "; ".join(changes))
        if problem.original_precision or self.cand_precision:
            # What ran, where the interpreter records it: dead code cannot change this part.
            ran = {"original": sorted(problem.original_precision), "candidate": sorted(self.cand_precision)}
            result["correctness"]["precision"]["executed"] = ran
            gone, new = problem.original_precision - self.cand_precision, self.cand_precision - problem.original_precision
            if gone or new:
                problem.notes.append(
                    "precision the kernels ran at changed: "
                    + "; ".join([f"no longer {x}" for x in sorted(gone)] + [f"now {x}" for x in sorted(new)])
                )

        interpreter = "the Triton interpreter on CPU: times say nothing about a GPU; no speedup is claimed"
        if args.no_timing:
            result["timing"] = timing.not_meaningful("timing was not requested (--no-timing)")
        elif timed is None or solo is None:  # `prepare` times the original alone whenever there is a variant
            result["timing"] = timing.not_meaningful(interpreter if self.kind == "cpu" else "no variant to time")
        else:
            self.set_phase("candidate:timing")
            self.hold(TIMING)
            # Kept through what follows (compile metadata, the verdict, the workers closed): asking for
            # `device` now would queue this job's last steps behind other jobs' timed comparisons.
            result["timing"] = timing.measure(self, problem, timed, solo)
            if isinstance(self._device, dict):
                # The device this comparison ran on, both sides of every pair (the pool adds its index).
                result["timing"]["device"] = {k: self._device.get(k) for k in ("kind", "name")}
            if result["timing"].get("rejected"):
                raise Stop(P.REJECTED, result["timing"].pop("rejected"))
            if result["timing"].get("incorrect"):
                raise Stop(P.INCORRECT, result["timing"].pop("incorrect"))
            self._search_effects()  # the timed shape's search ran in the warm-up
            if result["compile"].get("metadata_available"):
                # The autotuner searched the timed variant's key during warm-up: record what it picked.
                report = self._compile_report()
                result["compile"]["autotune_picks"] = report.get("autotune_picks", [])
                result["compile"]["autotune_timings"] = report.get("autotune_timings", [])
            if self.kind == "cpu":
                checked = result["timing"]
                result["timing"] = timing.not_meaningful(
                    f"{interpreter} (the timed protocol ran: {checked['digests_checked']} timed calls' digests and "
                    f"{checked['full_checks']} full outputs checked)"
                )
        result["log_notes"] = problem.notes
        if not result["timing"].get("meaningful"):
            result.update(verdict=P.CORRECT, message="correct on every variant and seed; " + result["timing"]["reason"])
            return
        t = result["timing"]
        lo, hi = t["speedup_ci95"]
        verdict = timing.classify(t)
        if verdict == "faster":
            result.update(verdict=P.ACCEPTED, message=f"correct and faster: {t['speedup']:.3f}x (95% interval {lo:.3f}–{hi:.3f})")
        elif verdict == "slower":
            result.update(verdict=P.SLOWER, message=f"correct but slower: {t['speedup']:.3f}x (95% interval {lo:.3f}–{hi:.3f})")
        else:
            result.update(verdict=P.CORRECT, message=f"correct; not shown faster: {t['speedup']:.3f}x (95% interval {lo:.3f}–{hi:.3f})")

    def _problem(self) -> Problem:
        spec: Spec | None = None
        family: str | None = None
        if self.args.spec:
            try:
                spec = load_spec(self.args.spec)
                family = spec.resolve_family(self.args.family)
            except SpecError as e:
                raise Stop(P.ERROR, str(e)) from None
        variants: list[Variant | None] = list(spec.variants(family)) if spec and family else [None]
        problem = Problem(kind=self.kind, spec=spec, family=family, variants=variants)
        if spec is not None and self.args.timing_family and self.args.timing_family != family:
            try:
                problem.timed_only = list(spec.variants(spec.resolve_family(self.args.timing_family)))
            except SpecError as e:
                raise Stop(P.ERROR, str(e)) from None
        return problem

    def _reference_runs(self, problem: Problem, variants=None, seeds: int | None = None, summary: bool = False) -> None:
        """Everything the trusted side computes, before the candidate's code exists anywhere.

        `summary`: variants that are only timed; their tensors stay on the trusted side (the judge
        compares no checked call of theirs) and only their sizes come back."""
        for variant in problem.variants if variants is None else variants:
            name = _name(variant)
            self.set_phase("reference:init")
            dtype = variant.dtype if variant is not None else None
            reply, tensors = self.trusted_call(
                {"op": "model", "variant": name, "dtype": dtype}, what=f"building the reference model for {name}"
            )
            if reply.get("note"):
                problem.notes.append(f"{name}: original {reply['note']}")
            problem.models[name] = (reply, tensors)
            refs = []
            for n, seed in enumerate(_seeds(self.args.seeds)[:seeds]):
                self.set_phase("reference:forward")
                reply, tensors = self.trusted_call(
                    {"op": "reference", "variant": name, "seed": seed, "record_original": n == 0, "summary": summary},
                    what=f"the reference on {name}",
                )
                rec = reply["record"]
                problem.original_oob.extend(rec.get("oob") or [])
                problem.original_overwrites |= bool(rec.get("overwritten"))
                problem.original_races |= bool(rec.get("races"))
                if rec["of"] == "original":
                    problem.original_ops |= set(rec["ops"])
                    problem.original_kernels |= set(rec["kernels"])
                    problem.original_precision |= set(rec.get("precision") or [])
                    problem.original_launches = max(problem.original_launches, rec["launches"])
                    problem.original_launched |= set(rec.get("launched") or [])
                refs.append(_summary_reference(reply) if summary else _reference(reply, tensors))
            problem.refs[name] = refs

    def _stress_reference(self, problem: Problem) -> None:
        """The range check's reference: the smallest checked variant with its randn-drawn float inputs
        scaled by 64 (8 for fp16: `inputs.stressed`), on a seed no other call uses.

        The spec's inputs are draws of randn, so a rewrite that drops what keeps a formula finite for
        large values (the maximum taken off before an exponential, as every softmax and logsumexp does)
        is exact on them and returns inf or NaN on a user's activations. The candidate is held to
        finiteness only there (`_check_range`): values at that scale may differ by more than the
        spec's tolerance for legitimate reasons. Skipped, with a note, where the original itself
        fails on those inputs."""
        if not problem.variants:
            return
        variant = _smallest(problem)
        name = _name(variant)
        self.set_phase("reference:forward")
        msg = {"op": "reference", "variant": name, "seed": _seeds(self.args.seeds + 1)[-1], "record_original": True, "stress": True}
        try:
            reply, tensors = self.trusted_call(msg, what=f"the reference on {name} with its inputs scaled", may_fail=True)
        except Failed as e:
            problem.notes.append(f"range check skipped: the original fails on {name} with its inputs scaled ({e.error})")
            return
        scaled = [(int(i), float(f)) for i, f in reply.get("scaled") or []]
        if not scaled:
            return
        rec = reply["record"]
        _add_original_record(problem, rec)  # what the original runs on large values is the original's too
        params = variant.params if variant is not None else []
        names = [f"`{params[i]}` ×{f:g}" if i < len(params) else f"input {i} ×{f:g}" for i, f in scaled]
        problem.stress = (name, _reference(reply, tensors), names)

    def _candidate_run(
        self, variant_name: str, ref: Reference, what: str, seen: tuple, layout: bool = False, fill: float | None = None
    ) -> Call:
        """The candidate on `ref`'s inputs (`layout`: relaid, `inputs.relaid`); what its record says is
        added to `seen` (ops, kernels, launches, tampering), and the precision it ran at to the candidate's."""
        cand_ops, cand_kernels, launches, tampered = seen
        self.set_phase("candidate:forward")
        msg = {"op": "run", "variant": variant_name, "args": ref.inputs[0], "layout": layout, "fill": fill}
        if self.args.search_timed:  # the search that counts is the timed shape's (`_search`)
            msg["search"] = False
        reply, tensors = self.candidate_call(msg, ref.inputs[1], what=what)
        rec = reply.get("record") or {}
        cand_ops |= set(rec.get("ops") or [])
        cand_kernels |= set(rec.get("kernels") or [])
        launches.append(int(rec.get("launches") or 0))
        tampered.extend(rec.get("tampered") or [])
        self.cand_precision |= set(rec.get("precision") or [])
        self.configs_unrun = int(rec.get("configs_unrun") or 0)
        self.set_phase("candidate:check")
        try:
            out_tree = reply["outputs"]
            n_in, n_out = reply["n_inputs"], reply["n_outputs"]
            outputs = wire.decode(out_tree, tensors[n_in : n_in + n_out])
            changed = dict(zip([int(i) for i in reply["changed"]], tensors[n_in + n_out :]))
            alias = {int(k): int(v) for k, v in reply["alias"].items()}
        except (KeyError, TypeError, ValueError, wire.WireError) as e:
            raise Stop(P.CRASHED, f"the candidate's process sent a malformed reply ({e})") from None
        return Call(rec, out_tree, outputs, changed, alias)

    def _edge_reference(self, problem: Problem) -> None:
        """The edge check's reference, on the interpreter: the smallest checked variant with every size
        doubled plus one (`Spec.edge_variant`), so a candidate that only holds for the spec's sizes (a
        load or store without its mask, a block fitted to the spec's row, a size written into the
        kernel) fails where the original does not.

        Only where the interpreter bounds every access (`child/bounds.py`): there an original that
        reaches past its arguments on those sizes is seen, its stores outside them are dropped rather
        than written, and the check is skipped with a note. On a device an original without masks
        would write past its outputs on such sizes, into memory the trusted worker holds."""
        if self.kind != "cpu" or problem.spec is None or not problem.variants or problem.variants[0] is None:
            return
        base = _smallest(problem)
        # Salted per judge: the sizes are not the same in every run (`Spec.edge_variant`).
        edge = problem.spec.edge_variant(base, salt=secrets.randbelow(2**31) + 1) if base is not None else None
        if base is None or edge is None:
            return
        name = edge.name
        sizes = " ".join(f"{k}={v}" for k, v in edge.dims.items())
        self.set_phase("reference:forward")
        try:
            model = self.trusted_call(
                {"op": "model", "variant": name, "dtype": edge.dtype}, what=f"building the reference model for {name}", may_fail=True
            )
            # Twice, its fresh allocations filled with different values: what it returns must not
            # depend on them (an output it leaves partly unwritten on these sizes, a block that
            # covers the spec's row and not this one, is no reference).
            msg = {"op": "reference", "variant": name, "seed": _seeds(1)[0], "record_original": True, "fill": 0.0}
            reply, tensors = self.trusted_call(msg, what=f"the reference on {name}", may_fail=True)
            again, more = self.trusted_call({**msg, "fill": 7777.0}, what=f"the reference on {name}", may_fail=True)
        except Failed as e:
            problem.notes.append(f"edge check skipped: the original fails on {base.name} with sizes {sizes} ({e.error})")
            return
        if not _same_outputs(_reference(reply, tensors), _reference(again, more)):
            problem.notes.append(
                f"edge check skipped: on {base.name} with sizes {sizes} the original leaves part of its output unwritten "
                "(what it returns depends on memory it never wrote)"
            )
            return
        rec = reply["record"]
        if rec.get("oob"):
            problem.notes.append(
                f"edge check skipped: the original reaches past its arguments on {base.name} with sizes {sizes} ({rec['oob'][0]})"
            )
            return
        if rec["of"] == "original" and not rec["launches"]:
            problem.notes.append(f"edge check skipped: the original launched no Triton kernel on {base.name} with sizes {sizes}")
            return
        problem.models[name] = model
        problem.edge = (edge, _reference(reply, tensors))

    def _check_edge(self, problem: Problem, result: dict, cand_ops, cand_kernels, launches, tampered) -> Stop | None:
        """The candidate on the edge check's sizes, compared as a checked variant is."""
        assert problem.edge is not None
        edge, ref = problem.edge
        base = edge.family[len(EDGES) :].rpartition(":")[2]
        report: dict = {"name": edge.name, "of": base, "dims": dict(edge.dims), "seeds": 1, "max_abs": 0.0, "rel_err": 0.0}
        result["correctness"]["edges"] = report
        what = f"{base} with sizes {' '.join(f'{k}={v}' for k, v in edge.dims.items())}"
        self._build_candidate(problem, edge)
        # Its fresh allocations filled with a value neither reference run had: the original's result was
        # shown not to depend on them, so the candidate's must not either (an accumulator never zeroed).
        call = self._candidate_run(edge.name, ref, what, (cand_ops, cand_kernels, launches, tampered), fill=EDGE_FILL)
        failure = _differs(what, _seeds(1)[0], edge, ref, call, report, problem.spec)
        if failure is not None:
            report["ok"] = False
            report["reason"] = (
                failure
                + " (sizes the spec does not have: each of at least 16 doubled plus one and then a little more drawn for this run, odd, so no tile divides it and past any block fitted to the spec's; each from 2 to 15 grown by one to four; the original is right on them)"
            )
            return Stop(P.INCORRECT, report["reason"])
        report["ok"] = True
        return None

    def _layout_reference(self, problem: Problem) -> None:
        """The layout check's reference: the smallest checked variant's first seed, its tensors handed
        over in other memory layouts (`inputs.relaid`: matrices column-major, as `b.t()` is; other
        tensors every other element of a longer buffer, as `x[::2]` is), on any device.

        The spec draws every input contiguous, so a rewrite that drops the strides its original
        honours (a pointer advanced by `K` where the original used `stride_am`) is exact on every
        checked call and wrong on the first transposed view a user passes. Kept only where the
        original, run on those inputs, returns what it returned on the contiguous ones: an original
        that assumes contiguity (or views its inputs) holds the candidate to nothing here, and the
        check is skipped with a note. `edges: false` in the spec turns it off with the edge check."""
        if not problem.variants or (problem.spec is not None and not problem.spec.edges):
            return
        variant = _smallest(problem)
        name, seed = _name(variant), _seeds(self.args.seeds)[0]
        plain = problem.refs[name][0]
        self.set_phase("reference:forward")
        msg = {"op": "reference", "variant": name, "seed": seed, "record_original": True, "layout": True}
        try:
            reply, tensors = self.trusted_call(msg, what=f"the reference on {name} with its inputs relaid", may_fail=True)
        except Failed as e:
            problem.notes.append(f"layout check skipped: the original fails on {name} with its inputs in other layouts ({e.error})")
            return
        relaid = _reference(reply, tensors)
        rec = reply["record"]
        unlike = rec.get("oob") or _compare(
            f"{name} with its inputs relaid",
            seed,
            variant,
            plain,
            reply["outputs"],
            relaid.outputs,
            {"max_abs": 0.0, "rel_err": 0.0},
            problem.spec,
        )
        if unlike:
            problem.notes.append(
                f"layout check skipped: the original's results on {name} depend on its inputs' layout (it assumes them "
                "contiguous), so a candidate is not held to other layouts either"
            )
            return
        _add_original_record(problem, rec)
        problem.layout = (name, seed, relaid)

    def _check_layout(self, problem: Problem, result: dict, cand_ops, cand_kernels, launches, tampered) -> Stop | None:
        """The candidate on the layout check's inputs, compared as a checked variant is."""
        assert problem.layout is not None
        name, seed, ref = problem.layout
        variant = next((v for v in problem.variants if _name(v) == name), None)
        report: dict = {"variant": name, "seeds": 1, "max_abs": 0.0, "rel_err": 0.0}
        result["correctness"]["layout"] = report
        what = f"{name} with its inputs in other layouts (matrices column-major, vectors strided)"
        call = self._candidate_run(name, ref, what, (cand_ops, cand_kernels, launches, tampered), layout=True)
        failure = _differs(what, seed, variant, ref, call, report, problem.spec)
        if failure is not None:
            report["ok"] = False
            report["reason"] = (
                failure
                + " (the same values as a checked call's, laid out as a caller's views are; the original gives the same results on them)"
            )
            return Stop(P.INCORRECT, report["reason"])
        report["ok"] = True
        return None

    def _check_every_config(self, problem: Problem, result: dict, cand_ops, cand_kernels, launches, tampered) -> Stop | None:
        """On the interpreter, the candidate's `@triton.autotune` configs that no checked call ran: the
        smallest variant's first seed again, each call of a key taking the next config
        (`interpreter._fixed_autotune`), until every config ran (at most `EVERY_CONFIG` calls). On a
        GPU the search may pick any of them for a user's sizes, so each must be right."""
        variant = _smallest(problem)
        name, seed = _name(variant), _seeds(self.args.seeds)[0]
        ref = problem.refs[name][0]
        report: dict = {"variant": name, "calls": 0, "max_abs": 0.0, "rel_err": 0.0}
        result["correctness"]["configs"] = report
        seen = (cand_ops, cand_kernels, launches, tampered)
        while self.configs_unrun and report["calls"] < EVERY_CONFIG:
            report["calls"] += 1
            what = f"{name} with the next config of its autotune list (call {report['calls']})"
            call = self._candidate_run(name, ref, what, seen)
            failure = _unlike_original(what, call.record, problem) or _compare(
                what, seed, variant, ref, call.out_tree, call.outputs, report, problem.spec
            )
            if failure is not None:
                report["ok"], report["reason"] = False, failure + " (a config of its autotune list that no checked call ran)"
                return Stop(P.INCORRECT, report["reason"])
        report["ok"] = True
        report["unrun"] = self.configs_unrun
        if self.configs_unrun:
            problem.notes.append(f"{self.configs_unrun} config(s) of the candidate's autotune list never ran ({EVERY_CONFIG} calls)")
        return None

    def _check_range(self, problem: Problem, result: dict, cand_ops, cand_kernels, launches, tampered) -> Stop | None:
        """The candidate on the range check's inputs: wherever the original's output is finite (and
        not near its dtype's largest value), the candidate's must be finite too."""
        assert problem.stress is not None
        name, ref, names = problem.stress
        report: dict = {"variant": name, "inputs": names, "ok": False}
        result["correctness"]["range"] = report
        what = f"{name} with its inputs scaled ({', '.join(names)})"
        call = self._candidate_run(name, ref, what, (cand_ops, cand_kernels, launches, tampered))
        failure = _finite_where_reference_is(what, ref, call.out_tree, call.outputs)
        if failure is not None:
            report["reason"] = failure
            return Stop(P.INCORRECT, failure)
        report["ok"] = True
        return None

    def _timed_variant(self, problem: Problem) -> Variant | None:
        """The variant with the most input elements, or None when nothing is timed.

        On the interpreter nothing is timed, except that XEFORGE_HARNESS_CPU_TIMING=1 runs the whole
        timed protocol (fresh inputs, digests, sampled full checks) with its times discarded: that is
        how the test suite checks, without a GPU, that timed calls cannot differ from checked ones.
        """
        if self.args.no_timing or (self.kind == "cpu" and os.environ.get("XEFORGE_HARNESS_CPU_TIMING") != "1"):
            return None
        best, size = None, -1
        for variant in problem.timed_only or problem.variants:
            numel = problem.refs[_name(variant)][0].sizes["input_numel"]
            if numel > size:
                best, size = variant, numel
        return best

    def _search(self, variant) -> None:
        """`search_timed`: the candidate's first call of a timed-only variant's shape, untimed and
        unchecked (what a timed evaluation's warm-up would run), for the compile report after it."""
        name = _name(variant)
        self.set_phase("candidate:warm-up")
        self.candidate_call(
            {"op": "once", "variant": name, "seed": _seeds(1)[0], "inputs_file": self._give(self.args.reference or self.args.kernel)},
            what=f"the first call on {name}",
        )

    @property
    def _tunes(self) -> bool:
        """Whether the candidate's source names Triton's autotuner (read here, not asked of its process)."""
        return "autotune" in source.read(self.args.candidate).lower()

    def _warm(self, variant) -> None:
        """On a GPU, for a candidate with an autotuner: one untimed, unchecked call on fresh inputs of
        the variant's shapes (a seed no checked call uses) before its checked calls. The autotuner's
        search of each new key runs here, with all its benchmark launches, not inside a profiled call.
        What the checked calls then run, the pick included, is recorded in full, and the search's effect
        on its arguments is still compared (`search_effects`). Only then: for any other candidate the
        first checked call stays its first call. Not on the interpreter, where each call is seconds of
        CPU and a search times nothing (`interpreter._fixed_autotune`)."""
        name = _name(variant)
        self.set_phase("candidate:warm-up")
        checked = set(_seeds(self.args.seeds))
        seed = secrets.randbelow(1 << 30) + 1
        while seed in checked:
            seed = secrets.randbelow(1 << 30) + 1
        self.candidate_call(
            {"op": "once", "variant": name, "seed": seed, "inputs_file": self._give(self.args.reference or self.args.kernel)},
            what=f"the warm-up call on {name}",
        )

    def _build_candidate(self, problem: Problem, variant) -> None:
        name = _name(variant)
        self.set_phase("candidate:init")
        model_reply, model_tensors = problem.models[name]
        reply, _ = self.candidate_call(
            {
                "op": "model",
                "variant": name,
                "dtype": variant.dtype if variant is not None else None,
                "init": model_reply["init"],
                "n_init": model_reply["n_init"],
                "weights": model_reply["weights"],
            },
            model_tensors,
            what=f"building the entry for {name}",
        )
        if reply.get("note"):
            problem.notes.append(f"{name}: candidate {reply['note']}")

    def _check_variant(self, problem: Problem, variant, cand_ops, cand_kernels, launches, tampered):
        name = _name(variant)
        report: dict = {"name": name, "seeds": 0, "max_abs": 0.0, "rel_err": 0.0}
        self._build_candidate(problem, variant)
        if self.kind != "cpu" and not self.args.search_timed and self._tunes:
            self._warm(variant)
        ref_prints, cand_prints = [], []
        for n, (seed, ref) in enumerate(zip(_seeds(self.args.seeds), problem.refs[name])):
            call = self._candidate_run(name, ref, f"{name}, seed {seed}", (cand_ops, cand_kernels, launches, tampered))
            rec = call.record
            report["seeds"] = n + 1
            reason = _unlike_original(f"{name}, seed {seed}", rec, problem)
            if reason is not None:
                report["ok"] = False
                report["reason"] = reason
                return report, Stop(P.INCORRECT, reason)
            failure = _compare(name, seed, variant, ref, call.out_tree, call.outputs, report, problem.spec)
            if failure is None:
                failure = _check_memory(name, variant, ref, call.changed, call.alias)
            if failure is not None:
                report["ok"] = False
                report["reason"] = failure
                return report, Stop(P.INCORRECT, failure)
            ref_prints.append(fingerprint(flatten(ref.outputs)))
            cand_prints.append(fingerprint(flatten(call.outputs)))
        if len(set(cand_prints)) == 1 and len(set(ref_prints)) > 1:
            reason = f"{name}: the candidate returns the same output for every seed while the reference's output changes"
            report["ok"] = False
            report["reason"] = reason
            return report, Stop(P.INCORRECT, reason)
        report["ok"] = True
        return report, None

    def _search_effects(self, failure: Stop | None = None) -> None:
        """Incorrect when an autotune search of the candidate's left its arguments changed (see
        `search_effects`): its first call of each new shape returns a wrong result in a user's program,
        even where the checked calls, made after the warm-up's search, compare equal. After a failure
        it only replaces an `incorrect` or `runtime_error` with the reason, never the failure itself."""
        if failure is not None and failure.verdict not in (P.INCORRECT, P.RUNTIME_ERROR):
            return  # the candidate's process is gone or hung: nothing to ask it
        try:
            reply, _ = self.candidate_call({"op": "searches"}, what="reading the autotuner's searches")
        except Stop:
            if failure is not None:
                return
            raise
        changed = reply.get("changed") or []
        if changed:
            raise Stop(P.INCORRECT, search_effects.message(changed[0]))

    def _compile_report(self) -> dict:
        if self.kind == "cpu":
            return {
                "ok": True,
                "configs": [],
                "metadata_available": False,
                "note": "the Triton interpreter compiles nothing: no shared memory, register or spill figures",
            }
        try:
            reply, _ = self.candidate.call({"op": "compile_meta"}, (), self.deadline)
            configs = reply.get("configs")
            if not isinstance(configs, list):
                raise ValueError("no list")
        except Exception as e:  # noqa: BLE001  (metadata is a report, never a reason to fail a candidate)
            return {"ok": True, "configs": [], "metadata_available": False, "note": f"could not read Triton's kernel cache: {e}"}
        picks, table = reply.get("autotune_picks"), reply.get("autotune_timings")
        return {
            "ok": True,
            "configs": configs,
            "metadata_available": True,
            "autotune_picks": picks if isinstance(picks, list) else [],
            "autotune_timings": table if isinstance(table, list) else [],
        }

    def _guard(self, problem: Problem, result: dict, cand_ops, cand_kernels, launches, tampered) -> None:
        # A `triton_op` of the candidate's own is how PyTorch asks Triton kernels to be wrapped; what
        # its body runs is recorded on its own.
        candidate_text = source.read(self.args.candidate)
        own_ops = source.triton_ops(candidate_text)
        new_ops = [op for op in guard.new_compute_ops(cand_ops, problem.original_ops) if guard.plain_op(op) not in own_ops]
        original_names = source.triton_kernels(source.read(self.args.kernel))
        candidate_names = source.triton_kernels(candidate_text)
        triton_names = candidate_names | original_names
        new_kernels = [k for k in guard.library_kernels(sorted(cand_kernels), triton_names) if k not in problem.original_kernels]
        no_triton = bool(launches) and problem.original_launches > 0 and min(launches) == 0
        # Below Python, on a device: the original's Triton kernels ran on it and none of the
        # candidate's did (a launch hook can be fooled by a launch of nothing; the device trace cannot).
        if any(guard.is_triton_kernel(k, original_names) for k in problem.original_kernels):
            no_triton |= bool(launches) and not any(guard.is_triton_kernel(k, candidate_names) for k in cand_kernels)
        result["guard"] = {
            "ok": not (new_ops or new_kernels or tampered or no_triton),
            "new_torch_ops": new_ops,
            "new_device_kernels": new_kernels,
            "triton_launches": launches,
            "tampered": sorted(set(tampered)),
        }
        if tampered:
            raise Stop(P.REJECTED, "the candidate interfered with the harness's recorders: " + "; ".join(sorted(set(tampered))))
        reads = [op for op in new_ops if guard.plain_op(op).rpartition(".")[2] in guard.HOST_READS]
        if reads:
            raise Stop(
                P.REJECTED,
                f"the candidate reads tensor values on the host ({', '.join(reads)}: `.item()`, `bool(t)`, `float(t)`, numpy's `np.asarray(t)`), which "
                "the original does not: a result chosen by what the inputs hold where the checks look (a memo key, a test "
                "for large values, a loop over elements in Python) is not a kernel's",
            )
        if new_ops:
            other_pass = [op for op in new_ops if any(guard.plain_op(o) == guard.plain_op(op) for o in problem.original_ops)]
            where = f" ({', '.join(other_pass)}: the original runs it only in the other pass, forward or backward)" if other_pass else ""
            raise Stop(P.REJECTED, "the candidate runs PyTorch operators the original kernel file does not: " + ", ".join(new_ops) + where)
        if new_kernels:
            raise Stop(
                P.REJECTED, "the candidate launches device kernels that are not Triton kernels of the file: " + ", ".join(new_kernels[:6])
            )
        if no_triton:
            raise Stop(
                P.REJECTED,
                "the candidate launched no Triton kernel in a checked call (the original launches "
                f"{problem.original_launches}): its result was computed some other way",
            )


# Calls the judge makes at most to run every config of a candidate's autotune list (interpreter).
EVERY_CONFIG = 32

# What the candidate's fresh allocations hold on the edge check's call (the reference ran with 0 and 7777).
EDGE_FILL = -3333.0

# How the source check names a branch on the device (`source.reaching`).
WHERE_PREFIX = "branches on where it runs: "


def _installed_roots() -> tuple[str, ...]:
    from .worker import _installed_roots as roots

    return roots()


def _seeds(count: int) -> list[int]:
    from .inputs import seeds

    return seeds(count)


def _reference(reply: dict, tensors: list) -> Reference:
    n_in, n_out = reply["n_inputs"], reply["n_outputs"]
    ins = tensors[:n_in]
    outs = tensors[n_in : n_in + n_out]
    after = tensors[n_in + n_out :]
    return Reference(
        inputs=(reply["inputs"], ins),
        outputs=wire.decode(reply["outputs"], outs),
        structure=wire.shape_of(reply["outputs"]),
        changed=dict(zip([int(i) for i in reply["changed"]], after)),
        alias={int(k): int(v) for k, v in reply["alias"].items()},
        sizes=reply["sizes"],
    )


def _summary_reference(reply: dict) -> Reference:
    return Reference(inputs=(None, []), outputs=None, structure=None, changed={}, alias={}, sizes=reply["sizes"])


def _candidate_failure(e: Failed, what: str) -> Stop:
    if e.kind == "syntax":
        return Stop(P.COMPILE_ERROR, f"the candidate has a {e.error}", e.trace)
    if e.kind == "compile":
        return Stop(P.COMPILE_ERROR, f"the candidate's kernel does not compile ({what}): {e.error}", e.trace)
    if what == "importing":
        return Stop(P.COMPILE_ERROR, f"the candidate does not import: {e.error}{_unreadable_module(e.error)}", e.trace)
    if e.kind == "oom":
        return Stop(P.RUNTIME_ERROR, f"the candidate ran out of device memory ({what}): {e.error}", e.trace)
    if e.kind == "wire":
        return Stop(P.INCORRECT, f"the candidate's outputs cannot be compared ({what}): {e.error}", e.trace)
    return Stop(P.RUNTIME_ERROR, f"the candidate failed ({what}): {e.error}", e.trace)


def _gradient_of(spec: Spec | None, variant: Variant | None, j: int, total: int) -> str:
    """` (the gradient of `x`)` for an output that `backward: true` appends (child/entry.py `Backward`)."""
    if spec is None or not spec.backward or variant is None:
        return ""
    floats = [
        p
        for p in variant.params
        if not spec.inputs[p].is_scalar and spec.input_dtype(variant, p).startswith(("float", "bfloat", "half", "double", "complex"))
    ]
    k = j - (total - len(floats))
    return f" (the gradient of `{floats[k]}`)" if 0 <= k < len(floats) else ""


def _unreadable_module(error: str) -> str:
    """Why a module that is installed was not found by a candidate running as the sandbox user."""
    found = re.match(r"ModuleNotFoundError: No module named '([\w.]+)'", error)
    uid = sandbox_uid()
    if not found or uid is None:
        return ""
    try:
        installed = importlib.util.find_spec(found.group(1).partition(".")[0]) is not None
    except (ImportError, ValueError):
        installed = False
    if not installed:
        return ""
    return (
        f" (it is installed, but the candidate runs as user {uid} and cannot read it; the modules the original"
        " imports are loaded before the candidate gives up root, others are not: import it in the original too,"
        " make the Python installation readable to that user, or set XEFORGE_HARNESS_SANDBOX_UID)"
    )


def _compare(name, seed, variant, ref: Reference, out_tree, outputs, report, spec: Spec | None = None) -> str | None:
    structure = wire.shape_of(out_tree)
    if structure != ref.structure:
        return f"{name}, seed {seed}: the candidate returns {wire.describe(structure)}, the reference {wire.describe(ref.structure)}"
    refs = flatten(ref.outputs)
    for j, (r, o) in enumerate(zip(refs, flatten(outputs))):
        rtol, atol = _tolerance(variant, r.dtype) if hasattr(r, "dtype") else (0.0, 0.0)
        if j == 0:
            report["rtol"], report["atol"] = rtol, atol
        diff = compare_one(r, o, rtol, atol, f"{name}, seed {seed}, output {j}{_gradient_of(spec, variant, j, len(refs))}")
        report["max_abs"] = max(report["max_abs"], diff.max_abs)
        report["rel_err"] = max(report["rel_err"], diff.rel_err)
        if not diff.ok:
            return diff.reason
    return None


def _smallest(problem: Problem) -> Variant | None:
    """The checked variant with the fewest input elements: where the extra checks run."""
    return min(problem.variants, key=lambda v: problem.refs[_name(v)][0].sizes["input_numel"])


def _add_original_record(problem: Problem, rec: dict) -> None:
    """What an extra reference call shows the original running, where it is the original's (not a
    separate reference file's): operators, device kernels and Triton kernels it may use."""
    if rec["of"] == "original":
        problem.original_ops |= set(rec["ops"])
        problem.original_kernels |= set(rec["kernels"])
        problem.original_launched |= set(rec.get("launched") or [])


def _differs(what: str, seed, variant, ref: Reference, call: Call, report: dict, spec: Spec | None) -> str | None:
    """Why one extra call of the candidate (the edge or the layout check's) fails against `ref`: a
    reach past its arguments, outputs outside the tolerance, or inputs changed unlike the original's."""
    return (
        _oob(what, call.record)
        or _compare(what, seed, variant, ref, call.out_tree, call.outputs, report, spec)
        or _check_memory(what, variant, ref, call.changed, call.alias)
    )


def _same_outputs(a: Reference, b: Reference) -> bool:
    """Two references of one call agree element for element (NaN where both are)."""
    if a.structure != b.structure:
        return False
    for x, y in zip(flatten(a.outputs), flatten(b.outputs)):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype or not same_values(x, y):
                return False
        elif x != y:
            return False
    return True


def _unlike_original(what: str, rec: dict, problem: Problem) -> str | None:
    """What a checked call's record shows the candidate doing that the original never does: reaching
    past its arguments, racing between programs, changing an earlier call's result."""
    if not problem.original_oob and (oob := _oob(what, rec)):
        return oob
    if rec.get("races") and not problem.original_races:
        return f"{what}: the candidate {rec['races'][0]}, where the original's programs never write one element"
    if rec.get("overwritten") and not problem.original_overwrites:
        return (
            f"{what}: this call changed the tensor an earlier call returned (one buffer handed out again): a caller's "
            "earlier result silently becomes the later one's, which the original never does"
        )
    return None


def _oob(what: str, rec: dict) -> str | None:
    """The interpreter's bounds (`child/bounds.py`) saw the call reach memory outside every tensor
    it was given: what lies there is another allocation's, or nothing."""
    oob = rec.get("oob") or []
    if not oob:
        return None
    more = f" (and {len(oob) - 1} more)" if len(oob) > 1 else ""
    return f"{what}: the candidate {oob[0]}{more}, where the original stays inside its arguments (a load or store without its mask?)"


def _finite_where_reference_is(what: str, ref: Reference, out_tree, outputs) -> str | None:
    structure = wire.shape_of(out_tree)
    if structure != ref.structure:
        return f"{what}: the candidate returns {wire.describe(structure)}, the reference {wire.describe(ref.structure)}"
    for j, (r, o) in enumerate(zip(flatten(ref.outputs), flatten(outputs))):
        if not (isinstance(r, torch.Tensor) and r.dtype.is_floating_point):
            continue
        if not isinstance(o, torch.Tensor) or o.shape != r.shape or o.dtype != r.dtype or o.device != r.device:
            return compare_one(r, o, float("inf"), float("inf"), f"{what}, output {j}").reason
        # Near the dtype's largest value a legitimate change of order may round over it.
        held = torch.isfinite(r) & (r.abs() < torch.finfo(r.dtype).max / 16)
        lost = held & ~torch.isfinite(o)
        count = int(lost.sum().item())
        if count:
            at = tuple(int(k) for k in torch.nonzero(lost)[0].tolist())
            return (
                f"{what}: output {j} is inf or NaN at {count} of {int(held.sum().item())} elements where the original's "
                f"is finite (first at {list(at)}: original {float(r[at]):.4g}, candidate {float(o[at])}); a formula that "
                "overflows for large inputs where the original's does not (an exponential of an input without its "
                "maximum taken off first, say)"
            )
        # Values only coarsely (`RANGE_SHARE` of the output's largest): at this scale a legitimate change
        # of order or precision moves them past the spec's tolerance, a clamp or a dropped term far more.
        both = held & torch.isfinite(o)
        if bool(both.any()):
            rf, of = r.double()[both], o.double()[both]
            bound = RANGE_SHARE * (float(rf.abs().max()) + rf.abs())
            off = (of - rf).abs() > bound
            if bool(off.any()):
                k = int(torch.argmax((of - rf).abs() - bound))
                return (
                    f"{what}: output {j} differs from the original's at {int(off.sum())} of {int(both.sum())} elements by more "
                    f"than {RANGE_SHARE:.0%} of its largest value (original {float(rf[k]):.4g}, candidate {float(of[k]):.4g}); "
                    "a formula right for the spec's inputs and wrong for large ones (a clamp in place of the maximum taken "
                    "off, say)"
                )
    return None


# How far the range check lets a candidate's values stray, as a share of the output's largest value.
RANGE_SHARE = 0.05


def _check_memory(name, variant, ref: Reference, changed: dict, alias: dict) -> str | None:
    for j, i in alias.items():
        if ref.alias.get(j) != i:
            return f"{name}: output {j} is input {i} (shares its memory); the reference returns a new tensor"
    for i in changed:
        if i not in ref.changed:
            return f"{name}: the candidate modifies input {i}; the reference leaves it unchanged"
    for i, r in ref.changed.items():
        c = changed.get(i)
        if c is None:
            return f"{name}: the reference modifies input {i} in place; the candidate does not"
        rtol, atol = _tolerance(variant, r.dtype)
        diff = compare_one(r, c, rtol, atol, f"{name}, input {i} after the call")
        if not diff.ok:
            return diff.reason
    return None


def evaluate(args: P.EvaluateArgs, phase: Callable[[str], None]) -> dict:
    judge = None
    try:
        judge = Judge(args, phase)
        return _outcome(judge, judge.run)
    finally:
        if judge is not None:
            judge.close()


def _outcome(judge: Judge, body: Callable[[dict], None], trusted_spent: dict | None = None) -> dict:
    """Run `body` (one candidate's judging) into a result; a `Stop` becomes its verdict.

    `trusted_spent`: the trusted worker's request tally before this candidate (a sweep's later
    candidates report only their own share)."""
    result: dict = {"verdict": None, "message": ""}
    log: list[str] = []
    started = time.monotonic()
    try:
        body(result)
    except Stop as s:
        result["verdict"] = s.verdict
        result["message"] = s.message
        if s.verdict == P.ERROR:
            result["error"] = s.message
        if s.detail:
            log.append(s.detail)
    finally:
        before = trusted_spent or {}
        spent = {
            ("trusted", op): (n - before.get(op, (0, 0.0))[0], t - before.get(op, (0, 0.0))[1])
            for op, (n, t) in judge.trusted.spent.items()
        }
        spent.update({("candidate", op): (n, t) for op, (n, t) in judge.candidate.spent.items()})
        result.setdefault("elapsed", {})["requests"] = {
            f"{role}:{op}": {"n": n, "s": round(t, 3)} for (role, op), (n, t) in sorted(spent.items(), key=lambda x: -x[1][1]) if n
        }
        if trusted_spent is not None:
            result["elapsed"]["candidate_s"] = round(time.monotonic() - started, 4)
        if judge.out_of_memory and judge.shared:
            result["out_of_memory"] = True
        judge.out_of_memory = False
        tail = judge.candidate.log_tail()
        if tail.strip():
            log.append("--- candidate output ---\n" + tail)
    log[:0] = result.pop("log_notes", [])
    _fill_sections(result)
    result["log"] = "\n".join(log)
    return result


def sweep(args: P.SweepArgs, phase: Callable[[str], None]) -> dict:
    """Several candidates of one problem, one after another, against one trusted side set up once.

    Each candidate is judged exactly as `evaluate` judges it (same checks, guard and timing), in a
    worker of its own forked before anything ran. Only the trusted side's work is shared: the original
    imported and compiled, the references computed, the original timed alone. Sequential stopping
    adapts: a candidate is timed only until it is decided slower than the lower end of the best
    interval so far (or `stop_below`). Candidates that would not fit in `budget_s` are not started.
    """
    out: dict = {"kind": "sweep", "device": None, "results": [], "stopped": None}
    judge = None
    started = time.monotonic()
    try:
        judge = Judge(args.base, phase, candidates=len(args.candidates))
        setup: dict = {}
        try:
            prep = judge.prepare(setup)
        except Stop as s:
            detail = s.detail or ""
            failed = {**P.sweep_failed(P.error_result(s.message, detail)), "device": setup.get("device")}
            if judge.out_of_memory and judge.shared:
                failed["out_of_memory"] = True
            return failed
        out["device"] = setup.get("device")
        out["setup_s"] = round(time.monotonic() - started, 3)
        best: tuple[float, float] | None = None  # (speedup, lower end) of the fastest correct candidate
        spent: list[float] = []
        for i, path in enumerate(args.candidates):
            elapsed = time.monotonic() - started
            if args.budget_s is not None and i >= args.min_candidates and spent and elapsed + sum(spent) / len(spent) > args.budget_s:
                out["stopped"] = f"budget: {i} of {len(args.candidates)} candidates judged in {elapsed:.0f} s (budget {args.budget_s:g} s)"
                break
            floor = [x for x in (args.base.stop_below, best[1] if best else None) if x is not None and x > 1.0]
            judge.use(i, replace(args.base, candidate=path, stop_below=max(floor) if floor else None))
            before = {op: tuple(v) for op, v in judge.trusted.spent.items()}
            result = _outcome(judge, lambda r: judge.judge(prep, r), trusted_spent=before)
            spent.append(result["elapsed"]["candidate_s"])
            out["results"].append(result)
            if hasattr(phase, "partial"):
                phase.partial(result)
            if result["verdict"] == P.ERROR:
                out["stopped"] = f"the trusted side failed while judging candidate {i + 1}: {result['message']}"
                break
            t = result.get("timing") or {}
            if result["verdict"] in P.CORRECT_VERDICTS and t.get("meaningful") and not t.get("stopped_early"):
                if best is None or t["speedup"] > best[0]:
                    best = (t["speedup"], t["speedup_ci95"][0])
    finally:
        if judge is not None:
            judge.close()
    out["log"] = ""
    return out


def _fill_sections(result: dict) -> None:
    """Every verdict carries every section, so clients need not special-case early stops."""
    verdict = result["verdict"]
    reached_candidate = verdict not in (P.ERROR, P.COMPILE_ERROR)
    result.setdefault("device", None)
    result.setdefault("compile", {"ok": False if verdict == P.COMPILE_ERROR else None, "configs": []})
    result.setdefault("correctness", {"ok": False if reached_candidate else None, "variants": []})
    if verdict not in P.CORRECT_VERDICTS and result["correctness"].get("ok"):
        result["correctness"]["ok"] = False if verdict == P.INCORRECT else result["correctness"]["ok"]
    result.setdefault("guard", {"ok": None, "new_torch_ops": []})
    result.setdefault("timing", timing.not_meaningful(f"not measured: verdict {verdict}"))
    if verdict not in P.CORRECT_VERDICTS and result["timing"].get("meaningful"):
        result["timing"] = timing.not_meaningful(f"not used: verdict {verdict}")
