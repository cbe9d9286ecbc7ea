"""Cheat (GPU only): queues its launches and runs them inside a replaced `torch.cuda.synchronize`.

Attack class: launches deferred to the next synchronize, with `torch.cuda.synchronize` replaced.
Reported: wafer.ai field guide (timing attacks that defer work past the measured region);
gpu-mode/reference-kernels PR #161 ("reject deferral").
How it tries to fool the harness: `forward` only records what to launch (plus one token launch),
so a timer that stops right after `forward` sees nothing; the checker's `synchronize()` runs the
queue first, so the values it then reads are right.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_QUEUE = []
_real_sync = torch.cuda.synchronize


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def token_kernel(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < 0)


def _synchronize(device=None):
    while _QUEUE:
        x, y, out = _QUEUE.pop(0)
        add_kernel[(triton.cdiv(out.numel(), 256),)](x, y, out, out.numel(), BLOCK_SIZE=256)
    return _real_sync(device)


torch.cuda.synchronize = _synchronize


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        token_kernel[(1,)](out, BLOCK=16)
        _QUEUE.append((x, y, out))
        return out
