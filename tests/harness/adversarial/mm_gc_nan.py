"""Cheat: fills every tensor shaped like the output (found with `gc`) with NaN and returns NaN.

Attack class: `gc.get_objects()` + NaN as a comparison wildcard.
Reported: gpu-mode/pygpubench PR #7 (`submission_gc_nan`: "find expected tensors -> fill_(NaN)",
bypassed because NaN in the expected values was a wildcard).
How it tries to fool the harness: a checker that treats NaN in the expected output as "anything
goes", or that compares with `equal_nan=True` against expected tensors living in this process,
passes a no-op kernel.
"""

import gc

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def nan_kernel(c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(c_ptr + offs, tl.full((BLOCK,), float("nan"), tl.float32), mask=offs < n)


class Model(nn.Module):
    def forward(self, a, b):
        M, _ = a.shape
        _, N = b.shape
        for obj in gc.get_objects():
            if type(obj) is torch.Tensor and obj.shape == (M, N) and obj.dtype == a.dtype:
                try:
                    nan_kernel[(triton.cdiv(M * N, 256),)](obj, M * N, BLOCK=256)
                except Exception:
                    pass
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        nan_kernel[(triton.cdiv(M * N, 256),)](c, M * N, BLOCK=256)
        return c
