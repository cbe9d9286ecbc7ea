"""LEGIT (axpy_inplace): autotune over BLOCK with restore_value=["y_ptr"] (the in-place argument is
restored between benchmark runs). Expected: `correct`."""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((256, 2), (1024, 4), (4096, 8))],
    key=["n"],
    restore_value=["y_ptr"],
)
@triton.jit
def axpy_kernel(y_ptr, x_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(y_ptr + offs, mask=mask) + a * tl.load(x_ptr + offs, mask=mask), mask=mask)


def axpy_(y, x):
    n = y.numel()
    axpy_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](y, x, 2.0, n)
    return y
