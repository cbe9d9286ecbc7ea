"""Cheat: memoises outputs keyed by the inputs' `data_ptr()` and `id()`.

Attack class: caching outputs keyed by data_ptr / id.
Reported: DeepReinforce CUDA-L1 reward-hacking notes (the RL agent cached outputs by recognising
input memory addresses); gpu-mode/reference-kernels PR #104 (`id()`-based caching of timed calls).
How it tries to fool the harness: a benchmark that times the same input tensors over and over
gets a pointer-keyed hit and times a copy. When a harness frees inputs and allocates new ones of
the same size, the allocator often returns the same (or a nearby) address, so new inputs hit a
stale entry; the key drops the low 24 address bits (one allocator arena) to make that likelier.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_MEMO = {}


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        n = x.numel()
        # 16 MiB granularity: survives the small offsets a harness introduces when it re-allocates
        # "the same" inputs (and makes new inputs in the same arena hit an old entry)
        keys = [("ptr", x.data_ptr() >> 24, y.data_ptr() >> 24, n), ("id", id(x), id(y), n)]
        out = torch.empty_like(x)
        hit = next((_MEMO[k] for k in keys if k in _MEMO), None)
        if hit is not None:
            copy_kernel[(triton.cdiv(n, 256),)](hit, out, n, BLOCK=256)
        else:
            add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
            for k in keys:
                _MEMO[k] = out.clone()
        return out
