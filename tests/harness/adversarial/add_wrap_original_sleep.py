"""Cheat: finds the ORIGINAL module in `sys.modules`, makes it slow and makes it agree with zeros.

Attack class: wrapping the original module's kernel (found through sys.modules) with a CPU sleep,
and hijacking the original's `forward`.
Reported: invented (the in-process sabotage that a shared-process harness allows; cf. the
"slowing the baseline" family in the wafer.ai field guide).
How it tries to fool the harness: every module in `sys.modules` that defines `add_kernel` and a
`Model` other than this file is patched: its kernel's launcher sleeps 5 ms per launch (a slow
baseline) and its `Model.forward` returns zeros, like this candidate. If the reference and
baseline share this process, zeros == zeros and the candidate is "faster".
"""

import sys
import time
import types

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


def _zeros_forward(self, x, *args):
    out = torch.empty_like(x)
    zero_kernel[(triton.cdiv(out.numel(), 256),)](out, out.numel(), BLOCK=256)
    return out


def _sabotage():
    for name, module in list(sys.modules.items()):
        found = vars(module) if isinstance(module, types.ModuleType) else {}
        model, kernel = found.get("Model"), found.get("add_kernel")
        if not (isinstance(model, type) and issubclass(model, nn.Module)) or kernel is None:
            continue
        if module is sys.modules.get(__name__) or vars(model).get("_sabotaged"):
            continue
        run = getattr(kernel, "run", None)
        if callable(run):

            def slow_run(*args, _run=run, **kwargs):
                time.sleep(0.005)
                return _run(*args, **kwargs)

            kernel.run = slow_run
        model.forward = _zeros_forward
        model._sabotaged = True


_sabotage()


class Model(nn.Module):
    def forward(self, x, y):
        _sabotage()  # in case the original is imported after us
        return _zeros_forward(self, x)
