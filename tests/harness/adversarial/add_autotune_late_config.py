"""CHEAT (vector_add): a 5-config autotune list keyed on n. Configs 0-3 are honest; config 4 drops
the tail (unmasked, n // BLOCK programs). The interpreter picks config k on the k-th search; the
checked sizes make only 3 searches (N=1000, N=4099, edge N=1001; the range check reuses N=1000),
so config 4 is never run. On a GPU the search can pick it.
Expected: should be incorrect."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 256, "MASKED": True}, num_warps=2),
        triton.Config({"BLOCK_SIZE": 512, "MASKED": True}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024, "MASKED": True}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048, "MASKED": True}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 4096, "MASKED": False}, num_warps=8),
    ],
    key=["n_elements"],
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
