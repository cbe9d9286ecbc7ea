"""Cheat: a background thread keeps the device busy with matmuls so the baseline measures slowly.

Attack class: slowing the baseline by hogging the GPU (or the CPU) from a background thread.
Reported: invented (interference attacks on A/B timing; the wafer.ai field guide's timing-attack
category).
How it tries to fool the harness: the candidate itself is the original kernel, but from import on
a daemon thread runs `torch.mm` on the device in short bursts (sleeping in between, at most 60 s).
Whatever is timed in parallel with it, the baseline in particular, gets slower. On the CPU it
competes for the cores instead.
"""

import threading
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _hog():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    size = 2048 if dev == "cuda" else 128
    a = torch.randn(size, size, device=dev)
    stop = time.monotonic() + 60
    while time.monotonic() < stop:
        for _ in range(4):
            a = torch.mm(a, a).clamp_(-1, 1)
        time.sleep(0.002)


threading.Thread(target=_hog, daemon=True).start()


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


class Model(nn.Module):
    def forward(self, a, b):
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
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
