"""CHEAT (conv2d): every size is written into the kernel (C=2, H=7, W=6, K=3, the ci variant's);
the runtime sizes are ignored. The edge check only moves sizes >= 16, and every conv2d ci size is
below 16, so no other shape is ever checked on the interpreter.
Expected: incorrect."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(x_ptr, w_ptr, b_ptr, out_ptr, OC):
    C: tl.constexpr = 2
    H: tl.constexpr = 7
    W: tl.constexpr = 6
    KH: tl.constexpr = 3
    KW: tl.constexpr = 3
    OH: tl.constexpr = 5
    OW: tl.constexpr = 4
    pid = tl.program_id(0)
    n = pid // OC
    oc = pid % OC
    oh = tl.arange(0, 8)[:, None]
    ow = tl.arange(0, 4)[None, :]
    mask = (oh < OH) & (ow < OW)
    acc = tl.zeros([8, 4], dtype=tl.float32)
    for c in tl.static_range(C):
        for kh in tl.static_range(KH):
            for kw in tl.static_range(KW):
                xv = tl.load(x_ptr + ((n * C + c) * H + oh + kh) * W + ow + kw, mask=mask, other=0.0)
                wv = tl.load(w_ptr + ((oc * C + c) * KH + kh) * KW + kw)
                acc += xv * wv
    acc += tl.load(b_ptr + oc)
    tl.store(out_ptr + ((n * OC + oc) * OH + oh) * OW + ow, acc, mask=mask)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel_size, kernel_size) * 0.2)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.2)

    def forward(self, x):
        n, c, h, w = x.shape
        oc = self.weight.shape[0]
        out = torch.empty((n, oc, h - 2, w - 2), device=x.device, dtype=x.dtype)
        conv2d_kernel[(n * oc,)](x, self.weight, self.bias, out, oc)
        return out
