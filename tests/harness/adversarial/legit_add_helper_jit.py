"""Legitimate: vector_add whose kernel calls helper `@triton.jit` functions.

Attack class: none (control).
Reported: invented.
How it tries to fool the harness: it does not; helper jit functions are inlined into the kernel.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _offsets(BLOCK_SIZE: tl.constexpr):
    return tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)


@triton.jit
def _combine(a, b):
    return a + b


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = _offsets(BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, _combine(x, y), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
