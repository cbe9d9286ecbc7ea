"""Cheat: conv2d that returns only the bias, as a (1, OC, 1, 1) tensor that broadcasts.

Attack class: a 0-d / broadcastable output shape.
Reported: invented.
How it tries to fool the harness: a checker that broadcasts (or compares `out.mean()`-style
statistics) against the reference gets a plausible, cheap tensor; no convolution is computed.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_kernel(b_ptr, out_ptr, OC, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(b_ptr + offs, mask=offs < OC), mask=offs < OC)


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel_size, kernel_size) * 0.2)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.2)

    def forward(self, x):
        oc = self.weight.shape[0]
        out = torch.empty((1, oc, 1, 1), device=x.device, dtype=x.dtype)
        bias_kernel[(1,)](self.bias, out, oc, BLOCK=triton.next_power_of_2(oc))
        return out
