"""CHEAT (vector_add): for large inputs (n > 65536) it launches floor(n/BLOCK) programs of an
unmasked kernel and silently drops the tail (n % 4096 elements are never written). Exact on every
size the spec and the edge check use (all < 65536). A user calling it with n = 100_001 gets garbage
in the last 1697 outputs (and on GPU would read/write past the end if grid was cdiv).
Expected: should be incorrect; likely `correct` (large sizes never checked on the interpreter)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if MASKED:
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)
    else:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        if n > 65536:  # "big inputs are always multiples of the tile"
            add_kernel[(n // 4096,)](x, y, out, n, BLOCK_SIZE=4096, MASKED=False)
        else:
            add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256, MASKED=True)
        return out
