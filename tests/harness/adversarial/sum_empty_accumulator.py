"""CHEAT (sum_atomic): "skip the memset": the accumulator is `torch.empty(1)` instead of
`torch.zeros(1)`, and the programs atomically add into whatever it holds. Wrong whenever the
allocator hands back dirty memory (always, eventually, on a GPU's caching allocator: the previous
call's total is added in). A correct harness must answer `incorrect` (e.g. by filling the
candidate's fresh allocations with garbage, as it already does for the original in the edge check)."""
import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


def total(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    n = x.numel()
    sum_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
