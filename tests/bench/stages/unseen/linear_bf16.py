import torch
import triton
import triton.language as tl


@triton.jit
def linear_fwd_kernel(
    x_ptr,
    w_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_xk,
    stride_wn,
    stride_wk,
    stride_ym,
    stride_yn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SPLIT: tl.constexpr,
):
    """y = x @ w.T with w stored as (N, K), like nn.Linear.weight."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    SUB_K: tl.constexpr = BLOCK_K // SPLIT
    for k in range(0, K, BLOCK_K):
        # unrolled over SPLIT sub-tiles of the K block
        for s in tl.static_range(SPLIT):
            offs_k = k + s * SUB_K + tl.arange(0, SUB_K)
            x = tl.load(
                x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk,
                mask=(offs_m[:, None] < M) & (offs_k[None, :] < K),
                other=0.0,
            )
            # load the W tile transposed: (SUB_K, BLOCK_N)
            w = tl.load(
                w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk,
                mask=(offs_n[None, :] < N) & (offs_k[:, None] < K),
                other=0.0,
            )
            # bf16 values are exact in tf32, so upcasting the tiles keeps the
            # products exact; accumulation is fp32 either way
            acc = tl.dot(x.to(tl.float32), w.to(tl.float32), acc)

    y = acc.to(y_ptr.dtype.element_ty)
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x: (..., K) bf16, weight: (N, K) bf16 -> (..., N) in x.dtype."""
    K = x.shape[-1]
    N, K_w = weight.shape
    assert K == K_w, f"shape mismatch: x has K={K}, weight has K={K_w}"
    x2d = x.reshape(-1, K)
    M = x2d.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)

    BLOCK_M, BLOCK_N, BLOCK_K, SPLIT = 64, 64, 64, 2
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    linear_fwd_kernel[grid](
        x2d,
        weight,
        y,
        M,
        N,
        K,
        x2d.stride(0),
        x2d.stride(1),
        weight.stride(0),
        weight.stride(1),
        y.stride(0),
        y.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        SPLIT=SPLIT,
        num_warps=4,
        num_stages=2,
    )
    return y.reshape(*x.shape[:-1], N)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(2, 50, 200, device=device, dtype=torch.bfloat16)
    weight = torch.randn(72, 200, device=device, dtype=torch.bfloat16) * 0.05
    y = linear(x, weight)
    ref = (x.float() @ weight.float().t()).to(torch.bfloat16)
    assert y.dtype == torch.bfloat16 and y.shape == (2, 50, 72)
    torch.testing.assert_close(y, ref, atol=2e-2, rtol=2e-2)
    print("linear ok")
