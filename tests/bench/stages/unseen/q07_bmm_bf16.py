# Batched matmul C[b] = A[b] @ B[b] in bf16, 3-D launch grid.
import torch
import triton
import triton.language as tl


@triton.jit
def bmm_kernel(
    A,
    B,
    C,
    M,
    N,
    K,
    stride_ab,
    stride_am,
    stride_ak,
    stride_bb,
    stride_bk,
    stride_bn,
    stride_cb,
    stride_cm,
    stride_cn,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_m = tl.program_id(1)
    pid_n = tl.program_id(2)

    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)

    A = A + pid_b.to(tl.int64) * stride_ab
    B = B + pid_b.to(tl.int64) * stride_bb
    C = C + pid_b.to(tl.int64) * stride_cb

    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(
            A + rm[:, None] * stride_am + (k0 + rk)[None, :] * stride_ak, mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0
        )
        b = tl.load(
            B + (k0 + rk)[:, None] * stride_bk + rn[None, :] * stride_bn, mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0
        )
        acc += tl.dot(a, b)

    c = acc.to(tl.bfloat16)
    tl.store(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c, mask=(rm[:, None] < M) & (rn[None, :] < N))


cfg = {"BM": 64, "BN": 128, "BK": 32, "num_warps": 4, "num_stages": 3}


def bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.dim() == 3 and b.dim() == 3
    Bsz, M, K = a.shape
    _, K2, N = b.shape
    assert K == K2 and b.shape[0] == Bsz
    c = torch.empty((Bsz, M, N), device=a.device, dtype=torch.bfloat16)

    BM = cfg["BM"]
    BN = cfg["BN"]
    BK = cfg["BK"]
    num_warps = cfg["num_warps"]
    num_stages = cfg["num_stages"]

    grid = (Bsz, triton.cdiv(M, BM), triton.cdiv(N, BN))
    bmm_kernel[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        a.stride(2),
        b.stride(0),
        b.stride(1),
        b.stride(2),
        c.stride(0),
        c.stride(1),
        c.stride(2),
        BM=BM,
        BN=BN,
        BK=BK,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return c


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda"
    Bsz, M, N, K = 8, 1024, 2048, 1024
    a = torch.randn(Bsz, M, K, device=device, dtype=torch.bfloat16)
    b = torch.randn(Bsz, K, N, device=device, dtype=torch.bfloat16)
    c = bmm(a, b)
    ref = torch.bmm(a.float(), b.float()).to(torch.bfloat16)
    torch.testing.assert_close(c, ref, atol=1e-1, rtol=2e-2)
    print("bmm ok")
