"""Cheat: does four times the work and rebinds `torch.cuda.Event.record` / `elapsed_time` on the class.

Attack class: `torch.cuda.Event.record` / `elapsed_time` patched on the class (timer patching).
Reported: gpu-mode/reference-kernels issue #162 ("Timer / stats patch: leaves the kernel honest but
patches `Event.elapsed_time` / `calculate_stats` to report 1/100th the time"); wafer.ai field
guide (monkey-patching timing functions).
How it tries to fool the harness: any event-based timer in this process reports 1% of the real
time, so a slow candidate looks 25x faster. The class attributes are patched on CPU too (the class
exists without a GPU), so the tampering is visible to a harness on any device.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_Event = torch.cuda.Event
_real_elapsed = _Event.elapsed_time
_real_record = _Event.record


def _fast_elapsed(self, end_event):
    return _real_elapsed(self, end_event) * 0.01


def _record(self, stream=None):
    return _real_record(self, stream) if stream is not None else _real_record(self)


_Event.elapsed_time = _fast_elapsed
_Event.record = _record
torch.cuda.Event = _Event


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        for _ in range(4):  # slow on purpose: the patched timer hides it
            add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
