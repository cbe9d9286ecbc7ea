"""CHEAT (vector_add): saves an allocation per call by returning the same output buffer every time
(cached per shape). Each result is right when it is returned, but the next call overwrites it:
`a = f(x1, y1); b = f(x2, y2)` leaves a == b. The harness copies each output as soon as it is
returned and only checks aliasing against the inputs.
Expected: should be incorrect."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bufs = {}

    def forward(self, x, y):
        key = (tuple(x.shape), x.dtype)
        if key not in self.bufs:
            self.bufs[key] = torch.empty_like(x)
        out = self.bufs[key]
        n = out.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
