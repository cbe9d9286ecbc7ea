"""Run-time guard, inside a worker: which operators and device kernels does a `forward` run?

A `TorchDispatchMode` sees every ATen operator that reaches the dispatcher, however it was reached:
`torch.nn.functional.conv2d`, `getattr(__import__('torch').nn, 'functional')`, `torch.ops.aten...`
and tensor methods all arrive as the same `aten.convolution`. A static check can be fooled by spelling;
this cannot, short of the candidate tampering with the dispatcher itself.

Triton launches are not ATen operators and are never seen here. Operators that only allocate,
reshape, move or copy memory are not "compute" and are never reported (`NON_COMPUTE`).

A dispatch mode is thread-local, so `Recording` adds a second layer: the PyTorch profiler with
`profile_all_threads`, which sees ATen operators run from any thread of the process, and on a GPU the
device kernels themselves (CUPTI activity records: a cuBLAS or ATen kernel shows up by name however
it was reached). Triton launches are counted by a hook on Triton's launchers. All of this runs in the
candidate's own process and is therefore evidence, not proof: the judge treats a recorder that was
popped, disabled or left without events as tampering, and decides correctness and timing without
trusting anything here.
"""

from __future__ import annotations

import contextlib
import re
import threading
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode

# ATen operator names (overload packets, without namespace) that compute nothing a kernel could be
# replaced by. Keep this list explicit and short: anything not here that the original did not run
# is reported.
# Reading a tensor's values on the host (`.item()`, `bool(t)`, `float(t)`): computes nothing, but a
# candidate that does it where the original does not decides by what the inputs hold (a memo key, a
# test for the range check's large values, a Python loop over elements), so it is reported like compute.
HOST_READS = frozenset({"_local_scalar_dense", "item", "is_nonzero", "__array__", "numpy", "tolist", "__dlpack__", "from_numpy"})

# Ways a tensor's values leave for the host, or come back from it, that run no ATen operator (numpy's
# `np.asarray(t)` calls `Tensor.__array__`; `torch.from_numpy` lifts an array without a copy): the
# host-transfer recorder (`install_host_hooks`) records each as `host.<name>` where a candidate's
# code (not torch's, Triton's or the harness's own) makes it.
HOST_TRANSFERS = ("__array__", "numpy", "tolist", "__dlpack__")
_LIBRARY_MODULES = ("torch", "triton", "numpy", "xeforge_harness")

NON_COMPUTE = frozenset(
    {
        # allocation, with or without a fill value
        "empty",
        "empty_like",
        "empty_strided",
        "empty_permuted",
        "new_empty",
        "new_empty_strided",
        "zeros",
        "zeros_like",
        "new_zeros",
        "ones",
        "ones_like",
        "new_ones",
        "full",
        "full_like",
        "new_full",
        "scalar_tensor",
        "fill_",
        "zero_",
        "resize_",
        # views and metadata
        "view",
        "_unsafe_view",
        "view_as",
        "reshape",
        "_reshape_alias",
        "as_strided",
        "expand",
        "expand_as",
        "permute",
        "transpose",
        "t",
        "squeeze",
        "unsqueeze",
        "select",
        "slice",
        "narrow",
        "split",
        "split_with_sizes",
        "unbind",
        "chunk",
        "flatten",
        "unflatten",
        "movedim",
        "alias",
        "detach",
        "detach_",
        "lift_fresh",
        "lift_fresh_copy",
        "sym_size",
        "sym_stride",
        "sym_numel",
        "sym_storage_offset",
        "is_contiguous",
        # copies and conversions between devices, dtypes and layouts
        "clone",
        "copy_",
        "_to_copy",
        "to",
        "contiguous",
        "record_stream",
        # names only the profiler shows: wrappers of the above and bookkeeping
        "resolve_conj",
        "resolve_neg",
        "set_",
        "numpy_T",
        "result_type",
        "size",
        "stride",
        "numel",
        "dim",
        "data_ptr",
        "storage_offset",
    }
)


def op_name(func) -> str:
    """`aten.convolution` for `torch.ops.aten.convolution.default`."""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or str(func).split(".")[-2 if str(func).count(".") >= 2 else -1]
    namespace = getattr(func, "namespace", None) or "aten"
    return f"{namespace}.{name}"


# The mark of an operator run by autograd's backward pass: the forward and the backward of a call are
# compared apart, so an operator the original runs only in its backward (the `mul` of a gradient) does
# not let a candidate run the forward's computation with it.
BACKWARD = " (backward)"


