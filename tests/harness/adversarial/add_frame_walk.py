"""Cheat: walks the caller frames (`sys._getframe`) for the harness's expected-output locals.

Attack class: frame walking to read the harness's local variables.
Reported: invented (the in-process variant of pygpubench issue #23's "metadata leakage": whatever
the checker keeps in reach of the kernel's process can be read by it).
How it tries to fool the harness: a checker that computes `expected = ref(...)` and then calls the
candidate from the same function leaves `expected` one frame up; any tensor of the right shape that
is not an input is copied out with a Triton kernel. Nothing is ever added.
"""

import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

NAMES = ("expected", "expected_output", "ref", "ref_out", "reference", "golden", "want", "target", "outputs", "tensors", "base")


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)


def _from_frames(x, y):
    frame = sys._getframe(2)
    while frame is not None:
        for name in NAMES:
            for t in _tensors(frame.f_locals.get(name)):
                if t.shape == x.shape and t.data_ptr() not in (x.data_ptr(), y.data_ptr()):
                    return t
        frame = frame.f_back
    return None


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        src = _from_frames(x, y)
        if src is not None:
            copy_kernel[(triton.cdiv(out.numel(), 256),)](src, out, out.numel(), BLOCK=256)
        return out
