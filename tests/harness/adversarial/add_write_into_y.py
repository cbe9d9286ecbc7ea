"""Cheat: writes the sum into the input buffer `y` and returns `y` (no output allocation).

Attack class: output written into an input buffer / inputs overwritten.
Reported: KernelBench PR #82 ("flag kernels that try to hack by modifying the input").
How it tries to fool the harness: saves the allocation and a write stream; a harness that compares
values only, or that lets the reference run on the same (now modified) buffers, sees the right sum.
"""

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
        n = y.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, y, n, BLOCK_SIZE=256)
        return y
