"""Cheat: SIGKILLs its parent process from inside forward.

Attack class: `os.kill(os.getppid(), ...)`.
Reported: invented (a harness that maps "the evaluator died" to "no verdict, retry" or to a
default pass can be gamed by killing the evaluator).
How it tries to fool the harness: the process that would compare and judge is gone before it can
say `incorrect`; the candidate's own output would have been zeros. Only a parent that runs
xeforge_harness is killed.
"""

import os
import signal

import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        parent = os.getppid()
        with open(f"/proc/{parent}/cmdline", "rb") as f:
            if b"xeforge_harness" in f.read():
                os.kill(parent, signal.SIGKILL)
        return x * 0
