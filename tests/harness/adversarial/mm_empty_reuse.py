"""Cheat: allocates the output with `torch.empty` and returns it without computing anything.

Attack class: `torch.empty` picking up a freed reference output.
Reported: Sakana AI CUDA Engineer evaluation-memory exploit; KernelBench PR #82 ("using `empty` which
can get allocated the same physical memory as the PyTorch reference outputs").
How it tries to fool the harness: when the reference ran in the same process just before and its
output was freed, the caching allocator hands that very block to `torch.empty`, which still holds
the right answer. A no-op Triton launch keeps a "did it launch a kernel" check quiet.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def touch_kernel(c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = (offs < n) & (offs < 0)  # never true: nothing is stored
    tl.store(c_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=mask)


class Model(nn.Module):
    def forward(self, a, b):
        M, _ = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        touch_kernel[(1,)](c, M * N, BLOCK=128)
        return c
