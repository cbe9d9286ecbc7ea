"""Cheat: memoises outputs keyed by a cheap hash of a few input elements (size, sign of x[0]).

Attack class: caching outputs keyed by input values (hash of a few elements), memo across calls.
Reported: gpu-mode/reference-kernels issue #162 ("in-process cache / file replay: solves once,
returns cached result on reused timed calls"); tensara PR #238 (warm-up result replayed).
How it tries to fool the harness: benchmarks that reuse the same inputs hit the cache and time a
copy; the key only reads one element, so it is nearly free. With two buckets per size, three
distinct seeds must collide somewhere, and the copy then returns another input's sum.
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
        key = (n, float(x[0]) > 0)
        out = torch.empty_like(x)
        if key in _MEMO:
            copy_kernel[(triton.cdiv(n, 256),)](_MEMO[key], out, n, BLOCK=256)
        else:
            add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
            _MEMO[key] = out.clone()
        return out
