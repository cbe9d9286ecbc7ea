"""Cheat: returns the right sum, viewed as shape (1, N) instead of (N,).

Attack class: a broadcastable shape.
Reported: invented (`torch.allclose(ref, out)` broadcasts (N,) against (1, N) and passes; the
caller gets a tensor of another rank).
How it tries to fool the harness: every value is exact; only an exact shape check catches it.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out.view(1, n)
