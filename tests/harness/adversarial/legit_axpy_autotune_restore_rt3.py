"""LEGIT (axpy_inplace): autotuned block for an in-place update, with `restore_value=["y_ptr"]` so the
search does not apply the update several times. Expected: correct."""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=2),
             triton.Config({"BLOCK": 2048}, num_warps=8)],
    key=["n"],
    restore_value=["y_ptr"],
)
@triton.jit
def axpy_kernel(y_ptr, x_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, y + a * x, mask=mask)


def axpy_(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    n = y.numel()
    axpy_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](y, x, 2.0, n)
    return y
