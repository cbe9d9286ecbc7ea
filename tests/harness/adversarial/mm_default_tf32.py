"""ATTACK: a precision downgrade that Triton's own interpreter cannot see.

The original asks `tl.dot(..., input_precision="ieee")`. This rewrite drops the keyword, so on a GPU
the dot runs in TF32 (Triton's default for fp32: 10-bit mantissa inputs), which is much faster and,
for the ci shapes (K=72, rtol=atol=1e-4), WRONG: emulating TF32 rounding on the three checked seeds
puts ~1400 of 1920 elements outside tolerance (max_abs ~1e-2). Triton's interpreter `create_dot`
ignores `input_precision` and multiplies in full fp32; the harness's interpreter
(`child/interpreter.py`, `_tf32_dots`) rounds fp32 dot operands to TF32 where a GPU would, so on
`--device cpu` the result is as wrong as on the GPU.

A correct harness must NOT say `correct`: expected `incorrect` (outside rtol/atol), on a GPU and on
the interpreter alike.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k * BLOCK_K + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn, mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)  # TF32 on a GPU; full fp32 on the interpreter
    tl.store(
        c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
        acc.to(c_ptr.dtype.element_ty),
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        matmul_kernel[grid](
            a,
            b,
            c,
            M,
            N,
            K,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            BLOCK_M=64,
            BLOCK_N=64,
            BLOCK_K=32,
        )
        return c
