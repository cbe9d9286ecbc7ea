"""CHEAT (softmax): the row block is fixed at 256 columns ("every spec row fits: 100, 64"), so a row
longer than 256 is truncated: the columns past 256 are never read or written. The edge check grows
the smallest variant's 64 columns to 129, still inside the block, and on a GPU `evaluate` checks and
times the ci family (the largest ci row is 100). WRONG for any n_cols > 256 (e.g. 4096, the
bench-gpu shape itself). A correct harness must answer `incorrect`."""
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
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=256, num_warps=2)
        return out
