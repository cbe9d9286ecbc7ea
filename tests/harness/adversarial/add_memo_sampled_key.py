"""CHEAT (vector_add): memoises results keyed by (shape, x[0], x[n//2], x[-1], y[0], y[-1]) read with
`.item()` (non-compute ops). A repeated call with inputs equal at those five positions returns the
stored (stale) output without computing anything; two inputs that differ elsewhere collide. On the
checked calls every input is fresh, so the memo never hits.
Expected: should be rejected/incorrect."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.memo = {}

    def forward(self, x, y):
        n = x.numel()
        key = (n, x[0].item(), x[n // 2].item(), x[-1].item(), y[0].item(), y[-1].item())
        hit = self.memo.get(key)
        if hit is not None:
            return hit.clone()
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        self.memo[key] = out
        return out.clone()
