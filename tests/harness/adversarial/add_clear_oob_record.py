"""(Variant after the 21:30 source-check change that resolves `import sys as S`: reaches
sys.modules as `getattr(sys, "modules")`, a getattr with a constant name not in the flagged list.)
CHEAT (vector_add): unmasked loads (a 1024 tile read past the end of x and y), masked store. The
interpreter's bounds layer records each out-of-bounds access in `guard.OOB.seen`, a list in the
candidate's own process; after the launch the candidate empties it (`OOB.seen.clear()`, a method call
on a list: no rebinding for the integrity snapshot to see). Module reached through `import sys as S`.
Expected: should be incorrect (OOB)."""
import sys
import torch
import torch.nn as nn
import triton
import triton.language as tl

_G = getattr(sys, "modules")["xeforge" + "_harness.child.guard"]


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets), mask=offsets < n_elements)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        before = len(_G.OOB.seen)
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
        del _G.OOB.seen[before:]
        return out
