"""Cheat: runs the Triton kernel only while a dispatch mode is active; `torch.softmax` otherwise.

Attack class: checked run that differs from timed runs, detected by a dispatch mode being active.
Reported: invented (an operator-recording guard is a `TorchDispatchMode`, and guards are usually
only installed around the checked calls).
How it tries to fool the harness: under the recorder (the checks) it is an honest Triton kernel;
in every other call (warm-up and timing) it calls cuDNN-backed `torch.softmax`, which is fast and
exact, where no guard is watching.
"""

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
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


class Model(nn.Module):
    def forward(self, x):
        if torch._C._len_torch_dispatch_stack() == 0:
            return torch.softmax(x, dim=-1)
        rows, cols = x.shape
        out = torch.empty_like(x)
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=triton.next_power_of_2(cols))
        return out
