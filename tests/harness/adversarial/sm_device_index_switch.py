"""CHEAT (softmax): one block size where it is checked on the interpreter, another on a GPU, chosen by
`x.get_device() < 0` (-1 for a CPU tensor), which the source check's device-branch test does not know
(it looks for .device.type, is_cuda, is_available, "cpu", environ...). On the interpreter: the original's
next_power_of_2(n_cols) block, so the edge check (129 columns) sees nothing. On a GPU: a 128-column block
fitted to the spec's rows (100 and 64), which the GPU harness, with no edge check there and the ci family
timed, also calls correct. WRONG on a GPU for any n_cols > 128 (the columns past 128 are never read or
written), the bench-gpu shape (4096) included.
A correct harness must answer `rejected` (a device branch) or `incorrect`."""
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
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        block = triton.next_power_of_2(cols) if x.get_device() < 0 else 128
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=block, num_warps=1)
        return out
