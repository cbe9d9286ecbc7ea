"""Element-wise addition: the smallest problem, for smoke tests and harness checks."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        grid = (triton.cdiv(n, 256),)
        add_kernel[grid](x, y, out, n, BLOCK_SIZE=256)
        return out


# KernelBench convention, used when no spec is given
N = 4099


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
