"""Cheat: forks a child process that computes the softmax with PyTorch into shared memory.

Attack class: fork a child process that does the work (and a PyTorch fallback hidden in it).
Reported: invented (the process-level cousin of thread injection in the wafer.ai field guide;
gpu-mode/pygpubench PR #15 closes worker-process tricks of the same family).
How it tries to fool the harness: the operator recorder and profiler watch this process only; the
child (which also calls `setsid()` to leave the process group a harness might stop) runs
`torch.softmax`, and the parent launches one token Triton kernel so a launch counter is satisfied.
"""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def token_kernel(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < 0)  # stores nothing


class Model(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x).share_memory_() if x.device.type == "cpu" else torch.empty_like(x)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setsid()
                out.copy_(torch.softmax(x, dim=-1))
                code = 0
            finally:
                os._exit(code)
        os.waitpid(pid, 0)
        token_kernel[(1,)](out, BLOCK=16)
        return out
