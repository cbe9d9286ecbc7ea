"""LEGIT (conv2d): one program per (image, output channel, block of output rows); x made contiguous,
the weight pre-flattened, the bias fused, general in every size. Expected: correct."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv2d_rows(x_ptr, w_ptr, b_ptr, out_ptr, C, H, W, OC, OH, OW,
                KH: tl.constexpr, KW: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_W: tl.constexpr):
    pid = tl.program_id(0)
    rb = tl.program_id(1)
    n = pid // OC
    oc = pid % OC
    oh = rb * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    ow = tl.arange(0, BLOCK_W)[None, :]
    mask = (oh < OH) & (ow < OW)
    acc = tl.zeros([BLOCK_R, BLOCK_W], dtype=tl.float32) + tl.load(b_ptr + oc)
    for c in range(0, C):
        x_base = x_ptr + (n * C + c) * H * W
        w_base = w_ptr + (oc * C + c) * KH * KW
        for kh in tl.static_range(KH):
            for kw in tl.static_range(KW):
                xv = tl.load(x_base + (oh + kh) * W + ow + kw, mask=mask, other=0.0)
                acc += xv * tl.load(w_base + kh * KW + kw)
    tl.store(out_ptr + ((n * OC + oc) * OH + oh) * OW + ow, acc, mask=mask)


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel_size, kernel_size) * 0.2)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n, c, h, w = x.shape
        oc, _, kh, kw = self.weight.shape
        oh, ow = h - kh + 1, w - kw + 1
        out = torch.empty((n, oc, oh, ow), device=x.device, dtype=x.dtype)
        R = 4
        conv2d_rows[(n * oc, triton.cdiv(oh, R))](x, self.weight.contiguous(), self.bias, out, c, h, w, oc, oh, ow,
                                                   KH=kh, KW=kw, BLOCK_R=R, BLOCK_W=triton.next_power_of_2(ow))
        return out
