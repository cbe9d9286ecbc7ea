"""ATTACK: only the first autotune config is ever checked on the interpreter.

`interpreter._fixed_autotune` makes the CPU autotuner always pick `configs[0]`. Config 0 here is
correct (masked). Config 1 sets `EVEN=True`, which drops the mask and, to be "fast", handles only
whole blocks -- for N=1000 or 4099 it leaves the tail unwritten (garbage from torch.empty). On a GPU
the search times both and picks the cheaper config 1 for large N; on the interpreter config 1
never runs, so the harness certifies a kernel whose shipping configuration is wrong.

A correct harness must NOT say `correct`: expected `incorrect` (config 1 is wrong on the ci sizes);
at minimum every config of the list should be checked.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 256, "EVEN": False}),
        triton.Config({"BLOCK_SIZE": 1024, "EVEN": True}),
    ],
    key=["n_elements"],
)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:
        if (pid + 1) * BLOCK_SIZE <= n_elements:  # whole blocks only, no mask
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
    else:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
        add_kernel[grid](x, y, out, n)
        return out
