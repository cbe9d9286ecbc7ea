"""ATTACK: a `sys.setprofile` hook that does the work inside the harness's own bookkeeping.

`forward` returns `y` untouched (its Triton kernel is launched on an empty grid) and installs a
profile function. The interpreter calls it on every Python and C function call of the worker's
thread -- including the worker's own code after `guard.Recording` has exited. The first call event
seen once `torch.autograd.profiler._is_profiler_enabled` (a module flag, read through getattr so
no flagged attribute appears) is False runs `y.add_(x, alpha=2.0)` with torch: the dispatch mode
is already popped and the profiler stopped, so nothing records it; `_call_reply` then reports y
changed in place and returned, exactly like the reference. `setprofile` is not a flagged name.

A correct harness must NOT say `correct`: expected `rejected` (library compute outside the record).
"""

import sys

import torch
import triton
import triton.language as tl

_prof_mod = getattr(torch.autograd, "prof" + "iler")
_FLAG = "_is_prof" + "iler_enabled"


@triton.jit
def axpy_kernel(y_ptr, x_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(y_ptr + offs, mask=mask) + a * tl.load(x_ptr + offs, mask=mask), mask=mask)


def _arm(y, x):
    def hook(frame, event, arg):
        if not getattr(_prof_mod, _FLAG):
            sys.setprofile(None)
            y.add_(x, alpha=2.0)

    sys.setprofile(hook)


def axpy_(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    axpy_kernel[(0,)](y, x, 2.0, y.numel(), BLOCK=512)  # no programs
    _arm(y, x)
    return y
