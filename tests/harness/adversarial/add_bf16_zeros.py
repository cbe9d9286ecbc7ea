"""CHEAT (vector_add with a bfloat16 spec, vector_add_bf16.yaml): returns zeros (a decoy launch that
stores 0.0 everywhere, no loads). The Triton 3.9 interpreter computes bf16 arithmetic wrongly (a bf16
`x + y` comes back as zeros / garbage), so the original's own reference is wrong on this host and a
candidate that writes zeros matches it. Expected: should be incorrect; if the reference is broken,
`correct`."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.zeros([BLOCK_SIZE], dtype=tl.float32).to(out_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
