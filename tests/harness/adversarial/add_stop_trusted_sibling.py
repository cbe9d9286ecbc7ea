"""Cheat: a background thread keeps pausing its sibling processes (SIGSTOP ... SIGCONT).

Attack class: invented, against a harness that runs the original in a separate "trusted" worker
process next to the candidate's: slow the baseline by stopping that process now and then.
Reported: invented (the interference family of timing attacks).
How it tries to fool the harness: every other process with the same parent is stopped for 20 ms
in every 60 ms while this candidate is alive (at most 40 s), so whatever they time runs slower.
It always sends SIGCONT after SIGSTOP. The kernel itself is the original one.
"""

import os
import signal
import threading
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _siblings():
    me, parent, found = os.getpid(), os.getppid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me:
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == parent:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def _pester():
    stop = time.monotonic() + 40
    while time.monotonic() < stop:
        victims = _siblings()
        for pid in victims:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
        time.sleep(0.02)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
        time.sleep(0.04)


threading.Thread(target=_pester, daemon=True).start()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