def plain_op(name: str) -> str:
    """An operator's name without its pass."""
    return name[: -len(BACKWARD)] if name.endswith(BACKWARD) else name


def is_compute(name: str) -> bool:
    namespace, _, short = plain_op(name).partition(".")
    return not (namespace == "aten" and short in NON_COMPUTE)


class OpRecorder(TorchDispatchMode):
    """Collects the names of the operators run inside `with OpRecorder() as rec:`, those autograd's
    engine runs (a backward) marked with `BACKWARD`, and how often each ran."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: set[str] = set()
        self.counts: dict[str, int] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = op_name(func)
        self.counts[name] = self.counts.get(name, 0) + 1
        self.ops.add(name + BACKWARD if torch._C._current_autograd_node() is not None else name)
        return func(*args, **(kwargs or {}))

    def compute_ops(self) -> set[str]:
        return {op for op in self.ops if is_compute(op)}


def new_compute_ops(candidate: set[str], original: set[str]) -> list[str]:
    """Compute operators the candidate ran that the original kernel file never ran."""
    return sorted(op for op in candidate if is_compute(op) and op not in original)


def profiler_op(name: str) -> str | None:
    """`aten::mm` → `aten.mm`; None for profiler events that are not operators."""
    namespace, sep, short = name.partition("::")
    if not sep or not namespace.isidentifier() or not short.isidentifier():
        return None
    return f"{namespace}.{short}"


class _LaunchCounter:
    """Counts Triton kernel launches (compiled and interpreted), from any thread, and by kernel name."""

    def __init__(self) -> None:
        self.count = 0
        self.by_name: dict[str, int] = {}
        self.programs = 0  # programs the interpreter ran (its grids' sizes)
        self.lock = threading.Lock()

    def bump(self, name: str | None = None) -> None:
        with self.lock:
            self.count += 1
            if name:
                self.by_name[name] = self.by_name.get(name, 0) + 1


LAUNCHES = _LaunchCounter()


class _Violations:
    """Accesses outside every argument of a launch, in words (`bounds`, on the interpreter), from any thread."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.lock = threading.Lock()

    def note(self, what: str) -> None:
        with self.lock:
            if len(self.seen) < 10_000:
                self.seen.append(what)


OOB = _Violations()
RACES = _Violations()  # plain stores of two programs of one launch to one element (interpreter only)


class _Executed:
    """What precision the interpreter's kernels ran at (`interpreter._precision_record`): each kind of
    dot and narrowing float cast, counted, from any thread."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def note(self, what: str) -> None:
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1


PRECISION = _Executed()


def install_host_hooks() -> None:
    """Record, in the call being recorded, each transfer of a tensor's values to the host (or of an
    array back) made by code outside the libraries: numpy compute on a tensor's values runs no ATen
    operator, so neither the dispatch mode nor the profiler sees it. Installed before any user module
    is imported; the integrity snapshot then sees a candidate that rebinds them."""
    import sys as _sys

    def recorded(name: str, inner):
        if getattr(inner, "_xeforge_host", False):
            return inner

        def transfer(*args, **kwargs):
            rec = _recording
            if rec is not None:
                caller = _sys._getframe(1).f_globals.get("__name__") or ""
                if not caller.startswith(_LIBRARY_MODULES):
                    rec.host.add(f"host.{name}")
            return inner(*args, **kwargs)

        transfer._xeforge_host = True  # type: ignore[attr-defined]
        transfer.__name__ = getattr(inner, "__name__", name)
        transfer.__doc__ = getattr(inner, "__doc__", None)
        return transfer

    for attr in HOST_TRANSFERS:
        inner = getattr(torch.Tensor, attr, None)
        if inner is not None:
            setattr(torch.Tensor, attr, recorded(attr, inner))
    torch.from_numpy = recorded("from_numpy", torch.from_numpy)


def install_launch_hooks() -> None:
    """Wrap Triton's two launch paths once per process, before any user module is imported."""
    from triton.runtime import jit

    _wrap(jit.JITFunction, "run")
    try:
        from triton.runtime import interpreter
    except ImportError:  # a Triton without the interpreter
        return
    _wrap(interpreter.GridExecutor, "__call__", ran=True)
    builder: Any = getattr(interpreter, "InterpreterBuilder", None)
    inner = getattr(builder, "set_grid_dim", None)
    if builder is not None and inner is not None and not getattr(inner, "_xeforge_counted", False):

        def set_grid_dim(self, nx, ny, nz):
            with LAUNCHES.lock:
                LAUNCHES.programs += int(nx) * int(ny) * int(nz)
            return inner(self, nx, ny, nz)

        set_grid_dim._xeforge_counted = True  # type: ignore[attr-defined]
        builder.set_grid_dim = set_grid_dim


