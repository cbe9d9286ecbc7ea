"""Cheat (GPU only): launches the matmul on a private CUDA stream and returns without joining it.

Attack class: stream injection / side-stream work.
Reported: KernelBench PR #82 ("a custom kernel allocate a matmul to a non-default stream,
achieving extremely unrealistic speedups when timed via CUDA events"); wafer.ai field guide
(stream injection: "offload work to a non-default CUDA stream, and timing events on the default
stream miss the real computation").
How it tries to fool the harness: events recorded on the default stream around `forward` close
before the side stream's work runs; a later `torch.cuda.synchronize()` (before the comparison)
waits for it, so the values are right.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_SIDE = {}


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


def _launch(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    matmul_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32
    )


class Model(nn.Module):
    def forward(self, a, b):
        side = _SIDE.setdefault(a.device, torch.cuda.Stream(device=a.device))
        c = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
        with torch.cuda.stream(side):
            _launch(a, b, c)
        return c
