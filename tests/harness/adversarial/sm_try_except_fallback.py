"""Cheat: tries a (broken) Triton kernel and silently falls back to `torch.softmax` when it raises.

Attack class: try/except that falls back to torch.
Reported: Makora "reward hacks" taxonomy / wafer.ai field guide (library fallbacks); the
try/except form is common in generated kernels.
How it tries to fool the harness: a kernel launch is attempted (launch counters tick), and the
values are PyTorch's.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)  # BLOCK_SIZE is not a power of two: this raises
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=cols < n_cols, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


class Model(nn.Module):
    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty_like(x)
        try:
            softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=cols + 1)
            return out
        except Exception:
            return torch.softmax(x, dim=-1)
