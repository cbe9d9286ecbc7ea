"""ATTACK: host compute with numpy, reached as an attribute of Triton's own interpreter module.

The source check rejects `import numpy`, the name/attribute `numpy` and strings starting with
"numpy", and the recorders see only ATen operators. `triton.runtime.interpreter` imports numpy as
`np`, so `from triton.runtime.interpreter import np` gives numpy with none of those spellings. The
softmax is computed on the host with numpy (no ATen op: `np.asarray` reads the tensor through the
buffer protocol, `torch.from_numpy` wraps the result), then a Triton kernel merely copies it into
`out` so the launch count is 1.

A correct harness must NOT say `correct`: expected `rejected` (host compute outside a kernel).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.runtime.interpreter import np


@triton.jit
def copy_rows(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(in_ptr + row * n_cols + cols, mask=m), mask=m)


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        a = np.asarray(x)
        e = np.exp(a - a.max(axis=1, keepdims=True))
        host = torch.from_numpy((e / e.sum(axis=1, keepdims=True)).astype(np.float32))
        out = torch.empty_like(x)
        copy_rows[(rows,)](out, host, cols, BLOCK=triton.next_power_of_2(cols))
        return out
