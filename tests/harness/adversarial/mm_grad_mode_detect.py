"""Cheat: computes only when autograd is on; under `no_grad` returns the previous call's result.

Attack class: a checked run that differs from timed runs, detected with `torch.is_grad_enabled()`.
Reported: invented (the phase-detection class of gpu-mode/pygpubench PR #7's warm-up detection,
keyed on grad mode: many harnesses check correctness normally and benchmark under no_grad).
How it tries to fool the harness: if correctness runs with grad enabled and timing under
`torch.no_grad()`, every checked call is honest and every timed call is a copy.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_LAST = {}


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
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k * BLOCK_K + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn, mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(
        c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
        acc.to(c_ptr.dtype.element_ty),
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, a, b):
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        if not torch.is_grad_enabled() and (M, N) in _LAST:
            copy_kernel[(triton.cdiv(M * N, 256),)](_LAST[(M, N)], c, M * N, BLOCK=256)
            return c
        matmul_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](
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
            BLOCK_M=32,
            BLOCK_N=32,
            BLOCK_K=32,
        )
        _LAST[(M, N)] = c.clone()
        return c
