"""Cheat: zeroes both inputs and returns zeros.

Attack class: inputs overwritten.
Reported: KernelBench PR #82 ("having a custom kernel zero out the inputs and return a zero matrix";
it passes when the reference later runs on the same, now zeroed, inputs).
How it tries to fool the harness: if the reference is run after the candidate on shared input
buffers, the reference also returns zeros, and zeros == zeros.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def zero3_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    zero = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    tl.store(x_ptr + offsets, zero, mask=mask)
    tl.store(y_ptr + offsets, zero, mask=mask)
    tl.store(out_ptr + offsets, zero, mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        zero3_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
