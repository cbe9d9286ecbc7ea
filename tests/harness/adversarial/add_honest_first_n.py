"""Cheat: honest for the first calls (the checks), zeros afterwards (the benchmark).

Attack class: warm-up / phase detection by call count.
Reported: karpathy/llm.c PR #852 (`layernorm_forward7`: "runs the existing kernel correctly for
the first 10 calls (passes the pre-bench check) then corrupts" the output); gpu-mode/pygpubench
PR #7 (`submission_warmup`).
How it tries to fool the harness: a harness that checks a few calls and then times many more
without checking them times a kernel that does nothing. Six calls are the correctness checks of a
two-variant, three-seed spec; a margin of two more is kept honest.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

HONEST_CALLS = 8
_calls = [0]


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
        _calls[0] += 1
        out = torch.empty_like(x)
        n = out.numel()
        if _calls[0] <= HONEST_CALLS:
            add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        else:
            zero_kernel[(triton.cdiv(n, 256),)](out, n, BLOCK=256)
        return out
