"""Cheat: SIGKILLs every ancestor process that runs xeforge_harness (judge, warm worker, server).

Attack class: killing the harness's parent processes (`os.kill` up the /proc ppid chain).
Reported: invented.
How it tries to fool the harness: with the judge, the warm worker and the server dead, no
`incorrect` is ever delivered; a client that treats a dead harness as "infrastructure error,
ignore" never records the failure. The server is killed last. Processes whose command line does
not run xeforge_harness are left alone.
"""

import os
import signal

import torch.nn as nn


def _ancestors():
    pid = os.getppid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"xeforge_harness" not in f.read():
                    return
            yield pid
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return


class Model(nn.Module):
    def forward(self, x, y):
        for pid in reversed(list(_ancestors())):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return x * 0
