"""Legitimate: a correct vector_add that prints a lot to stdout and stderr (at import and in __init__).

Attack class: none (control).
Reported: invented.
How it tries to fool the harness: it does not; its output must only end up in the log, never in
the protocol stream, and must not change the verdict.
"""

import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

for i in range(3000):
    print(f"tuning note {i}: trying BLOCK_SIZE={128 << (i % 4)} ... ok {{'verdict': maybe}}")
print("a very long line " + "x" * 100000)
print("stderr chatter", file=sys.stderr)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        for i in range(500):
            print(f"building model, step {i}")

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
