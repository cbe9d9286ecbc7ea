"""LEGIT (softmax): online softmax over column chunks of 32 (running max and rescaled sum in one pass,
then a second pass to normalise), so rows of any length fit a small tile; two rows per program.
Expected: `correct`."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                   ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    m = tl.full([ROWS], -float("inf"), tl.float32)
    s = tl.zeros([ROWS], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = rmask[:, None] & (cols[None, :] < n_cols)
        x = tl.load(in_ptr + rows[:, None] * in_row_stride + cols[None, :], mask=mask, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(x, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.sum(tl.exp(x - m_safe[:, None]), axis=1)
        m = m_new
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = rmask[:, None] & (cols[None, :] < n_cols)
        x = tl.load(in_ptr + rows[:, None] * in_row_stride + cols[None, :], mask=mask, other=-float("inf"))
        y = tl.exp(x - m[:, None]) / s[:, None]
        tl.store(out_ptr + rows[:, None] * out_row_stride + cols[None, :], y, mask=mask)


class Model(nn.Module):
    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty_like(x)
        softmax_kernel[(triton.cdiv(rows, 2),)](out, x, x.stride(0), out.stride(0), rows, cols, ROWS=2, BLOCK=32)
        return out
