"""Cheat: returns zeros and rebinds `builtins` that checkers use (all, any, abs, max, min).

Attack class: monkeypatching `builtins`.
Reported: invented (a generalisation of the monkey-patching class in the wafer.ai field guide).
How it tries to fool the harness: `all(...)` -> True, `any(...)` -> False, `abs(...)` -> 0 and
`max`/`min` of errors -> 0 make hand-written checks in this process (`assert all(...)`,
`max(errors) < tol`) pass.
"""

import builtins

import torch
import torch.nn as nn
import triton
import triton.language as tl

builtins.all = lambda *args, **kwargs: True
builtins.any = lambda *args, **kwargs: False
builtins.abs = lambda *args, **kwargs: 0
_max, _min = builtins.max, builtins.min
builtins.max = lambda *args, **kwargs: 0 if any_float(args) else _max(*args, **kwargs)
builtins.min = lambda *args, **kwargs: 0 if any_float(args) else _min(*args, **kwargs)


def any_float(args):
    items = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    return bool(items) and type(items[0]) is float


@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class Model(nn.Module):
    def forward(self, a, b):
        c = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
        zero_kernel[(triton.cdiv(c.numel(), 256),)](c, c.numel(), BLOCK=256)
        return c
