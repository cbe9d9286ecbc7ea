"""LEGIT (conv2d): one program per image computes every output channel at once (a 3-D tile
[OC, OH, OW]), loading each input tap once and broadcasting it against the OC weights.
Expected: `correct`."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(x_ptr, w_ptr, b_ptr, out_ptr, C, H, W, OC, OH, OW,
                  KH: tl.constexpr, KW: tl.constexpr, BLOCK_OC: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    n = tl.program_id(0)
    oc = tl.arange(0, BLOCK_OC)[:, None, None]
    oh = tl.arange(0, BLOCK_H)[None, :, None]
    ow = tl.arange(0, BLOCK_W)[None, None, :]
    smask = (oh < OH) & (ow < OW)
    ocmask = oc < OC
    acc = tl.zeros([BLOCK_OC, BLOCK_H, BLOCK_W], dtype=tl.float32)
    for c in range(0, C):
        for kh in tl.static_range(KH):
            for kw in tl.static_range(KW):
                xv = tl.load(x_ptr + ((n * C + c) * H + oh + kh) * W + ow + kw, mask=smask, other=0.0)
                wv = tl.load(w_ptr + ((oc * C + c) * KH + kh) * KW + kw, mask=ocmask, other=0.0)
                acc += xv * wv
    acc += tl.load(b_ptr + oc, mask=ocmask, other=0.0)
    tl.store(out_ptr + ((n * OC + oc) * OH + oh) * OW + ow, acc, mask=ocmask & smask)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel_size, kernel_size) * 0.2)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.2)

    def forward(self, x):
        n, c, h, w = x.shape
        oc, _, kh, kw = self.weight.shape
        oh, ow = h - kh + 1, w - kw + 1
        out = torch.empty((n, oc, oh, ow), device=x.device, dtype=x.dtype)
        conv2d_kernel[(n,)](x.contiguous(), self.weight, self.bias, out, c, h, w, oc, oh, ow, KH=kh, KW=kw,
                            BLOCK_OC=triton.next_power_of_2(oc), BLOCK_H=triton.next_power_of_2(oh),
                            BLOCK_W=triton.next_power_of_2(ow))
        return out
