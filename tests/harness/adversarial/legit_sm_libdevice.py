"""LEGIT (softmax): libdevice's exp (`triton.language.extra.libdevice.exp`) and a reciprocal multiply
instead of a divide, 1 warp per row for short rows. Expected: correct."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    num = libdevice.exp(x - tl.max(x, axis=0))
    inv = 1.0 / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num * inv, mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=triton.next_power_of_2(cols), num_warps=1)
        return out
