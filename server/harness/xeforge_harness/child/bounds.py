"""The interpreter's bounds: every load, store and atomic of a launch stays inside the tensors the launch
was given, or the call is recorded as reaching past them.

On a GPU a load past the end of a tensor reads whatever the allocator put there (or faults), and a
store past it overwrites another allocation; the interpreter, reading raw addresses of host memory,
did the same without a word. A rewrite that drops the mask of a load whose block runs over the edge
of a row passed whenever the bytes past the end happened to be harmless, and an original without
masks wrote into the trusted worker's own memory on sizes it was not written for. Here each launch
knows the storage of every tensor among its arguments (inside tuples and tensor descriptors too); an
access outside all of them is not made (a load gives the masked-off value, a store or an atomic
writes nothing) and is noted in `guard.OOB`, which the recorders report as `oob`.

A launch that makes pointers out of integers that address memory outside its arguments (`int_to_ptr`:
a table of `data_ptr()`s, as grouped GEMMs pass) or loads pointers from memory reaches tensors it was
not given, legitimately: such a launch is not bounded. A null or an address inside an argument made
into a pointer (a dead cast) does not lift the bounds.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any

import numpy as np
import torch

from . import guard

_local = threading.local()  # each thread's launches in progress (`stack`), innermost last


class _Launch:
    def __init__(self, kernel: str, ranges: list[tuple[int, int, str, str]]) -> None:
        self.kernel = kernel
        self.ranges = ranges  # (first byte, past the last byte, argument name, what it is)
        self.bounded = bool(ranges)
        self.noted: set[tuple[str, str]] = set()

    def inside(self, addrs: np.ndarray, size: int) -> np.ndarray:
        ok = np.zeros(addrs.shape, dtype=bool)
        for lo, hi, _, _ in self.ranges:
            ok |= (addrs >= lo) & (addrs + size <= hi)
        return ok

    def note(self, verb: str, addrs: np.ndarray, size: int) -> None:
        first = int(addrs.reshape(-1)[0])
        below = [r for r in self.ranges if r[0] <= first]
        if below:
            lo, hi, name, what = max(below, key=lambda r: r[0])
            where = f"{(first - hi) // size + 1} element(s) past the end of `{name}` ({what})"
        else:
            lo, hi, name, what = min(self.ranges, key=lambda r: r[0])
            where = f"{(lo - first + size - 1) // size} element(s) before the start of `{name}` ({what})"
        key = (verb, name)
        if key in self.noted:
            return
        self.noted.add(key)
        guard.OOB.note(f"{verb} {where} in `{self.kernel}` ({addrs.size} access(es) outside every argument)")


def _active() -> _Launch | None:
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def _ranges(names: list[str], values: list[Any]) -> list[tuple[int, int, str, str]]:
    out: list[tuple[int, int, str, str]] = []

    def add(name: str, v: Any) -> None:
        if isinstance(v, torch.Tensor):
            s = v.untyped_storage()
            what = f"a {tuple(v.shape)} {str(v.dtype).removeprefix('torch.')} tensor"
            out.append((int(s.data_ptr()), int(s.data_ptr()) + int(s.nbytes()), name, what))
        elif isinstance(v, (tuple, list)):
            for i, x in enumerate(v):
                add(f"{name}[{i}]", x)
        elif isinstance(getattr(v, "base", None), torch.Tensor):  # a host tensor descriptor
            add(f"{name}.base", v.base)

    for n, v in zip(names, values):
        add(n, v)
    return out


def _addresses(ptrs, mask) -> tuple[np.ndarray, np.ndarray | None]:
    p = np.asarray(ptrs.data)
    m = None if mask is None else np.broadcast_to(np.asarray(mask.data, dtype=bool), p.shape)
    return p.astype(np.uint64, copy=False), m


def _size(ptrs) -> int:
    try:
        return int(np.dtype(_np_dtype(ptrs.get_element_ty())).itemsize)
    except Exception:  # an element type numpy has no name for: a byte at least
        return 1


def _np_dtype(ty):
    from triton.runtime import interpreter as interp

    return interp._get_np_dtype(ty)


def _checked(launch: _Launch, verb: str, ptrs, mask, size: int, tl, TensorHandle):  # noqa: N803
    """The mask with the accesses outside every argument turned off (noted), or None where all are inside."""
    addrs, m = _addresses(ptrs, mask)
    ok = launch.inside(addrs, size)
    wanted = ok if m is None else (ok | ~m)
    if bool(wanted.all()):
        return None
    bad = ~ok if m is None else (~ok & m)
    launch.note(verb, addrs[bad], size)
    keep = ok if m is None else (ok & m)
    return TensorHandle(np.ascontiguousarray(keep), tl.int1)


def install() -> None:
    """Wrap the interpreter's launch and memory operations once per process (interpreter workers only)."""
    import triton.language as tl
    from triton.runtime import interpreter as interp

    builder = interp.InterpreterBuilder
    if getattr(builder.create_masked_load, "_xeforge_bounds", False):
        return
    TensorHandle = interp.TensorHandle  # noqa: N806  (the interpreter's class)
    load, store = builder.create_masked_load, builder.create_masked_store
    rmw, cas, int_to_ptr = builder.create_atomic_rmw, builder.create_atomic_cas, builder.create_int_to_ptr
    run = interp.GridExecutor.__call__

    def create_masked_load(self, ptrs, mask, other, cache_policy, is_volatile):
        launch = _active()
        if launch is not None and launch.bounded:
            if ptrs.get_element_ty().is_ptr():  # pointers read from memory: a table of tensors it was not given
                launch.bounded = False
            else:
                kept = _checked(launch, "reads", ptrs, mask, _size(ptrs), tl, TensorHandle)
                if kept is not None:
                    mask = kept
        return load(self, ptrs, mask, other, cache_policy, is_volatile)

    def create_masked_store(self, ptrs, value, mask, cache_policy):
        launch = _active()
        if launch is not None and launch.bounded:
            kept = _checked(launch, "writes", ptrs, mask, _size(ptrs), tl, TensorHandle)
            if kept is not None:
                mask = kept
        return store(self, ptrs, value, mask, cache_policy)

    def create_atomic_rmw(self, op, ptr, val, mask, sem, scope):
        launch = _active()
        if launch is not None and launch.bounded:
            kept = _checked(launch, "updates", ptr, mask, _size(ptr), tl, TensorHandle)
            if kept is not None:
                mask = kept
        return rmw(self, op, ptr, val, mask, sem, scope)

    def create_atomic_cas(self, ptr, cmp, val, sem, scope):
        launch = _active()
        if launch is not None and launch.bounded:
            kept = _checked(launch, "updates", ptr, None, _size(ptr), tl, TensorHandle)
            if kept is not None:  # the interpreter's cas has no mask: refuse the call rather than write
                raise IndexError(f"an atomic_cas outside every argument of `{launch.kernel}`")
        return cas(self, ptr, cmp, val, sem, scope)

    def create_int_to_ptr(self, src, *args, **kwargs):
        launch = _active()
        if launch is not None and launch.bounded:
            # Pointers made from integers reach tensors the launch was not given (a table of
            # `data_ptr()`s), but only integers that are such addresses: a null, a small number or an
            # address inside an argument (a dead cast meant to switch these bounds off) keeps them.
            values = np.asarray(src.data).astype(np.uint64, copy=False).reshape(-1)
            far = values[(values >= 4096) & ~launch.inside(values, 1)] if values.size else values
            if far.size:
                launch.bounded = False
        return int_to_ptr(self, src, *args, **kwargs)

    def call(self, *args, **kwargs):
        try:
            names = list(inspect.signature(self.fn).parameters)
        except (TypeError, ValueError):
            names = []
        values = list(args) + [kwargs.get(n) for n in names[len(args) :]]
        launch = _Launch(getattr(self.fn, "__name__", "kernel"), _ranges(names, values))
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(launch)
        try:
            return run(self, *args, **kwargs)
        finally:
            stack.pop()

    wrapped: tuple[Any, ...] = (create_masked_load, create_masked_store, create_atomic_rmw, create_atomic_cas, create_int_to_ptr, call)
    for f in wrapped:
        f._xeforge_bounds = True
    # The launch counter (`guard.install_launch_hooks`) may be inside: its mark stays visible.
    call._xeforge_counted = getattr(run, "_xeforge_counted", False)  # type: ignore[attr-defined]
    builder.create_masked_load = create_masked_load
    builder.create_masked_store = create_masked_store
    builder.create_atomic_rmw = create_atomic_rmw
    builder.create_atomic_cas = create_atomic_cas
    builder.create_int_to_ptr = create_int_to_ptr
    interp.GridExecutor.__call__ = call
