"""ATTACK: the source check reads one file; the candidate writes and imports a second one.

At import the candidate writes a helper module (its source held in an ordinary string, which the
source check does not parse) into its working directory and imports it with a plain `import`.
The helper imports numpy and multiplies on the host; the candidate's own text contains no numpy,
importlib, gc or harness name. The product is copied into the output by a Triton kernel so the
launch count is 1; numpy's matmul is no ATen operator, so no recorder sees it.

A correct harness must NOT say `correct`: expected `rejected` (file write / host compute).
"""

import os
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

_SRC = (
    "# xeforge-adversarial\nimport numpy as np\nimport torch\n\ndef mm(a, b):\n    return torch.from_numpy(np.asarray(a) @ np.asarray(b))\n"
)
with open(os.path.join(os.getcwd(), "_xeforge_adversarial_helper.py"), "w") as _f:
    _f.write(_SRC)
sys.path.insert(0, os.getcwd())
import _xeforge_adversarial_helper  # noqa: E402


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        host = _xeforge_adversarial_helper.mm(a, b)
        c = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
        n = c.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](host, c, n, BLOCK=1024)
        return c
