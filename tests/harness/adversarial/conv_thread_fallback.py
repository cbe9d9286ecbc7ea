"""Cheat: runs `F.conv2d` in a separate thread, so a thread-local operator recorder misses it.

Attack class: fallback to PyTorch hidden in a thread (thread injection).
Reported: wafer.ai field guide (thread injection); invented for the guard angle: a
`TorchDispatchMode` is thread-local.
How it tries to fool the harness: the calling thread runs only a Triton copy of the result.
"""

import threading

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, kernel_size, kernel_size) * 0.2)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.2)

    def forward(self, x):
        box = []
        worker = threading.Thread(target=lambda: box.append(F.conv2d(x, self.weight, self.bias)))
        worker.start()
        worker.join()
        out = torch.empty_like(box[0])
        copy_kernel[(triton.cdiv(out.numel(), 256),)](box[0], out, out.numel(), BLOCK=256)
        return out
