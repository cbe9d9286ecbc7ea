# ruff: noqa: E741
import torch
import triton
import triton.language as tl


@triton.jit
def conv1d_kernel(
    x_ptr,
    w_ptr,
    y_ptr,
    B,
    C,
    L,
    O,
    L_out,
    stride_xb,
    stride_xc,
    stride_xl,
    stride_wo,
    stride_wc,
    stride_wk,
    stride_yb,
    stride_yo,
    stride_yl,
    KS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    # GEMM view: rows = (b, l_out) pairs, cols = output channels, reduction = C * KS
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    b_idx = offs_m // L_out
    l_idx = offs_m % L_out
    m_mask = offs_m < B * L_out
    n_mask = offs_n < O
    R = C * KS
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_K):
        rk = r0 + tl.arange(0, BLOCK_K)
        k_mask = rk < R
        c_idx = rk // KS
        t_idx = rk % KS
        x_ptrs = x_ptr + b_idx[:, None] * stride_xb + c_idx[None, :] * stride_xc + (l_idx[:, None] + t_idx[None, :]) * stride_xl
        a = tl.load(x_ptrs, mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        w_ptrs = w_ptr + offs_n[None, :] * stride_wo + c_idx[:, None] * stride_wc + t_idx[:, None] * stride_wk
        w = tl.load(w_ptrs, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc += tl.dot(a, w)
    y_ptrs = y_ptr + b_idx[:, None] * stride_yb + offs_n[None, :] * stride_yo + l_idx[:, None] * stride_yl
    tl.store(y_ptrs, acc, mask=m_mask[:, None] & n_mask[None, :])


def conv1d(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    B, C, L = x.shape
    O, C2, KS = weight.shape
    assert C == C2 and L >= KS
    L_out = L - KS + 1
    y = torch.empty((B, O, L_out), device=x.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 32, 32
    grid = (triton.cdiv(B * L_out, BLOCK_M), triton.cdiv(O, BLOCK_N))
    conv1d_kernel[grid](
        x,
        weight,
        y,
        B,
        C,
        L,
        O,
        L_out,
        x.stride(0),
        x.stride(1),
        x.stride(2),
        weight.stride(0),
        weight.stride(1),
        weight.stride(2),
        y.stride(0),
        y.stride(1),
        y.stride(2),
        KS=KS,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
    )
    return y