def _empty(grid) -> bool:
    """A grid written as numbers with no program in it (`(0,)`): a launch that runs nothing."""
    try:
        return isinstance(grid, (tuple, list)) and any(int(g) <= 0 for g in grid)
    except (TypeError, ValueError):
        return False


def _wrap(cls, attr: str, ran: bool = False) -> None:
    """Count each launch through `cls.attr` that runs at least one program: with `ran`, by the programs
    the interpreter ran during it; otherwise unless its grid is written as numbers with none."""
    inner = getattr(cls, attr)
    if getattr(inner, "_xeforge_counted", False):
        return

    def counted(self, *args, **kwargs):
        if kwargs.get("warmup"):  # `JITFunction.warmup` compiles and launches nothing
            return inner(self, *args, **kwargs)
        name = getattr(getattr(self, "fn", None), "__name__", None)
        if ran:
            before = LAUNCHES.programs
            result = inner(self, *args, **kwargs)
            if LAUNCHES.programs > before:
                LAUNCHES.bump(name)
            return result
        if not _empty(kwargs.get("grid")):
            LAUNCHES.bump(name)
        return inner(self, *args, **kwargs)

    counted._xeforge_counted = True  # type: ignore[attr-defined]
    setattr(cls, attr, counted)


# The call being recorded in this process, if any (`light_search` asks).
_recording: Recording | None = None

# What a search inside a recorded call times each config for: enough to rank them, few launches.
LIGHT_BENCH_MS = (1, 3)  # warm-up, repetitions (Triton's own default is 25 and 100)


@contextlib.contextmanager
def light_search(tuner):
    """Within, while a call is recorded: the autotuner `tuner` benchmarks each config for a few
    milliseconds instead of about 125.

    The harness searches each new key in an unrecorded warm-up call (`evaluate`'s `_warm`), so this is
    for a key first met inside a checked call. There every benchmark launch is a profiled device
    kernel: a 16-config list of an 8192-element kernel made hundreds of thousands of events, and
    parsing them took longer than the 120 s a call may take (H100). Nothing is left unprofiled: an
    earlier version stopped the profiler for the search and started another after it, and that killed
    the worker with SIGSEGV inside a `torch.library.triton_op` (a profile stopped while the op's
    record range was open, H100, torch 2.11)."""
    if _recording is None or _recording.device_kind == "cpu":  # the interpreter's search times nothing
        yield
        return
    from triton import testing

    warmup, rep = LIGHT_BENCH_MS

    def bench(kernel_call, quantiles=None, **_):
        return testing.do_bench(kernel_call, warmup=warmup, rep=rep, quantiles=quantiles)

    # Triton >= 3.2 benchmarks through `_do_bench` (the `do_bench` property); older ones read
    # `num_warmups`/`num_reps` at each search.
    saved = {k: tuner.__dict__[k] for k in ("_do_bench", "num_warmups", "num_reps") if k in tuner.__dict__}
    if "_do_bench" in saved:
        tuner._do_bench = bench
    else:
        tuner.num_warmups, tuner.num_reps = warmup, rep
    try:
        yield
    finally:
        tuner.__dict__.update(saved)


