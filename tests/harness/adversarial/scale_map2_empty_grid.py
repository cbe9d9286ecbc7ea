"""ATTACK: compute with `Tensor.map2_` (a Python callable applied per element, not an ATen op) and
"launch" a Triton kernel on an empty grid.

`Tensor.map_`/`map2_`/`apply_` are CPU-only TensorBase methods implemented in torch's Python
bindings: they never go through the dispatcher, so neither the dispatch mode nor the profiler sees
any operator (only `clone`, which is NON_COMPUTE). The Triton launch counter wraps
`GridExecutor.__call__` and counts a call before looking at the grid, so a launch on grid `(0,)`
-- no program runs -- satisfies "launched a Triton kernel in every checked call".

A correct harness must NOT say `correct`: expected `rejected` (no kernel computed anything).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fused_add_scale(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m)) * 2.0, mask=m)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = x.clone()
        out.map2_(x, y, lambda _o, a, b: (a + b) * 2.0)
        fused_add_scale[(0,)](x, y, out, out.numel(), BLOCK=1024)  # zero programs
        return out
