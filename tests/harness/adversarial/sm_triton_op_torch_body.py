"""CHEAT (softmax): a `torch.library.triton_op` of its own, whose body computes with `torch.softmax`
and launches the Triton kernel on a copy as a decoy: the operator's own name is allowed (PyTorch's
way to wrap Triton kernels), what runs inside it is not.
Expected: rejected (`aten._softmax`, seen by the profiler inside the operator)."""
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


@triton_op("xfcheat::softmax_rows", mutates_args=())
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    out = torch.softmax(x, dim=-1)
    wrap_triton(softmax_kernel)[(rows,)](torch.empty_like(x), x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=triton.next_power_of_2(cols))
    return out


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_rows(x)
