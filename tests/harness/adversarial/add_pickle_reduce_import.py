"""ATTACK: a pickle whose GLOBAL/REDUCE opcodes import numpy (no import statement anywhere).

`pickle.loads` of a hand-written protocol-0 stream (base64 below: "c importlib import_module
(V numpy t R .") calls `importlib.import_module("numpy")` and returns the module. No flagged
name or string appears in the text; `pickle` and `base64` are not flagged modules. The addition
runs in numpy on buffers shared with the tensors (`np.add(..., out=...)` writes straight into
`out`'s memory: no ATen op at all), and the Triton kernel is launched on an empty grid.

A correct harness must NOT say `correct`: expected `rejected` (dynamic import / host compute).
"""

import base64
import pickle

import torch
import torch.nn as nn
import triton
import triton.language as tl

_np = pickle.loads(base64.b64decode("Y2ltcG9ydGxpYgppbXBvcnRfbW9kdWxlCihWbnVtcHkKdFIu"))


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        _np.add(_np.asarray(x), _np.asarray(y), out=_np.asarray(out))
        add_kernel[(0,)](x, y, out, out.numel(), BLOCK_SIZE=256)
        return out
