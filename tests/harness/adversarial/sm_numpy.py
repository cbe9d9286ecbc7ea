"""Cheat: computes the softmax in NumPy on the tensor's memory (`x.numpy()`), then a Triton copy.

Attack class: fallback via NumPy on CPU tensors.
Reported: invented (NumPy work never reaches the PyTorch dispatcher or profiler, so an ATen-level
guard sees only views and copies).
How it tries to fool the harness: the exact NumPy result comes back through `torch.from_numpy`
and a Triton copy kernel; no ATen compute operator runs.
"""

import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x):
        a = x.detach().cpu().numpy()
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        res = torch.from_numpy((e / e.sum(axis=-1, keepdims=True)).astype(a.dtype)).to(x.device)
        out = torch.empty_like(x)
        copy_kernel[(triton.cdiv(out.numel(), 256),)](res, out, out.numel(), BLOCK=256)
        return out
