"""ATTACK: do the work after the recorders stop, before the outputs are serialized.

`forward` launches a Triton kernel that writes nothing useful (a copy of the input), then starts a thread that polls `torch.autograd.profiler._is_profiler_enabled` (a module-level
flag, spelled through getattr so the source check's attribute test does not see it). The
worker leaves `Recording` (dispatch mode popped, profiler stopped, events parsed) and only then
encodes the outputs; the thread sees the profiler go off and overwrites `out` with
`torch.softmax(x)` in the gap (widened by making the profile long to parse). The dispatch mode is thread-local and the profiler is off, so
neither layer records `aten._softmax`.

A correct harness must NOT say `correct`: expected `rejected` (library compute outside the record).
"""

import sys
import threading
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl

sys.setswitchinterval(1e-6)  # the poller gets the GIL within microseconds of the profiler stopping
_prof_mod = getattr(torch.autograd, "prof" + "iler")  # torch.autograd.profiler, spelled so the source check misses it


def _enabled():
    # a module-level flag set by profile.__enter__/__exit__: global, unlike the thread-local C state
    return getattr(_prof_mod, "_is_prof" + "iler_enabled")


@triton.jit
def copy_rows(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(in_ptr + row * n_cols + cols, mask=m), mask=m)


def _late(x, out):
    t0 = time.monotonic()
    while _enabled() and time.monotonic() - t0 < 20:
        pass
    out.copy_(torch.softmax(x, dim=-1))


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        copy_rows[(rows,)](out, x, cols, BLOCK=triton.next_power_of_2(cols))
        threading.Thread(target=_late, args=(x.detach(), out), daemon=True).start()
        # Thousands of free view ops (NON_COMPUTE): the profiler's event parsing, which the worker
        # does after the profiler is off and before the outputs are encoded, then takes long enough
        # for the thread to finish.
        v = out
        for _ in range(20000):
            v = v.view(-1).view(rows, cols)
        return out
