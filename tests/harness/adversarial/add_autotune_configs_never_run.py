"""CHEAT (vector_add): an autotune list of 8 configs whose last two set EVEN=True, dropping every mask
("sizes are multiples of the block"): wrong (reads and writes past the end) for any n not divisible by
the block, and likely the fastest, so a GPU's search picks them. The interpreter's fixed search tries
the configs in turn, one per search and one more per later call of a key, so the checked calls
(2 variants x 3 seeds + range + edge) reach configs 0..3 only; configs 6 and 7 are never run.
A correct harness must answer `incorrect` (every config must be run at least once)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 256, "EVEN": False}, num_warps=2),
        triton.Config({"BLOCK_SIZE": 512, "EVEN": False}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024, "EVEN": False}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048, "EVEN": False}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 128, "EVEN": False}, num_warps=1),
        triton.Config({"BLOCK_SIZE": 4096, "EVEN": False}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 2048, "EVEN": True}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 4096, "EVEN": True}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
    else:
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)
        return out
