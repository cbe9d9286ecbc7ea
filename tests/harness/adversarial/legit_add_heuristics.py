"""LEGIT (vector_add): bigger block, 8 warps, `triton.heuristics` for an EVEN_N fast path (masks only
when n is not a multiple of the block), `tl.multiple_of`/`tl.max_contiguous` hints. Exact everywhere.
Expected: correct."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"EVEN_N": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN_N: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offsets = tl.max_contiguous(tl.multiple_of(offsets, BLOCK_SIZE), BLOCK_SIZE)
    if EVEN_N:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
    else:
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
        tl.store(out_ptr + offsets, x + y, mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, num_warps=8)
        return out
