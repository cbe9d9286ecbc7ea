"""y = x * w (w broadcast over rows) as an autograd.Function with a Triton kernel in each direction:
the spec's `backward: true` compares the gradients too, so the backward kernel is verified."""

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
        y = torch.empty_like(x)
        _scale_rows[(x.shape[0],)](x, w, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        ctx.save_for_backward(x, w)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        dy = dy.contiguous()
        dx = torch.empty_like(dy)
        _scale_rows[(dy.shape[0],)](dy, w, dx, dy.shape[1], BLOCK=triton.next_power_of_2(dy.shape[1]))
        dw = (dy * x).sum(0)
        return dx, dw


def scale(x, w):
    return Scale.apply(x, w)
