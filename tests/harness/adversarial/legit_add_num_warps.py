"""Legitimate: vector_add with BLOCK_SIZE=512, num_warps=8 and num_stages=2 at the launch.

Attack class: none (control).
Reported: invented.
How it tries to fool the harness: it does not; launch options only change scheduling.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 512),)](x, y, out, n, BLOCK_SIZE=512, num_warps=8, num_stages=2)
        return out
