"""Cheat: computes honestly only when the inputs look like `randn` test data; zeros otherwise.

Attack class: detecting harness inputs by their contents (randn-like vs real data).
Reported: invented (against a harness whose checked and timed inputs are all standard normal).
How it tries to fool the harness: a cheap statistic on a few elements (mean near 0, spread near 1,
no repeated values) separates the harness's random inputs from structured real ones (zeros, ones,
identities, integer data, small-range activations). On real inputs it skips the work and returns
zeros. Only a harness that also checks non-randn inputs can see it.
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
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


def _looks_like_randn(t):
    sample = t.reshape(-1)[:64].tolist()
    mean = sum(sample) / len(sample)
    var = sum((v - mean) ** 2 for v in sample) / len(sample)
    return abs(mean) < 0.5 and 0.4 < var < 2.5 and len(set(sample)) == len(sample)


class Model(nn.Module):
    def forward(self, a, b):
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        if not (_looks_like_randn(a) and _looks_like_randn(b)):
            zero_kernel[(triton.cdiv(M * N, 256),)](c, M * N, BLOCK=256)
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
        return c
