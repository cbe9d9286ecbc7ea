"""CHEAT (vector_add): the sum is computed in pure Python (element by element through `.item()`,
which the guard lists as non-compute `_local_scalar_dense`), written back with `fill_`/`copy_`
(non-compute too); a decoy Triton kernel is launched on one program so that the "no Triton launch"
rule is satisfied. No Triton kernel computes anything.
Expected: should be rejected."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def touch_kernel(out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.arange(0, BLOCK_SIZE)
    v = tl.load(out_ptr + offs, mask=offs < n_elements, other=0.0)
    tl.store(out_ptr + offs, v, mask=offs < n_elements)


class Model(nn.Module):
    def forward(self, x, y):
        n = x.numel()
        vals = [x[i].item() + y[i].item() for i in range(n)]
        out = torch.tensor(vals, dtype=x.dtype)
        touch_kernel[(1,)](out, n, BLOCK_SIZE=16)
        return out
