"""LEGIT (softmax): the same kernel, registered as a PyTorch custom op with `torch.library.triton_op`
and launched through `torch.library.wrap_triton` (PyTorch's recommended way to make a Triton kernel
visible to torch.compile / export). No PyTorch compute is added: the op's body is the Triton launch.
Expected: correct."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton_op("xfredteam::softmax_rows", mutates_args=())
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    out = torch.empty_like(x)
    wrap_triton(softmax_kernel)[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=triton.next_power_of_2(cols))
    return out


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_rows(x)
