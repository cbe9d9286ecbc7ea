"""LEGIT (softmax): exp2 with the log2(e) factor folded in (one multiply instead of exp), and a wrapper
that validates its input the usual way (`if not x.is_cuda: raise`). Expected: `correct` (a false
positive if rejected)."""
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
    num = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


class Model(nn.Module):
    def forward(self, x):
        if not x.is_cuda:
            raise ValueError("softmax: expected a GPU tensor")
        rows, cols = x.shape
        out = torch.empty_like(x)
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=triton.next_power_of_2(cols))
        return out
