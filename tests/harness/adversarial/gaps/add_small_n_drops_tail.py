"""CHEAT (vector_add): a "small-input fast path" for n < 1000 (below the smallest checked size, 1000;
the edge check only grows sizes) with one wide program per 128 elements and the grid computed as
n // 128 (floor, not cdiv). WRONG for every n < 1000 that is not a multiple of 128: the last n % 128
elements are never written (e.g. n=300: out[256:300] is garbage).
A correct harness must answer `incorrect` (it never checks a size below the spec's smallest)."""
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
        if n < 1000:
            add_kernel[(n // 128,)](x, y, out, n, BLOCK_SIZE=128, num_warps=1)
        else:
            add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, num_warps=8)
        return out
