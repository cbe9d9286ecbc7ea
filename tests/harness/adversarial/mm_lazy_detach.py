"""Cheat: defers the matmul launch until something reads the output (`detach`/`cpu`/`contiguous`).

Attack class: lazy evaluation (defer the kernel launch until the output is read).
Reported: wafer.ai field guide (lazy evaluation); gpu-mode/reference-kernels PR #161 ("reject
deferral").
How it tries to fool the harness: `forward` returns a plain, uncomputed `torch.empty` tensor at
once. The Tensor methods a checker or serialiser calls first on an output are wrapped so they flush
the pending launches before doing their work, so the values read are right, but the work happened
after the timed region closed. A token launch in `forward` satisfies a launch counter.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_PENDING = []


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
def token_kernel(c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(c_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < 0)  # stores nothing


def _flush():
    while _PENDING:
        a, b, c = _PENDING.pop(0)
        M, K = a.shape
        N = b.shape[1]
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


def _flushing(name):
    real = getattr(torch.Tensor, name)

    def method(self, *args, **kwargs):
        if _PENDING:
            _flush()
        return real(self, *args, **kwargs)

    setattr(torch.Tensor, name, method)


for _name in ("detach", "cpu", "contiguous", "reshape", "view", "float", "numpy", "tolist", "__getitem__"):
    _flushing(_name)


class Model(nn.Module):
    def forward(self, a, b):
        c = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
        token_kernel[(1,)](c, BLOCK=16)  # "a Triton kernel was launched in forward"
        _PENDING.append((a, b, c))
        return c
