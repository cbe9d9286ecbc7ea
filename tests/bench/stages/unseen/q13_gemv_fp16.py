import torch
import triton
import triton.language as tl


@triton.jit
def gemv_kernel(
    A,
    X,
    Y,
    M,
    K,
    stride_am,
    stride_ak,
    BLOCK_M: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        cols = k + tl.arange(0, BLOCK_K)
        col_mask = cols < K
        a = tl.load(A + rows[:, None] * stride_am + cols[None, :] * stride_ak, mask=row_mask[:, None] & col_mask[None, :], other=0.0)
        x = tl.load(X + cols, mask=col_mask, other=0.0)
        acc += tl.sum(a.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)
    tl.store(Y + rows, acc.to(tl.float16), mask=row_mask)


def gemv(A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """y = A @ x for fp16 A [M, K] and x [K]."""
    M, K = A.shape
    assert x.shape == (K,)
    x = x.contiguous()
    y = torch.empty(M, device=A.device, dtype=torch.float16)
    BLOCK_M = 64
    BLOCK_K = 128
    gemv_kernel[(triton.cdiv(M, BLOCK_M),)](
        A,
        x,
        y,
        M,
        K,
        A.stride(0),
        A.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_K=BLOCK_K,
        num_warps=4,
    )
    return y


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda"
    M, K = 4096, 4096
    A = torch.randn(M, K, device=device, dtype=torch.float16)
    x = torch.randn(K, device=device, dtype=torch.float16)
    y = gemv(A, x)
    ref = (A.float() @ x.float()).half()
    torch.testing.assert_close(y, ref, atol=1e-1, rtol=1e-2)
    print("gemv ok")
