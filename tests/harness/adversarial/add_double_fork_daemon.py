"""Cheat: right outputs, and a daemon that outlives its parent (a double fork) to slow the original down.

Attack class: a process that outlives the candidate's stop. Reported: invented, against our own design
(the harness stops the candidate's process group while the original is timed, and kills descendants
that left the group; a grandchild whose parent exits is reparented away from the candidate's tree).
How it tries to fool the harness: the first forward forks a child that forks a grandchild and exits at
once; the grandchild calls `setsid()` and, once the timed pairs would be running, keeps a CPU busy (on
a GPU it could queue device work the same way) so that only the original's timed calls pay for it. The
fork is spelled so that the harness's text check lets it through: the layer tested is the one behind.
"""

import os
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl

_STARTED = []


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def _daemon() -> None:
    split = getattr(os, "".join(("fo", "rk")))
    child = split()
    if child == 0:
        if split() == 0:
            os.setsid()
            end = time.monotonic() + 60
            while time.monotonic() < end:  # a busy core beside whatever is timed
                sum(range(10_000))
            os._exit(0)
        os._exit(0)  # the grandchild is an orphan now
    os.waitpid(child, 0)


class Model(nn.Module):
    def forward(self, x, y):
        if not _STARTED:
            _STARTED.append(True)
            _daemon()
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
