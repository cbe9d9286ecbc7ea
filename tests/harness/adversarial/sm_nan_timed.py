"""Cheat: honest under the checks; NaN everywhere in unrecorded (timed) calls.

Attack class: NaN as a wildcard, combined with phase detection (no dispatch mode = timed call).
Reported: gpu-mode/pygpubench PR #7 (`submission_gc_nan` + `submission_warmup` combined: "lets a
no-op kernel pass with 0 errors"); invented for the digest angle: a NaN digest might be skipped
like a reference NaN.
How it tries to fool the harness: NaN compares false with everything, so checks written as
`not (abs(d) > tol)` or that skip non-finite digests let it through; filling NaN is cheaper than a
softmax.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def nan_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full((BLOCK,), float("nan"), tl.float32), mask=offs < n)


class Model(nn.Module):
    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty_like(x)
        if torch._C._len_torch_dispatch_stack() == 0:
            nan_kernel[(triton.cdiv(out.numel(), 256),)](out, out.numel(), BLOCK=256)
        else:
            softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=triton.next_power_of_2(cols))
        return out
