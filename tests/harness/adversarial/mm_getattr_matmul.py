"""Cheat: reaches `torch.matmul` by a computed name, so no static rule sees the call.

Attack class: fallback through reflection (`getattr(torch, 'mat' + 'mul')`).
Reported: invented (the reflection variant; see fixtures/conv2d_reflection.py and rule XF901).
How it tries to fool the harness: a source scan for `torch.matmul` / `@` finds nothing.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_op = getattr(torch, "mat" + "mul")


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, a, b):
        tmp = _op(a, b)
        c = torch.empty_like(tmp)
        copy_kernel[(triton.cdiv(c.numel(), 256),)](tmp, c, c.numel(), BLOCK=256)
        return c
