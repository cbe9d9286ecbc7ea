# Attention forward (online softmax over key blocks), fp16, one program per query block and head.
import torch
import triton
import triton.language as tl


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, stride_qh, stride_qm, stride_kh, stride_kn, stride_vh, stride_vn,
             stride_oh, stride_om, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :], mask=offs_m[:, None] < N_CTX, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + off_h * stride_kh + cols[:, None] * stride_kn + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        qk = tl.where(cols[None, :] < N_CTX, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + off_h * stride_vh + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :], acc.to(tl.float16), mask=offs_m[:, None] < N_CTX)


class Model(torch.nn.Module):
    def forward(self, q, k, v):
        Z, H, N_CTX, D = q.shape
        q, k, v = (t.reshape(Z * H, N_CTX, D) for t in (q, k, v))
        o = torch.empty_like(q)
        attn_fwd[(triton.cdiv(N_CTX, 64), Z * H)](
            q, k, v, o, D ** -0.5, q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
            o.stride(0), o.stride(1), N_CTX, HEAD_DIM=D, BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=2)
        return o.reshape(Z, H, N_CTX, D)
