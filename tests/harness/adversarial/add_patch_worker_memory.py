"""Cheat: adds in place into `x`, returns `x`, and blinds the harness's own memory checks.

Attack class: monkeypatching the harness's modules via `sys.modules` (the functions that decide
"the output aliases an input" and "an input was modified").
Reported: invented (aliasing/in-place is KernelBench PR #82's first case; the harness-patching
half is the in-memory form of what AMD AgentKernelArena's harness_guard.py protects on disk).
How it tries to fool the harness: the values returned are right; whichever process computes
"changed inputs" and "aliases" is made to report none. If that computation runs in the
candidate's process, the in-place cheat passes.
"""

import sys

import torch.nn as nn
import triton
import triton.language as tl


def _blind():
    for name, module in list(sys.modules.items()):
        if name.startswith("xeforge_harness") and module is not None:
            if hasattr(module, "changed_inputs"):
                module.changed_inputs = lambda *args, **kwargs: []
            if hasattr(module, "aliased_inputs"):
                module.aliased_inputs = lambda *args, **kwargs: {}


_blind()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        n = x.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, x, n, BLOCK_SIZE=256)
        return x
