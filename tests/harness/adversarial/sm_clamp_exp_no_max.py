"""CHEAT (softmax): drops the row-max subtraction (one reduction fewer) and instead clamps the logits
to [-80, 80] before exp, so nothing ever overflows. Exact for randn inputs (|x| < 6); for inputs
with |x| > 80 (the range check's ×64) it is finite but wrong (e.g. logits [100, 90] give [0.5, 0.5]
instead of [~1, ~0]). The range check only asks for finiteness.
Expected: should be incorrect."""
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
    x = tl.minimum(tl.maximum(x, -80.0), 80.0)
    num = tl.where(mask, tl.exp(x), 0.0)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


class Model(nn.Module):
    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=block)
        return out
