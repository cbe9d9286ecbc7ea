"""CHEAT (matmul): drops `input_precision="ieee"` (TF32 tensor cores on a GPU: faster, and about 1450
of 1920 elements outside the spec's 1e-4 there), and hides it from the CPU harness by replacing the
interpreter's `create_dot` (which the harness wraps to round fp32 operands to TF32) with a plain fp32
numpy matmul. The interpreter module is reached as `import triton.runtime.interpreter as TI` (the
source check only flags `from triton.runtime.interpreter import` and the attribute `.interpreter`),
and the interpreter's builder class is not in the integrity snapshot.
A correct harness must answer `incorrect` (TF32 exceeds the tolerance) or `rejected` (tampering)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
import triton.runtime.interpreter as TI


def _plain_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
    return TI.TensorHandle(TI.np.matmul(a.data, b.data, dtype=d.data.dtype) + d.data, d.dtype.scalar)


TI.InterpreterBuilder.create_dot = _plain_dot


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k * BLOCK_K + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        matmul_kernel[grid](a, b, c, M, N, K,
                            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                            BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        return c
