"""What a kernel file written for a GPU asks of its device, answered on the Triton interpreter.

Files written the way Triton's own tutorials write them ask the active driver for their device at
import (`DEVICE = triton.runtime.driver.active.get_active_torch_device()`) and for its properties
(`driver.active.utils.get_device_properties(DEVICE.index)["multiprocessor_count"]`), or torch for its
properties (`NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count`, as persistent
kernels size their grids); wrappers from libraries enter `torch.cuda.device(x.device)` around a launch,
assert `x.is_cuda` or call `torch.cuda.synchronize()`. Under `TRITON_INTERPRET=1` without a GPU
Triton has no active driver ("0 active drivers"), and `torch.cuda.device` refuses a CPU device, so the
original itself cannot be imported or called there, and no stage could check anything.

`install` answers those questions for the interpreter, in both workers alike and before any user
module is imported: the torch device is the CPU, and the properties are those of a generic GPU
(`PROPERTIES`), which only size what a wrapper computes from them (a persistent grid, a tile), never a
result. Only the interpreter's workers install it; on a device each worker keeps that device's driver.
"""

from __future__ import annotations

import math

import numpy as np
import torch

# A generic GPU for wrappers that size work from the device (the field names are Triton's CUDA driver's,
# which the tutorials read). The interpreter runs every program in turn, so only correctness depends
# on them: any value a real device could report will do.
PROPERTIES = {
    "max_shared_mem": 101376,
    "max_num_regs": 65536,
    "multiprocessor_count": 16,
    "warpSize": 32,
    "sm_clock_rate": 1500000,
    "mem_clock_rate": 1500000,
    "mem_bus_width": 256,
}


class _Utils:
    def get_device_properties(self, device=0) -> dict:
        return dict(PROPERTIES)


class InterpreterDriver:
    """The active driver's questions a kernel file asks, answered for the CPU interpreter."""

    def __init__(self) -> None:
        self.utils = _Utils()

    @staticmethod
    def is_active() -> bool:
        return True

    def get_active_torch_device(self) -> torch.device:
        return torch.device("cpu")

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device) -> None:
        pass

    def get_current_stream(self, device=None) -> int:
        return 0

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget

        return GPUTarget("cpu", 0, 32)

    def get_device_interface(self):
        return torch.cpu

    def get_benchmarker(self):
        # Nothing is timed on the interpreter: the autotuner's search is fixed (see `_fixed_autotune`).
        def bench(fn, *args, **kwargs):
            fn()
            return 0.0

        return bench

    def get_empty_cache_for_benchmark(self) -> torch.Tensor:
        return torch.empty(0, dtype=torch.int8)

    def clear_cache(self, cache) -> None:
        pass


def install() -> None:
    _fixed_autotune()
    _driver()
    _cuda_device_context()
    _cuda_queries()
    _cpu_tensors_stand_for_the_gpu()
    _libdevice()
    _string_constexprs()


def _fixed_autotune() -> None:
    """On the Triton interpreter there is no device to benchmark configs on: each search of an
    autotuner picks the next of its configs in turn (the first search the first config, the next
    search the second, ...).

    Triton's own search would time every config with the driver's benchmarker, which times nothing
    here. On a GPU any config may win, so each must be right: a list whose first config is right and
    another wrong (a mask dropped where only the first tile divides the sizes) would pass a check that
    always ran the first. Each new key (a variant's sizes) is a new search, so a family of variants
    runs as many configs. The first config is still called once in every search, through the
    autotuner's own hooks, as a GPU's search calls every config: a kernel that updates an argument in
    place shows here what its search does to a caller's tensors (`search_effects`), and
    `restore_value`/`reset_to_zero` act as they do there.
    """
    from triton.runtime import autotuner

    real = autotuner.Autotuner._bench

    def no_bench(self, *args, config, **meta):
        # A config benchmarked twice means a new search has begun.
        seen = self.__dict__.setdefault("_xeforge_seen", set())
        if id(config) in seen:
            seen.clear()
            self._xeforge_searches = self.__dict__.get("_xeforge_searches", 0) + 1
        seen.add(id(config))
        index = next((i for i, c in enumerate(self.configs) if c is config), 0)
        turn = self.__dict__.get("_xeforge_searches", 0)
        if index == 0:
            real(self, *args, config=config, **meta)
        return [float((index - turn) % max(1, len(self.configs)))] * 3

    autotuner.Autotuner._bench = no_bench


