"""What the judge learns from a file's text alone (parsed with `ast`, never executed).

The names of its Triton kernels (to tell its device kernels from library ones) and the precision it
asks for (so the evidence can say when a candidate changed it: the dtype stage may, within the
spec's tolerance, and the user must see that it did).
"""

from __future__ import annotations

import ast
import os
from collections import Counter

# Precision-bearing spellings in Triton and PyTorch code.
_DTYPES = ("float64", "float32", "float16", "bfloat16", "float8e4nv", "float8e5", "float8_e4m3fn", "float8_e5m2", "tf32", "int8")
_KEYWORDS = ("input_precision", "allow_tf32", "out_dtype", "acc_dtype", "max_num_imprecise_acc")


def read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def triton_kernels(text: str) -> set[str]:
    """Names of functions decorated with something ending in `jit` (triton.jit, tl.jit, jit)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                dotted = ast.unparse(target)
                if dotted.split(".")[-1] == "jit":
                    names.add(node.name)
    return names


def imported_modules(text: str) -> list[str]:
    """Absolute module names the file imports anywhere (`import a.b`, `from a.b import c`), in order.

    The candidate's worker imports these before it gives up root (`worker.preload_installed`): under the
    sandbox user a module whose files only root can read (a Python installed under /root) is not found.
    """
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return list(dict.fromkeys(names))


def precision(text: str) -> Counter:
    """How often each precision spelling occurs (attribute names, strings, keywords)."""
    counts: Counter = Counter()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return counts
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _DTYPES:
            counts[node.attr] += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _DTYPES + ("ieee", "tf32x3"):
            counts[f"'{node.value}'"] += 1
        elif isinstance(node, ast.keyword) and node.arg in _KEYWORDS:
            counts[f"{node.arg}="] += 1
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(("set_float32_matmul_precision", "allow_tf32")):
            counts[ast.unparse(node.func).split(".")[-1]] += 1
    return counts


def precision_changes(original: str, candidate: str) -> list[str]:
    """Human-readable differences: `bfloat16: 0 → 2`."""
    a, b = precision(original), precision(candidate)
    return [f"{k}: {a.get(k, 0)} → {b.get(k, 0)}" for k in sorted(set(a) | set(b)) if a.get(k, 0) != b.get(k, 0)]


# Constructs through which code can reach, and rewrite, the harness's in-process recorders or the
# interpreter's state: modules, and attributes that only introspection needs.
_REACHING_MODULES = {
    "inspect",
    "gc",
    "ctypes",
    "cffi",
    "importlib",
    "xeforge_harness",
    "_thread",
    "builtins",
    # work outside the recorders: other processes, and compute on the host
    "subprocess",
    "multiprocessing",
    "concurrent",
    "numpy",
    "pty",
    "signal",
    # code the text does not show: serialised, compiled or run by name
    "marshal",
    "pickle",
    "_pickle",
    "copyreg",
    "shelve",
    "dill",
    "cloudpickle",
    "runpy",
    # bytes of a tensor taken apart on the host (a pure-Python compute beside a decoy launch)
    "struct",
    "zipfile",
    "code",
    "codeop",
    "types",
    # work beside the call, after it returns or when the process ends
    "threading",
    "atexit",
    "weakref",
    "mmap",
}
_REACHING_ATTRS = {
    "_getframe",
    "_current_frames",
    "f_locals",
    "f_back",
    "f_globals",
    "f_code",
    "tb_frame",
    "gi_frame",
    "__globals__",
    "__closure__",
    "__code__",
    "__subclasses__",
    "__builtins__",
    "_C",
    "_get_current_dispatch_mode",
    "_pop_torch_dispatch_stack",
    "_len_torch_dispatch_stack",
    "profiler",
    "_profiler_enabled",
    "_is_profiler_enabled",
    # work on streams or graphs of its own, and sleeping kernels
    "Stream",
    "set_stream",
    "stream",
    "CUDAGraph",
    "XPUGraph",
    "graph",
    "make_graphed_callables",
    "_sleep",
    "fork",
    "forkpty",
    "posix_spawn",
    "posix_spawnp",
    "system",
    "popen",
    "kill",
    "killpg",
    "numpy",
    "tolist",
    # the objects behind a name: a module from a builtin's `__self__`, a class's namespace
    "__self__",
    "__dict__",
    "__bases__",
    "__mro__",
    "__getattribute__",
    "__setattr__",
    "__reduce__",
    "__reduce_ex__",
    # hooks that run code at every call, import or exit
    "setprofile",
    "settrace",
    "meta_path",
    "path_hooks",
    "path_importer_cache",
    # compute outside ATen (a Python callable per element) and switches of the profiler's collection
    "map_",
    "map2_",
    "apply_",
    "_toggle_collection_dynamic",
    "_disable_current_modes",
    "_enable_profiler",
    "_disable_profiler",
    # the interpreter's own module (its numpy, its builder)
    "interpreter",
    # a tensor's values handed to the host without an ATen operator (numpy's protocols, storages)
    "__array__",
    "__array_interface__",
    "__cuda_array_interface__",
    "__dlpack__",
    "from_dlpack",
    "untyped_storage",
    "FunctionType",
    "CodeType",
}

# Builtins that run or reach code by a name the text does not spell.
_REACHING_CALLS = {"exec", "eval", "compile", "vars", "globals", "locals", "breakpoint", "__import__"}
# Roots of the libraries whose private attributes (`torch._dynamo`, `torch.autograd._toggle...`) no
# kernel needs.
_LIBRARIES = {"torch", "triton"}


def reaching(text: str) -> list[tuple[str, int]]:
    """(construct, line) for every import of a `_REACHING_MODULES` module, every `sys.modules` and
    every `_REACHING_ATTRS` attribute or name in the file."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found = []
    sys_names = _sys_names(tree)
    where_names = _where_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] in _REACHING_MODULES]
            # `import triton.runtime.interpreter as TI`, `import torch._C as K`: a private module of
            # the libraries, or the interpreter's, however it is named afterwards
            found += [(f"import {a.name}", node.lineno) for a in node.names if _library_internal(a.name)]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[0] in _LIBRARIES
            and (_library_internal(node.module) or any(_private(a.name) or a.name in ("_C", "interpreter") for a in node.names))
        ):
            # `from torch._C import _DisableTorchDispatch as quiet`, `from torch import _C as K`: the
            # switches that blind the recorders, renamed so that no later attribute spells them
            names = ", ".join(a.name for a in node.names)
            found.append((f"from {node.module} import {names}", node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in _REACHING_MODULES | {"sys"}:
            if node.module.split(".")[0] != "sys" or any(a.name in ("modules", "_getframe") for a in node.names):
                found.append((f"from {node.module} import ...", node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("triton.runtime"):
            if "interpreter" in node.module or any(a.name == "interpreter" for a in node.names):
                found.append((f"from {node.module} import ...", node.lineno))
        elif isinstance(node, ast.Attribute):
            if node.attr in _REACHING_ATTRS or (
                node.attr == "modules" and (ast.unparse(node.value).endswith("sys") or _root(node) in sys_names)
            ):
                found.append((ast.unparse(node), node.lineno))
            elif _private(node.attr) and _root(node) in _LIBRARIES and node.attr != "_C":
                found.append((ast.unparse(node), node.lineno))
        elif isinstance(node, ast.Name) and node.id in _REACHING_ATTRS | _REACHING_CALLS:
            found.append((node.id, node.lineno))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            found += _call_reaching(node, sys_names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SERIALISING:
            if _root(node.func) == "torch":
                found.append((ast.unparse(node.func), node.lineno))
        if isinstance(node, (ast.If, ast.IfExp, ast.While)) and _asks_where(node.test, where_names) and not _only_names_or_refuses(node):
            found.append((f"branches on where it runs: `{ast.unparse(node.test)[:60]}`", node.lineno))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.split(".")[0] in _REACHING_MODULES | {"sys"}
            and len(node.value) > 2
        ):
            found.append((repr(node.value), node.lineno))
    return found


def triton_ops(text: str) -> set[str]:
    """Operators the file registers with `torch.library.triton_op("ns::name", ...)`, as the recorders
    name them (`ns.name`): a body that launches Triton kernels through `wrap_triton`, which the
    recorders see run inside the operator (the profiler counts any ATen operator it runs)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    ops = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            first = node.args[0]
            if name == "triton_op" and isinstance(first, ast.Constant) and isinstance(first.value, str) and "::" in first.value:
                ops.add(first.value.replace("::", "."))
    return ops


def _sys_names(tree: ast.AST) -> set[str]:
    """Names `sys` is known by in the file: `import sys as S`, `S = sys`, `from os import sys`, so that
    `S.modules` reads as what it is."""
    names = {"sys"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname for a in node.names if a.name == "sys" and a.asname}
        elif isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names if a.name == "sys"}
    changed = True
    while changed:  # `S = sys`, then `T = S`
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names:
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id not in names:
                        names.add(t.id)
                        changed = True
    return names


# What a condition reads to tell a GPU from the interpreter (or one run from another).
_WHERE_ATTRS = {"is_cuda", "is_cpu", "is_xpu", "is_available", "device_count", "is_interpreter", "environ", "getenv", "get_device"}


def _asks_where(test: ast.AST, where_names: set[str] | frozenset[str] = frozenset()) -> bool:
    """Whether a condition reads the device or the environment, directly or through a name that holds
    it (`where_names`): a candidate that computes one way on the interpreter and another on a GPU is
    checked on one and timed on the other."""
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute) and (
            n.attr in _WHERE_ATTRS or (n.attr in ("type", "index") and ast.unparse(n.value).endswith("device"))
        ):
            return True
        if isinstance(n, ast.Constant) and (n.value in ("cpu", "cuda", "xpu", "TRITON_INTERPRET") or n.value in _WHERE_ATTRS):
            return True
        if isinstance(n, ast.Name) and n.id in where_names:
            return True
    return False


def _holds_where(value: ast.AST, where_names: set[str]) -> bool:
    """Whether an assigned value is where the code runs, or made from it: `x.device`, `x.device.type`,
    `str(x.device)`, `x.is_cuda`, a name that holds one, a slice or comparison of them. A tensor made
    on a device (`torch.empty(n, device=x.device)`) is not."""
    if isinstance(value, ast.Attribute):
        return value.attr == "device" or _asks_where(value, where_names)
    if isinstance(value, ast.Name):
        return value.id in where_names
    if isinstance(value, ast.Call):
        func = value.func.id if isinstance(value.func, ast.Name) else None
        return func in ("str", "repr", "format", "getattr", "bool") and any(_holds_where(a, where_names) for a in value.args)
    if isinstance(value, (ast.Subscript, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.JoinedStr, ast.FormattedValue)):
        return any(_holds_where(c, where_names) for c in ast.iter_child_nodes(value) if isinstance(c, ast.expr))
    return False


def _where_names(tree: ast.AST) -> set[str]:
    """Names that hold where the code runs (`where = str(x.device)`, then `w = where[:2]`), so that a
    condition on one reads as the condition on the device it is."""
    names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                if not _holds_where(node.value, names):
                    continue
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id not in names:
                        names.add(t.id)
                        changed = True
    return names


def _library_internal(module: str) -> bool:
    """A module path into torch's or Triton's private parts (`torch._C`, `torch._dynamo`) or the
    interpreter's module (`triton.runtime.interpreter`)."""
    parts = module.split(".")
    return parts[0] in _LIBRARIES and any(_private(p) or p == "_C" or p == "interpreter" for p in parts[1:])


def _private(attr: str) -> bool:
    return attr.startswith("_") and not attr.startswith("__")


def _root(node: ast.AST) -> str | None:
    """`torch` for `torch.autograd._x`; None for a chain that does not start at a name."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


# torch functions that turn a tensor into bytes or back (`torch.save` into a buffer, `frombuffer`):
# with `struct`, a way to compute on the host that runs no ATen operator.
_SERIALISING = {"save", "load", "frombuffer", "from_file"}


def _only_names_or_refuses(node: ast.AST) -> bool:
    """A condition on the device that cannot make the result differ: `"cuda" if ... else "cpu"` (a
    device named for a self-test, as Triton's tutorials do), or an `if` that only raises (input
    validation, `if not x.is_cuda: raise ValueError(...)`)."""
    if isinstance(node, ast.IfExp):
        return all(_a_name(b) for b in (node.body, node.orelse))
    if isinstance(node, ast.If):
        return not node.orelse and all(isinstance(b, ast.Raise) for b in node.body)
    return False


_DEVICE_NAMES = {"cuda", "cpu", "xpu", "mps", "cuda:0", "xpu:0"}


def _a_name(node: ast.AST) -> bool:
    """A device's name (`"cuda"`), or `torch.device("cuda")`: not a switch of any other meaning
    (`"fast" if torch.cuda.is_available() else "safe"` stays flagged)."""
    if isinstance(node, ast.Constant):
        return node.value in _DEVICE_NAMES
    return (
        isinstance(node, ast.Call)
        and ast.unparse(node.func) in ("torch.device", "device")
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in _DEVICE_NAMES
    )


def _call_reaching(call: ast.Call, sys_names: set[str]) -> list[tuple[str, int]]:
    """`getattr(x, name)` with a name built at run time or one of `_REACHING_ATTRS`; `getattr(sys,
    "modules")` and the `sys` of another module by name; `setattr` and `delattr` on a library
    (`setattr(torch, ...)`)."""
    name, args = call.func.id, call.args  # type: ignore[attr-defined]
    what = (ast.unparse(call)[:60], call.lineno)
    if name in ("getattr", "setattr", "delattr", "hasattr") and len(args) >= 2:
        attr = args[1]
        if not (isinstance(attr, ast.Constant) and isinstance(attr.value, str)):
            return [what]
        if attr.value == "sys" or (attr.value == "modules" and _root(args[0]) in sys_names):
            return [what]
        if attr.value in _REACHING_ATTRS or attr.value in _REACHING_CALLS or (_private(attr.value) and _root(args[0]) in _LIBRARIES):
            return [what]
        if name in ("setattr", "delattr") and _root(args[0]) in _LIBRARIES:
            return [what]
    return []


def unread_imports(original: str, candidate: str, installed: tuple[str, ...]) -> list[str]:
    """Modules the candidate imports that the original does not and that are not installed (no file
    under `installed`, or none at all yet): code the checks have not read, such as a module the
    candidate writes at run time and then imports."""
    import importlib.util

    have = {m.split(".")[0] for m in imported_modules(original)}
    out = []
    for name in imported_modules(candidate):
        root = name.split(".")[0]
        if root in have or root in out:
            continue
        try:
            spec = importlib.util.find_spec(root)
        except (ImportError, ValueError):
            spec = None
        where = spec.origin if spec is not None and spec.has_location else None
        if spec is not None and not where and spec.submodule_search_locations:
            where = next(iter(spec.submodule_search_locations), None)
        builtin = spec is not None and spec.origin in ("built-in", "frozen")
        if not builtin and not (where and os.path.realpath(where).startswith(installed)):
            out.append(root)
    return out


def new_reaching(original: str, candidate: str) -> list[tuple[str, int]]:
    """What the candidate adds of `reaching` (by construct text, counted), in source order."""
    have = Counter(c for c, _ in reaching(original))
    out = []
    for construct, line in reaching(candidate):
        if have[construct] > 0:
            have[construct] -= 1
        else:
            out.append((construct, line))
    return out
