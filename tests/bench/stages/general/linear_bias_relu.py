# fp16 linear layer with bias and ReLU fused into the GEMM epilogue; the grid is a lambda over fixed tiles.
import torch
import triton
import triton.language as tl


@triton.jit
def linear_relu_kernel(x_ptr, w_ptr, bias_ptr, out_ptr, M, N, K,
                       stride_xm, stride_xk, stride_wk, stride_wn, stride_om, stride_on,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        x = tl.load(x_ptr + rm[:, None] * stride_xm + (k * BLOCK_K + rk)[None, :] * stride_xk,
                    mask=(rm[:, None] < M) & ((k * BLOCK_K + rk)[None, :] < K), other=0.0)
        w = tl.load(w_ptr + (k * BLOCK_K + rk)[:, None] * stride_wk + rn[None, :] * stride_wn,
                    mask=((k * BLOCK_K + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :].to(tl.float32), 0.0)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(torch.nn.Module):
    def forward(self, x, w, bias):
        M, K = x.shape
        N = w.shape[1]
        out = torch.empty((M, N), device=x.device, dtype=torch.float16)
        linear_relu_kernel[lambda meta: (triton.cdiv(M, 64) * triton.cdiv(N, 64),)](
            x, w, bias, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1), out.stride(0), out.stride(1),
            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=2)
        return out
