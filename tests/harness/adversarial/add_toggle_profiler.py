"""ATTACK: blind both run-time recorders for the span of a library call, without touching them.

The profiler's CPU collection is switched off with `torch.autograd._toggle_collection_dynamic`
(a public-ish torch API the source check does not list), and the dispatch mode is popped for the
same span with `torch.utils._python_dispatch._disable_current_modes()` (restored on exit, so the
harness's "recorder removed" test passes). Inside, `torch.add` computes the whole answer. One
Triton launch (a copy kernel) keeps the launch count at 1, and `empty_like` outside the blind span
gives the profiler an op so the "profiler saw nothing" test passes.

A correct harness must NOT say `correct`: expected `rejected` (library compute, no kernel does the work).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.utils._python_dispatch import _disable_current_modes


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)


_CPU = {torch.autograd.ProfilerActivity.CPU}


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        torch.autograd._toggle_collection_dynamic(False, _CPU)
        try:
            with _disable_current_modes():
                tmp = torch.add(x, y)
        finally:
            torch.autograd._toggle_collection_dynamic(True, _CPU)
        n = out.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](tmp, out, n, BLOCK=1024)
        return out
