"""Cheat: returns an empty tensor at once; a background thread launches the kernel a bit later.

Attack class: thread injection.
Reported: wafer.ai field guide ("background thread injection: deferring work to background CPU
threads that execute after timing measurements").
How it tries to fool the harness: `forward` returns before any work is queued, so a timer around
it measures nothing; by the time a slow checker reads the output, the thread has filled it.
"""

import threading
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def _later(x, y, out):
    time.sleep(0.05)
    add_kernel[(triton.cdiv(out.numel(), 256),)](x, y, out, out.numel(), BLOCK_SIZE=256)


@triton.jit
def token_kernel(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < 0)  # stores nothing


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        token_kernel[(1,)](out, BLOCK=16)  # a launch counter sees one Triton launch per call
        threading.Thread(target=_later, args=(x, y, out), daemon=True).start()
        return out
