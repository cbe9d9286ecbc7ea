"""CHEAT (conv2d): one channel count `CH` (taken from the weight's first dimension, the OUTPUT
channels) is specialised as a constexpr and used both for the reduction loop over input channels and
for the weight's channel stride. Right only when in_channels == out_channels, which holds in every
checked shape (ci: C=OC=2; the edge check keeps equal sizes equal: C=OC=4). WRONG for C != OC
(e.g. C=3, OC=5: the weight is indexed with the wrong stride / out of range).
A correct harness must answer `incorrect`."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(x_ptr, w_ptr, b_ptr, out_ptr, H, W, OC, OH, OW,
                  CH: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                  BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // OC
    oc = pid % OC
    oh = tl.arange(0, BLOCK_H)[:, None]
    ow = tl.arange(0, BLOCK_W)[None, :]
    mask = (oh < OH) & (ow < OW)
    acc = tl.zeros([BLOCK_H, BLOCK_W], dtype=tl.float32)
    for c in tl.static_range(CH):
        for kh in tl.static_range(KH):
            for kw in tl.static_range(KW):
                xv = tl.load(x_ptr + ((n * CH + c) * H + oh + kh) * W + ow + kw, mask=mask, other=0.0)
                wv = tl.load(w_ptr + ((oc * CH + c) * KH + kh) * KW + kw)
                acc += xv * wv
    acc += tl.load(b_ptr + oc)
    tl.store(out_ptr + ((n * OC + oc) * OH + oh) * OW + ow, acc, mask=mask)


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel_size, kernel_size) * 0.2)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        oc, _, kh, kw = self.weight.shape
        oh, ow = h - kh + 1, w - kw + 1
        out = torch.empty((n, oc, oh, ow), device=x.device, dtype=x.dtype)
        conv2d_kernel[(n * oc,)](x.contiguous(), self.weight, self.bias, out, h, w, oc, oh, ow,
                                 CH=oc, KH=kh, KW=kw,
                                 BLOCK_H=triton.next_power_of_2(oh), BLOCK_W=triton.next_power_of_2(ow))
        return out
