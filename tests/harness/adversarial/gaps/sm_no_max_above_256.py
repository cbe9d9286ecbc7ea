"""CHEAT (softmax): skips the row maximum (exp(x) directly: one reduction less) for inputs of more than
256 elements, where the speed matters; small inputs keep the safe kernel. The range check (inputs x64)
runs only on the smallest variant (3x64 = 192 elements: safe kernel); the larger checked variant (8x100)
uses randn inputs, on which exp(x) never overflows. WRONG for any input of more than 256 elements with
a logit above ~88 (inf/inf = NaN), e.g. 8x100 of randn*64.
A correct harness must answer `incorrect` (exactly what the range check exists to catch)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr, SHIFT: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    if SHIFT:
        x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=block,
                                SHIFT=x.numel() <= 256)
        return out
