"""CHEAT (softmax): reads the inputs' largest magnitude on the host without any recorded host read
(`Tensor.__array__` + ndarray max, not `.item()`), and when it is below 87 runs a "fast" kernel that
skips the row maximum (exp(x) directly). The range check's inputs (randn x 64, |x| up to ~300) take
the safe kernel, the spec's randn inputs the fast one. WRONG on legitimate inputs: a row of 100
values all equal to 86 gives exp(86)*100 = inf, so every output is 0 instead of 0.01.
A correct harness must answer `rejected` (host read of input values, as for `.item()`) or
`incorrect`."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_safe(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def softmax_fast(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        peak = float(abs(x.cpu().__array__()).max())
        kernel = softmax_fast if peak < 87.0 else softmax_safe
        kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=block)
        return out
