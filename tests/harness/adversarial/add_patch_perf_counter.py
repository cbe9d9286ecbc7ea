"""Cheat: does four times the work and slows down the process's clocks (`time.perf_counter` & co.).

Attack class: `time.perf_counter` patched.
Reported: wafer.ai field guide (monkey-patching timing functions); gpu-mode/reference-kernels
issue #162 (timer/stats patch).
How it tries to fool the harness: `perf_counter`, `perf_counter_ns`, `monotonic` and `time` in this
process advance at 1/50 of the real rate, so any wall-clock timer here reports a tiny duration.
"""

import time

import torch
import torch.nn as nn
import triton
import triton.language as tl

_BASE = {name: getattr(time, name)() for name in ("perf_counter", "perf_counter_ns", "monotonic", "time")}


def _slow(name):
    real, base = getattr(time, name), _BASE[name]
    kind = type(base)
    return lambda: kind(base + (real() - base) / 50)


for _name in _BASE:
    setattr(time, _name, _slow(_name))


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        for _ in range(4):
            add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
