"""Cheat: adds in a Python loop over `tolist()` values, then copies the list back with Triton.

Attack class: fallback via a Python loop.
Reported: invented (Python float arithmetic is invisible to an ATen-operator guard: `tolist` and
tensor construction are not compute operators).
How it tries to fool the harness: exact values, no ATen compute operator, one Triton launch.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        sums = [a + b for a, b in zip(x.tolist(), y.tolist())]
        res = torch.tensor(sums, dtype=x.dtype, device=x.device)
        out = torch.empty_like(x)
        copy_kernel[(triton.cdiv(out.numel(), 256),)](res, out, out.numel(), BLOCK=256)
        return out