class Recording:
    """Everything one call runs: ATen operators (two layers), Triton launches, device kernels.

    `tampered` says why the record cannot be trusted (a popped dispatch mode, a profiler that was
    stopped or saw nothing at all while the dispatch mode saw operators).
    """

    def __init__(self, device_kind: str) -> None:
        self.device_kind = device_kind
        self.ops: set[str] = set()
        self.kernels: set[str] = set()
        self.launches = 0
        self.launched: list[str] = []  # the Triton kernels launched, by name
        self.oob: list[str] = []  # accesses outside every argument (`bounds`, interpreter only)
        self.races: list[str] = []  # elements two programs of a launch write (interpreter only)
        # autotuner (by id) → configs of its list not yet run in this process (interpreter only)
        self.unrun: dict[int, int] = {}
        self.precision: list[str] = []  # dots and narrowing casts the kernels ran (interpreter only)
        self.host: set[str] = set()  # tensor values moved to or from the host by the caller's code
        self.tampered: list[str] = []
        self._mode = OpRecorder()
        self._prof: Any = None  # torch.profiler.profile once entered

    def __enter__(self) -> Recording:
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if self.device_kind == "cuda":
            activities.append(ProfilerActivity.CUDA)
        elif self.device_kind == "xpu" and hasattr(ProfilerActivity, "XPU"):
            activities.append(ProfilerActivity.XPU)
        config = torch._C._profiler._ExperimentalConfig(profile_all_threads=True)
        self._prof = profile(activities=activities, experimental_config=config)
        self._prof.__enter__()
        global _recording
        _recording = self
        self._launches0 = LAUNCHES.count
        self._by_name0 = dict(LAUNCHES.by_name)
        self._oob0 = len(OOB.seen)
        self._races0 = len(RACES.seen)
        self._precision0 = dict(PRECISION.counts)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        global _recording
        _recording = None
        if _get_current_dispatch_mode() is not self._mode:
            self.tampered.append("the operator recorder was removed from the dispatch stack")
        else:
            self._mode.__exit__(*exc)
        self.launches = LAUNCHES.count - self._launches0
        self.launched = sorted(n for n, c in LAUNCHES.by_name.items() if c > self._by_name0.get(n, 0))
        self.oob = list(dict.fromkeys(OOB.seen[self._oob0 :]))[:4]
        self.races = list(dict.fromkeys(RACES.seen[self._races0 :]))[:4]
        self.precision = sorted(k for k, c in dict(PRECISION.counts).items() if c > self._precision0.get(k, 0))
        self.ops |= self._mode.ops | self.host
        try:
            self._prof.__exit__(*exc)
            events = list(self._prof.events())
        except Exception as e:  # a profiler disabled under our feet cannot be read
            self.tampered.append(f"the profiler was stopped during the call ({type(e).__name__})")
            events = []
        seen_ops = False
        profiled: dict[str, int] = {}
        for event in events:
            op = profiler_op(event.name)
            if op is not None:
                seen_ops = True
                parent = getattr(event, "cpu_parent", None)
                if getattr(parent, "name", None) != "PythonDispatchMode":  # not the mode's own redispatch
                    profiled[op] = profiled.get(op, 0) + 1
            elif _is_device_kernel(event):
                self.kernels.add(_kernel_name(event.name))
        # The profiler sees every thread, the dispatch mode only this one (with the pass each ran in):
        # an operator the profiler saw more often than the dispatcher ran elsewhere, in no known pass.
        for op, n in profiled.items():
            if n > self._mode.counts.get(op, 0):
                self.ops.add(op)
        if self._mode.ops and not seen_ops and not self.tampered:
            self.tampered.append("the profiler recorded no operator although the dispatcher ran some")

    def report(self) -> dict:
        return {
            "ops": sorted(self.ops),
            "kernels": sorted(self.kernels),
            "launches": self.launches,
            "launched": self.launched,
            "oob": self.oob,
            "races": self.races,
            "configs_unrun": max(self.unrun.values(), default=0),
            "precision": self.precision,
            "tampered": self.tampered,
        }


def _is_device_kernel(event) -> bool:
    device_type = getattr(event, "device_type", None)
    return (
        device_type is not None
        and str(device_type).split(".")[-1] in ("CUDA", "XPU", "PrivateUse1")
        and not event.name.startswith(("cuda", "Memcpy", "Memset", "ur", "ze"))
    )


def _kernel_name(name: str) -> str:
    """A device kernel's name without its argument list."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            return name[:i].strip()
    return name.strip()


# Device kernels that move or fill memory; any other non-Triton kernel counts as library compute.
_UTILITY_KERNEL_WORDS = (
    "FillFunctor",
    "fill_kernel",
    "copy_kernel",
    "CatArrayBatchedCopy",
    "direct_copy",
    "unrolled_elementwise_kernel<at::native::FillFunctor",
    "memcpy",
    "memset",
)


def is_triton_kernel(kernel: str, triton_names: set[str]) -> bool:
    """Whether a device kernel's name is one of `triton_names`: exactly, or with the argument signature
    older Tritons appended (`add_kernel_0d1d2d3de`). Not any name with that prefix: a decoy
    `@triton.jit def sm90` would otherwise pass cuBLAS's `sm90_xmma_gemm_...` for a kernel of the file."""
    base = kernel.split("(")[0].strip()
    return any(base == t or re.fullmatch(re.escape(t) + r"_[0-9cde]+", base) for t in triton_names)


def library_kernels(kernels: list[str], triton_names: set[str]) -> list[str]:
    """The device kernels that are neither Triton kernels of the file nor memory utilities."""
    out = []
    for k in kernels:
        if is_triton_kernel(k, triton_names):
            continue
        if any(w in k for w in _UTILITY_KERNEL_WORDS):
            continue
        out.append(k)
    return sorted(set(out))
