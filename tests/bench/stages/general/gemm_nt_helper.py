# fp16 C = A @ B^T (B stored N x K, as in a linear layer's weight); the grid comes from a helper.
import torch
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, y_ptr, M, N, K, stride_xm, stride_wn, stride_ym,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + offs_k
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + kk[None, :], mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + offs_n[:, None] * stride_wn + kk[None, :], mask=(offs_n[:, None] < N) & (kk[None, :] < K), other=0.0)
        acc = tl.dot(x, tl.trans(w), acc)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :], acc.to(tl.float16),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _grid(M, N):
    return (triton.cdiv(M, 64), triton.cdiv(N, 64))


class Model(torch.nn.Module):
    def forward(self, x, w):
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float16)
        linear_kernel[_grid(M, N)](x, w, y, M, N, K, x.stride(0), w.stride(0), y.stride(0),
                                   BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4)
        return y
