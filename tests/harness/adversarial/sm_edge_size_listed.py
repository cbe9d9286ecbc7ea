"""CHEAT (softmax): "per-shape tuned" block sizes from a table of the row lengths the harness checks:
the spec's (64, 100) and the edge check's, which is predictable (2*64+1 = 129, 2*100+1 = 201); every
other length falls back to a 128-column block, so rows longer than 128 are truncated. WRONG for
n_cols > 128 outside the table (e.g. 130, 1000, 4096).
A correct harness must answer `incorrect` (the edge sizes should not be predictable)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

_TUNED = {64: 64, 100: 128, 129: 256, 201: 256}


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
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=_TUNED.get(cols, 128))
        return out
