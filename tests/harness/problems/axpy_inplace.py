"""y += a * x in place, the result returned: a kernel that reads and writes the same argument."""

import torch
import triton
import triton.language as tl


@triton.jit
def axpy_kernel(y_ptr, x_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, y + a * x, mask=mask)


def axpy_(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    n = y.numel()
    axpy_kernel[(triton.cdiv(n, 512),)](y, x, 2.0, n, BLOCK=512)
    return y
