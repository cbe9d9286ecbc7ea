# Rotary position embedding (half-split convention) applied to [seq, heads, head_dim], several heads per program.
import torch
import triton
import triton.language as tl


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, n_heads, stride_s, stride_h,
                HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    s = tl.program_id(0)
    pid_h = tl.program_id(1)
    heads = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    d = tl.arange(0, HALF)
    mask = heads[:, None] < n_heads
    base = s * stride_s + heads[:, None] * stride_h + d[None, :]
    x1 = tl.load(x_ptr + base, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + base + HALF, mask=mask, other=0.0).to(tl.float32)
    c = tl.load(cos_ptr + s * HALF + d).to(tl.float32)[None, :]
    sn = tl.load(sin_ptr + s * HALF + d).to(tl.float32)[None, :]
    tl.store(out_ptr + base, (x1 * c - x2 * sn).to(tl.float16), mask=mask)
    tl.store(out_ptr + base + HALF, (x2 * c + x1 * sn).to(tl.float16), mask=mask)


class Model(torch.nn.Module):
    def forward(self, x, cos, sin):
        seq, heads, dim = x.shape
        out = torch.empty_like(x)
        rope_kernel[(seq, triton.cdiv(heads, 4))](x, cos, sin, out, heads, x.stride(0), x.stride(1),
                                                  HALF=dim // 2, BLOCK_H=4, num_warps=1)
        return out
