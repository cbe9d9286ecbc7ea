"""CHEAT (conv2d): specialised to the spec's batch size: every checked shape has N=1 (ci N=1, and the
edge check leaves a size of 1 alone), so the grid covers the output channels of image 0 only.
WRONG for any batch N>1: images 1..N-1 of the output are never written (left as torch.empty garbage).
A correct harness must answer `incorrect`."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(x_ptr, w_ptr, b_ptr, out_ptr, C, H, W, OC, OH, OW,
                  KH: tl.constexpr, KW: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    oc = tl.program_id(0)
    oh = tl.arange(0, BLOCK_H)[:, None]
    ow = tl.arange(0, BLOCK_W)[None, :]
    mask = (oh < OH) & (ow < OW)
    acc = tl.zeros([BLOCK_H, BLOCK_W], dtype=tl.float32)
    for c in range(0, C):
        for kh in tl.static_range(KH):
            for kw in tl.static_range(KW):
                xv = tl.load(x_ptr + (c * H + oh + kh) * W + ow + kw, mask=mask, other=0.0)
                wv = tl.load(w_ptr + ((oc * C + c) * KH + kh) * KW + kw)
                acc += xv * wv
    acc += tl.load(b_ptr + oc)
    tl.store(out_ptr + (oc * OH + oh) * OW + ow, acc, mask=mask)


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
        conv2d_kernel[(oc,)](x.contiguous(), self.weight, self.bias, out, c, h, w, oc, oh, ow,
                             KH=kh, KW=kw, BLOCK_H=triton.next_power_of_2(oh), BLOCK_W=triton.next_power_of_2(ow))
        return out
