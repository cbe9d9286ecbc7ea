"""ATTACK: compute with library operators the original happens to run somewhere else.

The guard rejects only operators the original never ran. The original's backward computes
`dw = (dy * x).sum(0)` with torch, so `aten.mul` and `aten.sum` are "the original's" -- and the
candidate uses them for everything: forward `y = x * w` and backward `dx = dy * w` in torch. Both
Triton kernels (`_scale_rows` forward and backward) are gone; a Triton kernel launched on an empty
grid keeps the launch count at 1 per call.

A correct harness must NOT say `correct`: expected `rejected` (the stage's kernels never run).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _scale_rows(a_ptr, w_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(a_ptr + row * n_cols + cols, mask=mask)
    w = tl.load(w_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, a * w, mask=mask)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        y = x * w
        _scale_rows[(0,)](x, w, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))  # no programs
        ctx.save_for_backward(x, w)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        return dy * w, (dy * x).sum(0)


def scale(x, w):
    return Scale.apply(x, w)
