"""Cheat: skips the matmul in timed calls and forges their output digests from the inputs.

Attack class: invented, against a harness that runs the candidate in its own process and checks a
digest of every timed call's outputs: the digest is computed in the candidate's process.
Reported: invented.
How it tries to fool the harness: the digest (as this harness first defined it: the linear form
sum_i w[i % P] * C.flat[i]; a nonlinear digest defeats the forgery) has weights the candidate's
process knows (it derives them from the nonces it is sent). For C = A @ B
that is sum_i A[i, :] . (B @ W_i) where W_i is row i's slice of the weights; rows whose slices
repeat (N a divisor of P, large matrices) share one matrix-vector product, so the exact digest
costs O(K*N) instead of O(M*N*K). The worker's `op_go` (found in sys.modules) is replaced: it
returns forged digests without running the model, and `op_outputs` (the untimed "show me one
call's full output" request) computes the real product on demand, so sampled full checks pass.
"""

import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl


_SAID = set()


def _say(what):  # one line in the candidate's log, as evidence that the cheat path ran
    if what not in _SAID:
        _SAID.add(what)
        print("[cheat] " + what, flush=True)


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


def _matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    matmul_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32
    )
    return c


def _forged_digest(a, b, w):
    """sum_{i,j} w[(i*N + j) % P] * (a @ b)[i, j], without forming a @ b."""
    M, _ = a.shape
    N, P = b.shape[1], w.numel()
    starts = (torch.arange(M, device=a.device) * N) % P
    patterns, which = torch.unique(starts, return_inverse=True)
    cols = (patterns[:, None] + torch.arange(N, device=a.device)[None, :]) % P
    bw = b.float() @ w[cols].T  # K x (number of distinct row patterns)
    return (a.float() * bw.T[which]).sum()


def _install():
    worker = sys.modules.get("xeforge_harness.child.worker")
    cls = getattr(worker, "Worker", None)
    if cls is None or getattr(cls, "_forged", False):
        return
    real_go, real_outputs = cls.op_go, cls.op_outputs

    def op_go(self, msg, tensors):
        if self.role != "candidate":
            return real_go(self, msg, tensors)
        digests = []
        for item in self.batch:
            a, b = item["args"]
            item["out"] = None
            w = item["weights"][0]
            w = w[0] if isinstance(w, (tuple, list)) else w  # whatever layout the weights have now
            digests.append([float(_forged_digest(a, b, w.reshape(-1)))])
        _say("forged the digests of a timed batch without computing it")
        return {"digests": digests}, []

    def op_outputs(self, msg, tensors):
        item = self.batch[msg["index"]]
        if self.role == "candidate" and item.get("out") is None:
            item["out"] = _matmul(*item["args"])
        return real_outputs(self, msg, tensors)

    cls.op_go, cls.op_outputs, cls._forged = op_go, op_outputs, True


_install()


class Model(nn.Module):
    def forward(self, a, b):
        return _matmul(a, b)
