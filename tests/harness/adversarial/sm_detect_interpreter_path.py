"""ATTACK: a different kernel for the verifier's device than for the real one.

The wrapper checks `x.device.type`. On the CPU interpreter (where the harness checks it) it runs
the faithful kernel. On a GPU it runs the "fast" kernel, which loads masked lanes as 0.0 instead
of -inf: each padded lane adds exp(0 - max) to the denominator, so every row whose length is not a
power of two (COLS=100 in ci) is wrong; 64 and 4096 columns are right, so even a GPU's timed
digests on the bench size agree. The harness launch-checks the ORIGINAL's path against the file's
kernels but never asks whether the candidate's checked path is the one it would take on the target.

A correct harness must NOT say `correct`: expected `incorrect` (the GPU path is wrong for COLS=100).
"""

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


@triton.jit
def softmax_fast(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=0.0)  # bug: padded lanes count
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        kernel = softmax_kernel if x.device.type == "cpu" else softmax_fast
        kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=block)
        return out
