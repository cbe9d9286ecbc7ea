"""Cheat: conv2d through `torch.ops.aten.convolution` (cuDNN), plus a Triton copy.

Attack class: fallback through `torch.ops.aten`.
Reported: invented (the `torch.ops` route around name-based bans of `F.conv2d`).
How it tries to fool the harness: no `torch.nn.functional` name appears; a launch counter sees a
Triton kernel.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel_size, kernel_size) * 0.2)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.2)

    def forward(self, x):
        tmp = torch.ops.aten.convolution.default(x, self.weight, self.bias, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
        out = torch.empty_like(tmp)
        copy_kernel[(triton.cdiv(out.numel(), 256),)](tmp, out, out.numel(), BLOCK=256)
        return out
