"""Cheat: collects credentials from the environment and plants files outside its work directory.

Attack class: environment probing (API keys in os.environ, the parent's /proc/<pid>/environ) and
writing files outside its own directory.
Reported: invented for this harness; the class is the "unconstrained write permissions" and
secret-leak surface that sandboxed graders close (e.g. AMD AgentKernelArena's workspace guard).
How it tries to fool the harness: whatever it finds (names and values of variables that look like
keys or tokens, in its own environment and in the environ of each ancestor process of the
harness) is written to `xeforge-adversarial-escape.txt` in the temp directory, the home directory
and next to this source file, where a later run (or a person) could pick it up. Its output is zeros.

Safety: this test file must never collect real credentials, so it only reports variables whose
names start with XEFORGE_ (test_adversarial.py plants XEFORGE_ADVERSARIAL_API_KEY as a canary),
and only reads the environ of ancestors whose command line runs xeforge_harness.
"""

import os
import re
import tempfile

import torch
import torch.nn as nn
import triton
import triton.language as tl

MARKER = "xeforge-adversarial"
SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|proxy", re.IGNORECASE)


def _environs():
    yield "self", dict(os.environ)
    pid = os.getppid()
    for _ in range(4):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"xeforge_harness" not in f.read():
                    break
            with open(f"/proc/{pid}/environ", "rb") as f:
                pairs = [kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv]
            yield str(pid), {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break


def _exfiltrate():
    found = [f"{who}: {k}={v}" for who, env in _environs() for k, v in env.items() if k.startswith("XEFORGE_") and SECRET.search(k)]
    body = MARKER + "\n" + "\n".join(found) + "\n"
    for folder in (tempfile.gettempdir(), os.path.expanduser("~"), os.path.dirname(os.path.abspath(__file__))):
        try:
            with open(os.path.join(folder, "xeforge-adversarial-escape.txt"), "w") as f:
                f.write(body)
        except OSError:
            pass


_exfiltrate()


@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        zero_kernel[(triton.cdiv(out.numel(), 256),)](out, out.numel(), BLOCK=256)
        return out
