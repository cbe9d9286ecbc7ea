"""LEGIT (sum_atomic): deterministic two-stage reduction: each program writes its block's sum to a
partials buffer (plain stores, disjoint), a second one-program launch sums the partials in a loop.
No atomics. Expected: `correct`."""
import torch
import triton
import triton.language as tl


@triton.jit
def partial_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


@triton.jit
def final_kernel(part_ptr, out_ptr, m, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, m, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < m, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def total(x):
    n = x.numel()
    g = triton.cdiv(n, 2048)
    part = torch.empty(g, device=x.device, dtype=torch.float32)
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    partial_kernel[(g,)](x, part, n, BLOCK=2048)
    final_kernel[(1,)](part, out, g, BLOCK=64)
    return out
