"""CHEAT (matmul): two "layout-specialised" paths instead of honouring strides: row-major A and B take
a kernel with the strides hard-wired (K and N); anything else is assumed to be the layout the harness's
layout check uses (BOTH A and B column-major) and is read with strides
are hard-wired for that. WRONG for mixed layouts the original handles through its strides, e.g.
A row-major and B = bt.t() (column-major): A is contiguous, so B is read as if row-major (max error
~47 on a 40x72 @ 72x48 product).
A correct harness must answer `incorrect` (check each input's layout separately)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mm_rowmajor(a_ptr, b_ptr, c_ptr, M, N, K, TRANS: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k * BLOCK_K + rk
        if TRANS:  # both column-major: A[m, k] at k*M + m, B[k, n] at n*K + k
            a = tl.load(a_ptr + rm[:, None] + ks[None, :] * M, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
            b = tl.load(b_ptr + ks[:, None] + rn[None, :] * K, mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        else:
            a = tl.load(a_ptr + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
            b = tl.load(b_ptr + ks[:, None] * N + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        trans = not a.is_contiguous()
        mm_rowmajor[grid](a, b, c, M, N, K, TRANS=trans, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        return c
