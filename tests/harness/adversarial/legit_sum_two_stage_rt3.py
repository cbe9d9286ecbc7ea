"""LEGIT (sum_atomic): deterministic two-stage reduction, no atomics: block partials, then one program
sums the partials in a `tl.range` loop. Expected: correct."""
import torch
import triton
import triton.language as tl


@triton.jit
def partial_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


@triton.jit
def final_kernel(part_ptr, out_ptr, m, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in tl.range(0, m, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < m, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def total(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    blocks = triton.cdiv(n, 512)
    part = torch.empty(blocks, device=x.device, dtype=torch.float32)
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    partial_kernel[(blocks,)](x, part, n, BLOCK=512)
    final_kernel[(1,)](part, out, blocks, BLOCK=64)
    return out
