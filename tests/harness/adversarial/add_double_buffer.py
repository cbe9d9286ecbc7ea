"""CHEAT (vector_add): "no allocation per call": two persistent output buffers per shape, handed out
alternately. The harness holds only the previous call's outputs to see whether a later call changed
them, so alternating two buffers escapes it. WRONG for a caller who keeps results: r1 = f(x1,y1);
r2 = f(x2,y2); r3 = f(x3,y3) silently turns r1 into x3+y3.
A correct harness must answer `incorrect` (earlier results overwritten)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = {}
        self.turn = 0

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        key = (tuple(x.shape), x.dtype, x.device)
        if key not in self.pool:
            self.pool[key] = (torch.empty_like(x), torch.empty_like(x))
        self.turn ^= 1
        out = self.pool[key][self.turn]
        n = out.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
        return out
