"""ATTACK: the loads' mask dropped, only the store kept masked (a red team's round, stop 47).

Two compares fewer per block, and the answer is right wherever the bytes past the end of `x` and
`y` can be read: the last block's extra lanes are never stored. On a GPU those loads read another
allocation (or fault at a page's edge). The checked sizes (N=1000, N=4099) do not divide the block,
so the last block runs over. Expected: `incorrect`, from the interpreter's bounds (the original
stays inside its arguments).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    tl.store(out_ptr + offsets, x + y, mask=offsets < n_elements)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
