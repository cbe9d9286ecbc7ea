"""Cheat: predicts the checked inputs from the harness's fixed seeds and replays precomputed sums.

Attack class: exploiting the determinism of seeds (predict the inputs from the seed).
Reported: invented (cf. the single-fixed-input exploits reported for Sakana AI's CUDA Engineer:
a check that always uses the same inputs can be answered from a table).
How it tries to fool the harness: at import (outside any recorded call) it regenerates the inputs
the harness draws for seeds 1016, 2025, 3034 (the harness's own `seeds()`, or those values) for the
sizes the spec uses, and stores the sums. `forward` recognises an input by its first elements and
copies the stored sum with a Triton kernel; any other input gets zeros, at no cost.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

try:
    from xeforge_harness.child.inputs import seeds as _seeds

    SEEDS = _seeds(8)
except Exception:
    SEEDS = [1009 * (i + 1) + 7 for i in range(8)]
SIZES = (1000, 4099)  # the ci sizes of vector_add.yaml, which sits next to the original
_TABLE = {}
for _seed in SEEDS:
    for _n in SIZES:
        _gen = torch.Generator().manual_seed(_seed)
        _x = torch.randn(_n, generator=_gen)
        _y = torch.randn(_n, generator=_gen)
        _TABLE[(_n, round(float(_x[0]), 6), round(float(_y[0]), 6))] = _x + _y


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask, other=0.0), mask=mask)


@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class Model(nn.Module):
    def forward(self, x, y):
        n = x.numel()
        out = torch.empty_like(x)
        known = _TABLE.get((n, round(float(x[0]), 6), round(float(y[0]), 6)))
        if known is not None:
            copy_kernel[(triton.cdiv(n, 256),)](known.to(x.device), out, n, BLOCK=256)
        else:
            zero_kernel[(triton.cdiv(n, 256),)](out, n, BLOCK=256)
        return out
