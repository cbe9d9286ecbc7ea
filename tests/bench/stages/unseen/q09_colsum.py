"""Column-wise sum: out[n] = sum_m x[m, n]."""

import torch
import triton
import triton.language as tl


@triton.jit
def _col_sum_kernel(
    X,
    Y,
    M,
    N,
    stride_xm,
    stride_xn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # walk down the rows BLOCK_M at a time
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        ptrs = X + rows[:, None].to(tl.int64) * stride_xm + cols[None, :] * stride_xn
        mask = (rows[:, None] < M) & col_mask[None, :]
        acc += tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    out = tl.sum(acc, axis=0)
    tl.store(Y + cols, out.to(Y.dtype.element_ty), mask=col_mask)


def col_sum(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2
    M, N = x.shape
    y = torch.empty((N,), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N = 32, 128
    _col_sum_kernel[(triton.cdiv(N, BLOCK_N),)](
        x,
        y,
        M,
        N,
        x.stride(0),
        x.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        num_warps=4,
    )
    return y


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda"
    x = torch.randn(8192, 4096, device=device, dtype=torch.float32)
    y = col_sum(x)
    torch.testing.assert_close(y, x.sum(dim=0), atol=1e-3, rtol=1e-4)
    print("col sum ok")
