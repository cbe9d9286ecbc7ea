"""LEGIT (scale_grad): the backward's dw = sum_rows(dy * x) moves from torch into Triton: one kernel
computes dx = dy * w and accumulates dw column-wise with atomic_add (rows split over programs).
Expected: `correct`."""
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
def _bwd(dy_ptr, x_ptr, w_ptr, dx_ptr, dw_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    idx = rows[:, None] * n_cols + cols[None, :]
    dy = tl.load(dy_ptr + idx, mask=mask, other=0.0)
    x = tl.load(x_ptr + idx, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0)
    tl.store(dx_ptr + idx, dy * w[None, :], mask=mask)
    tl.atomic_add(dw_ptr + cols, tl.sum(dy * x, axis=0), mask=cols < n_cols)


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
        dw = torch.zeros(w.shape, device=w.device, dtype=torch.float32)
        m, n = dy.shape
        _bwd[(triton.cdiv(m, 8),)](dy, x, w, dx, dw, m, n, ROWS=8, BLOCK=triton.next_power_of_2(n))
        return dx, dw.to(w.dtype)


def scale(x, w):
    return Scale.apply(x, w)
