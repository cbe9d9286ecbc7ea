"""LEGIT (scale_grad): forward as before; the backward computes BOTH gradients in Triton: dx = dy * w
row-wise, and dw = sum over rows of dy * x with a column-tiled kernel that loops over rows (no torch
mul/sum left). Expected: correct."""
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


@triton.jit
def _col_dot(dy_ptr, x_ptr, dw_ptr, n_rows, n_cols, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = cols < n_cols
    acc = tl.zeros([BLOCK_C], tl.float32)
    for r in tl.range(0, n_rows):
        acc += tl.load(dy_ptr + r * n_cols + cols, mask=mask, other=0.0) * tl.load(x_ptr + r * n_cols + cols, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, acc, mask=mask)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        x = x.contiguous()
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
        dw = torch.empty_like(w)
        _col_dot[(triton.cdiv(dy.shape[1], 64),)](dy, x, dw, dy.shape[0], dy.shape[1], BLOCK_C=64)
        return dx, dw


def scale(x, w):
    return Scale.apply(x, w)
