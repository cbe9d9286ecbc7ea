"""The PyTorch equivalent of each kernel of the suite, as a user would call the library op instead.

The GPU bench times these beside the naive and tuned kernels (cuBLAS for the GEMMs, cuDNN for the
convolution); the CPU check compares each kernel file with them on its `ci` dims.
"""

import torch
import torch.nn.functional as F


def _gelu_chain(x, b1, b2):
    h = F.gelu(x.float() * 0.5 + b1.float(), approximate="tanh").half()
    return F.gelu(h.float() * 2.0 + b2.float(), approximate="tanh").half()


def _rope(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    c, s = cos.float()[:, None, :], sin.float()[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).half()


def _rms(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(torch.bfloat16)


def _swiglu(x):
    gate, up = x.float().chunk(2, dim=-1)
    return (F.silu(gate) * up).to(torch.bfloat16)


def _attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def _conv(x, w):
    # NHWC input, [3, 3, C, K] weights: the same convolution through cuDNN in channels-last layout.
    xc = x.permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
    wc = w.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
    return F.conv2d(xc, wc, padding=1).permute(0, 2, 3, 1)


EQUIVALENTS = {
    "gemm_grouped_fp16": lambda a, b: a @ b,
    "gemm_bf16_2d": lambda a, b: a @ b,
    "gemm_fp32_floordiv": lambda a, b: a @ b,
    "gemm_fp32_ieee": lambda a, b: a @ b,  # fp32 GEMM (cuBLAS; TF32 is off unless a caller turns it on)
    "gemm_nt_helper": lambda x, w: x @ w.t(),
    "bmm_fp16": torch.bmm,
    "linear_bias_relu": lambda x, w, bias: torch.relu(torch.addmm(bias, x, w)),
    "gemm_splitk": lambda a, b: (a @ b).float(),
    "attention_fwd": _attention,
    "softmax_rows": lambda x: torch.softmax(x, dim=-1),
    "softmax_looped": lambda x: torch.softmax(x, dim=-1),
    "layernorm_affine": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
    "rmsnorm_bf16": _rms,
    "cross_entropy": lambda logits, labels: F.cross_entropy(logits, labels, reduction="none"),
    "rotary": _rope,
    "vector_add": lambda x, y: x + y,
    "bias_gelu_chain": _gelu_chain,
    "swiglu": _swiglu,
    "row_sum": lambda x: x.sum(-1),
    "transpose": lambda x: x.t().contiguous(),
    "total_sum": lambda x: x.sum().reshape(1),
    "conv2d_implicit_gemm": _conv,
    "gemm_unmasked_fp16": lambda a, b: a @ b,
}
