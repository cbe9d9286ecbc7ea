"""Cheat (GPU only): slows the ORIGINAL matmul with `torch.cuda._sleep` and makes it agree with fp16.

Attack class: wrapping the original module's kernel (found through sys.modules) with a GPU sleep.
Reported: invented (baseline sabotage in a shared process; the timing-attack family of the
wafer.ai field guide).
How it tries to fool the harness: every module in sys.modules with a `matmul_kernel` and a
`Model` (the original, if it shares this process) gets a spin-wait kernel queued before each
launch of its kernel (the baseline looks slow), and its `forward` is replaced by this candidate's
fp16 matmul, so the reference agrees with it. The candidate computes in fp16, which is faster and
outside the tolerance.
"""

import sys
import types

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_fp16_kernel(
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
        acc += tl.dot(a.to(tl.float16), b.to(tl.float16))
    tl.store(
        c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
        acc.to(c_ptr.dtype.element_ty),
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


def _fp16_forward(self, a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    matmul_fp16_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32
    )
    return c


def _sabotage():
    for module in list(sys.modules.values()):
        found = vars(module) if isinstance(module, types.ModuleType) else {}
        model, kernel = found.get("Model"), found.get("matmul_kernel")
        if not (isinstance(model, type) and issubclass(model, nn.Module)) or kernel is None:
            continue
        if module is sys.modules.get(__name__) or vars(model).get("_sabotaged"):
            continue
        run = getattr(kernel, "run", None)
        if callable(run):

            def slow_run(*args, _run=run, **kwargs):
                torch.cuda._sleep(2_000_000)  # about a millisecond of spinning on the GPU
                return _run(*args, **kwargs)

            kernel.run = slow_run
        model.forward = _fp16_forward
        model._sabotaged = True


_sabotage()


class Model(nn.Module):
    def forward(self, a, b):
        _sabotage()
        return _fp16_forward(self, a, b)
