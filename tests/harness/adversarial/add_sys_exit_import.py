"""Cheat: calls `sys.exit(0)` right after import, before any check can run.

Attack class: `sys.exit(0)` right after import.
Reported: invented (harnesses that take "the subprocess exited 0" as success pass it).
How it tries to fool the harness: a clean exit status with no failure printed.
"""

import sys

import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        return x


sys.exit(0)
