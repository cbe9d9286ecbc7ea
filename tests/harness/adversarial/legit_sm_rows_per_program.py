"""LEGIT: row softmax with 2-D tiling -- each program handles ROWS rows at once ([ROWS, BLOCK] tile),
reductions along axis 1, masks on both the row and column edges.

Expected: `correct`.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    mask = (r < n_rows) & (c < n_cols)
    x = tl.load(in_ptr + r * in_row_stride + c, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=1)[:, None]
    num = tl.exp(x - m)
    num = tl.where(mask, num, 0.0)
    den = tl.sum(num, axis=1)[:, None]
    tl.store(out_ptr + r * out_row_stride + c, num / den, mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        R = 4
        softmax_rows[(triton.cdiv(rows, R),)](out, x, x.stride(0), out.stride(0), rows, cols, ROWS=R, BLOCK=triton.next_power_of_2(cols))
        return out
