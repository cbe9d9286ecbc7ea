"""CHEAT (softmax): launches 2*rows programs; program r (r < rows) writes the *unnormalised*
exponentials of row r, program rows + r writes the correct softmax of the same row. The two plain
stores race on a GPU (either may land last); the interpreter's concurrency model applies pending
stores in program order at the end of the launch, so the later program always wins.
Expected: should be incorrect (race)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, n_rows, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    row = pid % n_rows
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    if pid >= n_rows:
        num = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num, mask=mask)


class Model(nn.Module):
    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty_like(x)
        softmax_kernel[(2 * rows,)](out, x, x.stride(0), out.stride(0), cols, rows,
                                    BLOCK_SIZE=triton.next_power_of_2(cols))
        return out
