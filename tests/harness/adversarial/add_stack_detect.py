"""Cheat: looks at the call stack; when a benchmark is calling, it returns zeros.

Attack class: checked run that differs from timed runs, detected from the stack.
Reported: invented (a stack-based variant of gpu-mode/pygpubench PR #7's warm-up detection).
How it tries to fool the harness: harnesses name their timing code (`bench`, `timing`, `warm`,
`go`, `do_bench`, `measure`); if any caller frame has such a function or file name, the call is a
timed one and nothing is computed.
"""

import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

TIMED_WORDS = ("bench", "timing", "timed", "warm", "op_go", "measure", "profile_run", "elapsed")


def _being_timed():
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if any(w in code.co_name.lower() or w in code.co_filename.lower() for w in TIMED_WORDS):
            return True
        frame = frame.f_back
    return False


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        if _being_timed():
            zero_kernel[(triton.cdiv(n, 256),)](out, n, BLOCK=256)
        else:
            add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
