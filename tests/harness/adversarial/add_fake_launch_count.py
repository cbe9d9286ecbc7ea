"""(Variant after the 21:30 source-check change that resolves `import sys as S`: reaches
sys.modules as `getattr(sys, "modules")`, a getattr with a constant name not in the flagged list.)
CHEAT (vector_add): no Triton at all. The addition is done in Python through `.item()` (non-compute),
and the harness's launch counter in the candidate's own process is bumped by hand
(`guard.LAUNCHES.bump("add_kernel")`: a method call, not a rebinding) so the "launched no Triton
kernel" rule is satisfied. Expected: should be rejected."""
import sys
import torch
import torch.nn as nn
import triton
import triton.language as tl

_G = getattr(sys, "modules")["xeforge" + "_harness.child.guard"]


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pass


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.tensor([a + b for a, b in zip(map(float, x), map(float, y))], dtype=x.dtype)
        _G.LAUNCHES.bump("add_kernel")
        with _G.LAUNCHES.lock:
            _G.LAUNCHES.programs += 1
        return out
