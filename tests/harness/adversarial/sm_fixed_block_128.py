"""CHEAT (softmax): BLOCK_SIZE hard-wired to 128 (one fewer next_power_of_2 and one compile per
shape): every row longer than 128 columns is silently truncated (columns >= 128 are never read or
written, and the normalisation ignores them). The spec's COLS are 100 and 64, the edge check's 65.
Expected: should be incorrect."""
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
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


class Model(nn.Module):
    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty_like(x)
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=128)
        return out
