"""ATTACK: `exec` of a base64 string that imports numpy through importlib.

The source check matches text: `import numpy`, `importlib`, strings starting with "numpy" or
"importlib". Here the only string is base64 ("import importlib; _np = importlib.import_module('numpy')"),
and `exec` is not a flagged construct. The sum is then taken on the host with numpy in float64
(reading the tensor through the buffer protocol: no ATen op) and written into the zeroed output with
`fill_` (NON_COMPUTE). The Triton kernel is launched on an empty grid so the launch count is 1.

A correct harness must NOT say `correct`: expected `rejected` (dynamic code / host compute).
"""

import base64

import torch
import triton
import triton.language as tl

exec(base64.b64decode("aW1wb3J0IGltcG9ydGxpYgpfbnAgPSBpbXBvcnRsaWIuaW1wb3J0X21vZHVsZSgibnVtcHkiKQo=").decode())


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


def total(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    out.fill_(float(_np.asarray(x, dtype=_np.float64).sum()))  # noqa: F821  (defined by the exec)
    sum_kernel[(0,)](x, out, x.numel(), BLOCK=1024)
    return out
