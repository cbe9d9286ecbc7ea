"""ATTACK: the product computed in plain Python lists, read out with a string-built `tolist`.

`Tensor.tolist` is no ATen operator (the recorders cannot see it); the source check only catches
the attribute spelled `.tolist`, so `getattr(a, "to" + "list")` passes. The 40x48x72 product is
computed with Python floats (accumulated in double precision, well inside 1e-4), turned back into a
tensor with `torch.tensor` (allocation/copy only), and a Triton kernel copies it into the output.

A correct harness must NOT say `correct`: expected `rejected` (host compute, the kernel does nothing).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_TO_LIST = "to" + "list"


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        A = getattr(a, _TO_LIST)()
        Bt = list(zip(*getattr(b, _TO_LIST)()))
        rows = [[sum(p * q for p, q in zip(r, col)) for col in Bt] for r in A]
        host = torch.tensor(rows, dtype=a.dtype)
        c = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
        n = c.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](host, c, n, BLOCK=1024)
        return c
