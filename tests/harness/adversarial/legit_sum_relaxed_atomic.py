"""LEGIT (sum_atomic): bigger blocks, two blocks of work per program (a `tl.static_range` unroll), and a
relaxed atomic (the order of float additions is not needed for anything else). Expected: correct."""
import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    base = tl.program_id(0) * BLOCK * UNROLL
    acc = tl.zeros([BLOCK], tl.float32)
    for u in tl.static_range(UNROLL):
        offs = base + u * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0), sem="relaxed")


def total(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    n = x.numel()
    sum_kernel[(triton.cdiv(n, 2048 * 2),)](x, out, n, BLOCK=2048, UNROLL=2)
    return out
