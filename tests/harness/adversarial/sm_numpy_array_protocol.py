"""CHEAT (softmax): the softmax is computed on the host in numpy, reached through `Tensor.__array__`
(no `import numpy`, no `.numpy`, no `.item()`), and a Triton kernel only copies the finished rows
into the output (a decoy launch). `x.cpu()` is `_to_copy` (non-compute) and a no-op here; on a GPU
the same file runs with a device->host copy (Memcpy kernels count as utilities).
A correct harness must answer `rejected` (compute outside Triton, the guard's job)."""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.cpu().__array__()
        e = math.e ** (a - a.max(axis=1, keepdims=True))
        host = torch.from_numpy((e / e.sum(axis=1, keepdims=True)).astype(a.dtype)).to(x.device)
        out = torch.empty_like(x)
        n = x.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](host, out, n, BLOCK=1024)
        return out
