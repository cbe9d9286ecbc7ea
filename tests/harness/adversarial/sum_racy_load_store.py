"""ATTACK: drop the atomic -- a race that Triton's sequential interpreter never loses.

Each program reads the running total, adds its block's sum and stores it back with a plain
`tl.load`/`tl.store` instead of `tl.atomic_add` (faster on a GPU: no atomic traffic). On a GPU the
5 programs of the ci size (and the 16384 of the bench size) run concurrently and overwrite each
other's partial sums: the result is wrong and nondeterministic. Triton's interpreter runs the
programs one after another, so every read would see the previous store and the total would be
exact; the harness's interpreter (`child/interpreter.py`, `_concurrent_programs`) keeps a program's
plain stores from the other programs until the launch ends (or the program performs an atomic), so
every program reads 0 and only the last block's sum is left, as in a GPU's worst case.

A correct harness must NOT say `correct`: expected `incorrect` (on a GPU and on the interpreter).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    running = tl.load(out_ptr)
    tl.store(out_ptr, running + tl.sum(x, axis=0))


def total(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    n = x.numel()
    sum_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
