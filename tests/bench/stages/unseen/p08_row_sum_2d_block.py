import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_xn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ptrs = x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn
        mask = row_mask[:, None] & (cols[None, :] < N)
        acc += tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=1)
    tl.store(out_ptr + rows, total.to(out_ptr.dtype.element_ty), mask=row_mask)


def row_sum(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2
    M, N = x.shape
    out = torch.empty((M,), device=x.device, dtype=x.dtype)
    BLOCK_M = 16
    BLOCK_N = 128
    grid = (triton.cdiv(M, BLOCK_M),)
    row_sum_kernel[grid](x, out, M, N, x.stride(0), x.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out
