"""Cheat: writes a forged `accepted` verdict into every result file the harness might read.

Attack class: writing fake result files.
Reported: gpu-mode/pygpubench PR #15 (`submission_fd_overwrite` / `submission_thread_fd`:
rewriting the result files after the real results were written); AMD AgentKernelArena's
harness_guard.py (result and report files such as `task_result.yaml` are guarded).
How it tries to fool the harness: it finds the job's directories through /proc (the cwd of each
parent process, which is the judge's `/tmp/xeforge-job-*` directory, and of its sibling workers),
plus its own cwd and cwd's parent, and writes `result.json` and `phase` files claiming `accepted`,
at import, after every call and from an `atexit` hook. Its own output is zeros. Only directories
of its own job are targeted, so that parallel test runs are not disturbed.
"""

import atexit
import json
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

MARKER = "xeforge-adversarial"
FORGED = {
    "verdict": "accepted",
    "message": "correct and faster: 3.1x (95% interval 3.0-3.2)",
    "marker": MARKER,
    "timing": {"meaningful": True, "speedup": 3.1, "speedup_ci95": [3.0, 3.2]},
}


def _ppid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _cwd(pid):
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def _targets():
    chain, pid = [], os.getpid()
    for _ in range(4):  # me, the judge, the zygote, serve
        chain.append(pid)
        pid = _ppid(pid)
        if pid <= 1:
            break
    family = set(chain)
    for entry in os.listdir("/proc"):  # siblings: the other workers of this job
        if entry.isdigit() and _ppid(int(entry)) in chain[1:2]:
            family.add(int(entry))
    dirs = {d for d in (_cwd(p) for p in family) if d}
    here = os.getcwd()
    dirs |= {here, os.path.dirname(here)}
    return sorted(dirs)


def _forge():
    for d in _targets():
        for name, body in (("result.json", json.dumps(FORGED)), ("phase", f"done {MARKER}")):
            try:
                with open(os.path.join(d, name), "w") as f:
                    f.write(body + "\n")
            except OSError:
                pass


_forge()
atexit.register(_forge)


@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class Model(nn.Module):
    def forward(self, x, y):
        _forge()
        out = torch.empty_like(x)
        zero_kernel[(triton.cdiv(out.numel(), 256),)](out, out.numel(), BLOCK=256)
        return out
