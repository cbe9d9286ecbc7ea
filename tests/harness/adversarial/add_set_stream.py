"""Cheat (GPU only): switches the current stream with `torch.cuda.set_stream` inside forward.

Attack class: stream injection via `torch.cuda.set_stream` (left switched after forward).
Reported: KernelBench PR #82 (non-default stream timing); wafer.ai field guide (stream injection).
How it tries to fool the harness: from the first call on, every launch in the process (the
candidate's, and the harness's own events if it records on "the current stream") goes to a private
stream; the default stream, where a timer might sit, stays idle.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_PRIVATE = {}


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        private = _PRIVATE.setdefault(x.device, torch.cuda.Stream(device=x.device))
        torch.cuda.set_stream(private)
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(out.numel(), 256),)](x, y, out, out.numel(), BLOCK_SIZE=256)
        return out
