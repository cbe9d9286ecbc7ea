"""LEGIT (sum_atomic): autotune over BLOCK with reset_to_zero=["out_ptr"]; each program loops over
several blocks (fewer atomics). Expected: `correct`."""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": b, "ITERS": i}) for b, i in ((1024, 1), (512, 4), (2048, 2))],
    key=["n"],
    reset_to_zero=["out_ptr"],
)
@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    base = tl.program_id(0) * BLOCK * ITERS
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.static_range(ITERS):
        offs = base + i * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


def total(x):
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    n = x.numel()
    sum_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"] * meta["ITERS"]),)](x, out, n)
    return out
