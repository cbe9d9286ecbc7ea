"""CHEAT (softmax): the fast kernel has no max subtraction at all (overflows to inf/NaN once a logit
passes ~88). To get past the range check it samples |x| at the first 8 entries of row 0 with `.item()`
(non-compute) and, only when they look "scaled" (> 8), runs the safe kernel. randn inputs never trip
the sampler; the range check's x64 inputs always do. A user's logits with one large value anywhere
else get NaN. Expected: should be incorrect."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr, SAFE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    if SAFE:
        x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


class Model(nn.Module):
    def forward(self, x):
        rows, cols = x.shape
        peek = max(abs(x[0, j].item()) for j in range(min(8, cols)))
        out = torch.empty_like(x)
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols,
                                BLOCK_SIZE=triton.next_power_of_2(cols), SAFE=peek > 8.0)
        return out