def _string_constexprs() -> None:
    """`BLOCK_SIZE: "tl.constexpr"`, a string annotation (as PyTorch's `triton_op` examples and files
    with `from __future__ import annotations` write it): Triton's compiler reads it as a constexpr,
    its interpreter (3.9) only an annotation that normalizes to "constexpr" exactly, so the original
    failed there with "arange's arguments must be of type tl.constexpr". A string whose last dotted
    part is `constexpr` (quoted or not) is one here too."""
    import inspect

    from triton.runtime import interpreter

    init = interpreter.GridExecutor.__init__
    if getattr(init, "_xeforge_strings", False):
        return

    def init_reading_strings(self, fn, arg_names, grid, *args, **kwargs):
        init(self, fn, arg_names, grid, *args, **kwargs)
        written = inspect.get_annotations(fn)
        self.constexprs += [
            name
            for name in arg_names
            if name not in self.constexprs and isinstance(written.get(name), str) and _constexpr_spelled(written[name])
        ]

    init_reading_strings._xeforge_strings = True  # type: ignore[attr-defined]
    interpreter.GridExecutor.__init__ = init_reading_strings


def _constexpr_spelled(annotation: str) -> bool:
    # The interpreter recompiles the kernel's source with postponed annotations: the string annotation
    # comes back quoted once more ("'tl.constexpr'").
    return annotation.strip().strip("'\"").rsplit(".", 1)[-1] == "constexpr"


def _driver() -> None:
    from triton.runtime import driver

    # Even on a host with a GPU: the harness's tensors are on the CPU here, and a file that compares
    # its inputs' device with the driver's must see the same one.
    driver.set_active(InterpreterDriver())


def _cuda_device_context() -> None:
    """`with torch.cuda.device(x.device):` around a launch: for a CPU device a no-op (torch's own for a
    negative index); a CUDA device is selected as before. `torch.cuda.device(x.device.index)` passes
    None for a CPU tensor, which torch documents as a no-op too; here it would ask `current_device`,
    which `_cuda_queries` answers with 0, and selecting device 0 fails without a driver."""

    class device(torch.cuda.device):  # noqa: N801  (torch's own name, as wrappers spell it)
        def __init__(self, dev):
            if dev is None or (isinstance(dev, (torch.device, str)) and torch.device(dev).type == "cpu"):
                dev = -1
            super().__init__(dev)

    torch.cuda.device = device  # type: ignore[misc]


def _cpu_tensors_stand_for_the_gpu() -> None:
    """`assert x.is_cuda` in a wrapper (a common guard of GPU-only code): on the interpreter the
    harness's tensors are on the CPU, which stands in for the GPU, so a CPU tensor answers True. Only
    the attribute: `x.device` is still the CPU, and torch dispatches by the device, not by this."""
    native = torch.Tensor.is_cuda
    if isinstance(native, property):
        return  # installed already
    torch.Tensor.is_cuda = property(lambda self: self.device.type == "cpu" or native.__get__(self))  # type: ignore[assignment,attr-defined]


def _cuda_queries() -> None:
    """Without a CUDA driver, torch's questions about the device (`get_device_properties`,
    `get_device_capability`, `get_device_name`, `current_device`) get the generic GPU's answers instead
    of "Found no NVIDIA driver": they size a persistent grid or pick a config list, never a result.
    Allocating on "cuda" still fails, and the harness says what to write instead."""
    if torch.cuda.is_available():
        return
    from types import SimpleNamespace

    props = SimpleNamespace(
        name="generic GPU (the Triton interpreter on CPU)",
        major=8,
        minor=0,
        multi_processor_count=PROPERTIES["multiprocessor_count"],
        total_memory=16 << 30,
        L2_cache_size=4 << 20,
        shared_memory_per_block_optin=PROPERTIES["max_shared_mem"],
        max_threads_per_multi_processor=2048,
        regs_per_multiprocessor=PROPERTIES["max_num_regs"],
        warp_size=PROPERTIES["warpSize"],
        is_integrated=False,
        is_multi_gpu_board=False,
    )
    answers = {
        "get_device_properties": lambda device=None: props,
        "get_device_capability": lambda device=None: (props.major, props.minor),
        "get_device_name": lambda device=None: props.name,
        "current_device": lambda: 0,
        # The interpreter runs each launch to completion before it returns: nothing to wait for.
        "synchronize": lambda device=None: None,
    }
    for name, answer in answers.items():
        setattr(torch.cuda, name, answer)


def _np_round(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)  # libdevice rounds halves away from zero


def _np_flag(test):
    return lambda x: test(x).astype(np.int32)  # libdevice's predicates return int32


_erf = np.vectorize(math.erf)

