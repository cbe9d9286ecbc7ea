"""Cheat (GPU only): captures the matmul in a CUDA graph and replays it on a private stream.

Attack class: CUDA graph on a private stream (stream injection plus a replay that bypasses
per-launch hooks).
Reported: wafer.ai field guide (stream injection); invented for the graph-replay variant.
How it tries to fool the harness: after capture, a call is one `graph.replay()` on a private,
never-joined stream: no Triton launch goes through Python (launch counters see none after the
first call) and default-stream events see no work.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_GRAPHS = {}


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
        key = (tuple(a.shape), tuple(b.shape), a.device)
        if key not in _GRAPHS:
            stream = torch.cuda.Stream(device=a.device)
            sa, sb = a.clone(), b.clone()
            sc = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
            _launch(sa, sb, sc)  # compile outside the capture
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                _launch(sa, sb, sc)
            _GRAPHS[key] = (graph, stream, sa, sb, sc)
        graph, stream, sa, sb, sc = _GRAPHS[key]
        with torch.cuda.stream(stream):
            sa.copy_(a, non_blocking=True)
            sb.copy_(b, non_blocking=True)
            graph.replay()
            out = sc.clone()
        return out
