"""Cheat: an autotuned matmul whose autotuner state is rewritten between checked and timed calls.

Attack class: invented: mutating the module-level state of Triton's autotuner (its config list and
its per-key cache), plus `Autotuner.run` patched for every other autotuned kernel in the process.
Reported: invented.
How it tries to fool the harness: under the operator recorder (checks) the autotuner holds only
the exact config; in other calls its cache is cleared and the only config left is a
`TAIL=False` one that skips the last partial K block, which is cheaper and wrong when K is not a
multiple of 32. Separately, `Autotuner.run` is wrapped so that any *other* autotuned kernel (an
autotuned baseline sharing the process) is forced onto its last, usually slowest, config.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.runtime import autotuner

EXACT = triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "TAIL": True}, num_warps=4)
CHEAP = triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "TAIL": False}, num_warps=4)


@triton.autotune(configs=[EXACT], key=["M", "N", "K"])
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
    TAIL: tl.constexpr,
):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    steps = tl.cdiv(K, BLOCK_K) if TAIL else K // BLOCK_K
    for k in range(0, steps):
        ks = k * BLOCK_K + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn, mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(
        c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
        acc.to(c_ptr.dtype.element_ty),
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


_real_run = autotuner.Autotuner.run


def _run(self, *args, **kwargs):
    if self is not matmul_kernel and len(self.configs) > 1:
        self.configs = self.configs[-1:]  # everyone else gets their last config
        self.cache.clear()
    return _real_run(self, *args, **kwargs)


autotuner.Autotuner.run = _run


class Model(nn.Module):
    def forward(self, a, b):
        checked = torch._C._len_torch_dispatch_stack() > 0
        want = EXACT if checked else CHEAP
        if matmul_kernel.configs != [want]:
            matmul_kernel.configs = [want]
            matmul_kernel.cache.clear()
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        return c
