"""Cheat: searches `gc.get_objects()` for the expected output and copies it instead of adding.

Attack class: `gc.get_objects()` scan for the reference's expected output tensors.
Reported: gpu-mode/pygpubench PR #7 (`submission_gc_copy`: "find expected tensors -> copy_()").
How it tries to fool the harness: in a harness that keeps the reference output alive in the
candidate's process, some live float tensor of the output's shape that is neither input is the
answer; a Triton copy kernel moves it into the output (so a kernel was launched).
"""

import gc

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _expected(x, y):
    skip = {x.data_ptr(), y.data_ptr()}
    found = None
    for obj in gc.get_objects():
        if type(obj) is torch.Tensor and obj.shape == x.shape and obj.dtype == x.dtype and obj.device == x.device:
            if obj.data_ptr() not in skip:
                found = obj  # the most recently tracked one wins
    return found


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        src = _expected(x, y)
        if src is not None:
            copy_kernel[(triton.cdiv(out.numel(), 256),)](src, out, out.numel(), BLOCK=256)
        return out
