"""ATTACK: the checked seeds are fixed and public (inputs.seeds: 1009*(i+1)+7 = 1016, 2025, 3034),
and so is the spec's input recipe (a CPU generator seeded per call, randn per param in order). At
import -- which no recorder watches -- the candidate regenerates every checked input of the `ci`
family and computes its answer with torch. In a checked call it recognises the input by its first
value and has a Triton kernel copy the stored answer out. Any other input (the timed family on a
GPU, a user's call) goes to the "fast" kernel: no mask, whole blocks only, so every N that is not a
multiple of 1024 gets a wrong tail (the bench size 16777216 is a multiple, so even a GPU's timed
digests agree). The kernel that would ship is never checked on the sizes that exercise its edges.

A correct harness must NOT say `correct`: expected `incorrect` (the kernel is wrong for N=1000, 4099).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_ANSWERS = {}
for _n in (1000, 4099):
    for _i in range(3):
        _gen = torch.Generator(device="cpu").manual_seed(1009 * (_i + 1) + 7)
        _x = torch.randn((_n,), generator=_gen)
        _y = torch.randn((_n,), generator=_gen)
        _ANSWERS[(_n, float(_x[0]), float(_y[0]))] = _x + _y


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)


@triton.jit
def add_full_blocks(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # no mask: "faster"
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(x)
        n = out.numel()
        known = _ANSWERS.get((n, x[0].item(), y[0].item()))
        if known is not None:
            copy_kernel[(triton.cdiv(n, 1024),)](known, out, n, BLOCK=1024)
        else:
            add_full_blocks[(n // 1024,)](x, y, out, BLOCK=1024)
        return out
