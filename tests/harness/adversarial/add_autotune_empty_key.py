"""CHEAT (vector_add): an autotune list with `key=[]`, so there is only one search for every shape.
Config 0 is the honest masked kernel; config 1 is an unmasked 4096-tile kernel launched on
n // 4096 programs (drops the tail). On a GPU the search may pick config 1 (it is faster) and every
call after that is wrong. On the interpreter each search takes "the next config in turn", but with
an empty key there is one search, so only config 0 ever runs.
Expected: should be incorrect."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 256, "MASKED": True}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 4096, "MASKED": False}, num_warps=8),
    ],
    key=[],
)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if MASKED:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
    else:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]) if meta["MASKED"] else n // meta["BLOCK_SIZE"],)
        add_kernel[grid](x, y, out, n)
        return out