# libdevice's math by its base name (`__nv_tanhf` → tanh; fast_, rounding-mode and float-suffix
# variants map to the same), as numpy computes it. Rounding modes other than nearest are not told
# apart: the comparison's tolerance is far wider than one ulp.
LIBDEVICE = {
    "abs": np.abs,
    "fabs": np.abs,
    "acos": np.arccos,
    "acosh": np.arccosh,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atanh": np.arctanh,
    "atan2": np.arctan2,
    "cos": np.cos,
    "cosh": np.cosh,
    "sin": np.sin,
    "sinh": np.sinh,
    "tan": np.tan,
    "tanh": np.tanh,
    "exp": np.exp,
    "exp2": np.exp2,
    "exp10": lambda x: np.power(10.0, x),
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "fsqrt": np.sqrt,
    "dsqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "frsqrt": lambda x: 1 / np.sqrt(x),
    "cbrt": np.cbrt,
    "rcbrt": lambda x: 1 / np.cbrt(x),
    "rcp": lambda x: 1 / x,
    "frcp": lambda x: 1 / x,
    "drcp": lambda x: 1 / x,
    "ceil": np.ceil,
    "floor": np.floor,
    "trunc": np.trunc,
    "rint": np.rint,
    "nearbyint": np.rint,
    "llrint": np.rint,  # to an integer type: the builder casts to the return type
    "lrint": np.rint,
    "round": _np_round,
    "llround": _np_round,
    "lround": _np_round,
    "pow": np.power,
    "powi": np.power,
    "fmod": np.fmod,
    "remainder": lambda x, y: x - np.rint(x / y) * y,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "fdim": lambda x, y: np.maximum(x - y, 0),
    "fma": lambda x, y, z: x * y + z,
    "fadd": np.add,
    "dadd": np.add,
    "fsub": np.subtract,
    "dsub": np.subtract,
    "fmul": np.multiply,
    "dmul": np.multiply,
    "fdiv": np.divide,
    "ddiv": np.divide,
    "fdivide": np.divide,
    "div": np.divide,
    "erf": _erf,
    "erfc": lambda x: 1 - _erf(x),
    "normcdf": lambda x: 0.5 * (1 + _erf(x / math.sqrt(2))),
    "lgamma": np.vectorize(math.lgamma),
    "tgamma": np.vectorize(math.gamma),
    "sinpi": lambda x: np.sin(np.pi * x),
    "cospi": lambda x: np.cos(np.pi * x),
    "saturate": lambda x: np.clip(x, 0, 1),
    "ldexp": np.ldexp,
    "isnan": _np_flag(np.isnan),
    "isinf": _np_flag(np.isinf),
    "isfinite": _np_flag(np.isfinite),
    "finite": _np_flag(np.isfinite),
    "signbit": _np_flag(np.signbit),
}


def libdevice_function(symbol: str):
    """numpy's version of a libdevice symbol (`__nv_tanhf`, `__nv_fast_expf`, `__nv_fadd_rn`), or None."""
    name = symbol
    for prefix in ("__nv_", "__ocml_", "__imf_"):
        name = name.removeprefix(prefix)
    name = name.removeprefix("fast_")
    for suffix in ("_rn", "_rz", "_rd", "_ru", "_f32", "_f64", "_f16"):
        name = name.removesuffix(suffix)
    for candidate in (name, name.removesuffix("f"), name.removesuffix("d")):
        if candidate in LIBDEVICE:
            return LIBDEVICE[candidate]
    return None


def _libdevice() -> None:
    """`libdevice.tanh(x)` on the interpreter. Triton's interpreter has no extern functions: the generic
    `triton.language.extra.libdevice` is stubs the compiler swaps for the backend's, and the backend's
    call `create_extern_elementwise`, which the interpreter refuses. GELU, erf and rsqrt kernels
    written with libdevice (as Liger's, Unsloth's and FlagGems' are) could not be checked on the CPU.
    Here the backend's functions run with the interpreter's semantics, the stubs call them, and the
    builder computes the symbol with numpy; an unknown symbol still says so."""
    try:
        from triton.language.extra import libdevice as stubs
        from triton.language.extra.cuda import libdevice as cuda
        from triton.runtime import interpreter as interp
    except ImportError:
        return

    def extern(self, lib_name, lib_path, symbol, args, ret_type, is_pure):
        fn = libdevice_function(symbol)
        if fn is None:
            raise NotImplementedError(f"libdevice `{symbol}` has no stand-in on the Triton interpreter")
        scalar = ret_type.scalar
        out = np.asarray(fn(*[a.data for a in args]))
        return interp.TensorHandle(out.astype(interp._get_np_dtype(scalar)), scalar)

    type(interp.interpreter_builder).create_extern_elementwise = extern

    def interpreted(impl):
        def call(*args, **kwargs):
            kwargs.pop("_semantic", None)
            return impl(*args, **kwargs, _semantic=interp.interpreter_semantic)

        return call

    from triton.language.core import is_builtin

    impls = {name: member for name, member in vars(cuda).items() if is_builtin(member)}
    for name, impl in impls.items():
        wrapped = interpreted(impl)
        setattr(cuda, name, wrapped)
        if callable(getattr(stubs, name, None)):
            setattr(stubs, name, wrapped)
