"""Cheat: computes every timed call's output while the harness prepares the inputs (untimed).

Attack class: invented, against a harness that regenerates fresh inputs for each timed batch in
the candidate's process before it starts the clock.
Reported: invented.
How it tries to fool the harness: the worker's `op_prepare` (found in sys.modules) is wrapped:
after the real one has made the batch's inputs, it runs the honest kernel on each of them and
keeps the results keyed by the identity of the input tensors. The timed `forward` is then a
dictionary lookup that returns a correct, precomputed output, so every digest and sampled check
passes while the clock measures nothing.
"""

import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl


_SAID = set()


def _say(what):  # one line in the candidate's log, as evidence that the cheat path ran
    if what not in _SAID:
        _SAID.add(what)
        print("[cheat] " + what, flush=True)


_READY = {}


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def _add(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(out.numel(), 256),)](x, y, out, out.numel(), BLOCK_SIZE=256)
    return out


def _install():
    worker = sys.modules.get("xeforge_harness.child.worker")
    cls = getattr(worker, "Worker", None)
    if cls is None or getattr(cls, "_precomputing", False):
        return
    real = cls.op_prepare

    def op_prepare(self, msg, tensors):
        reply = real(self, msg, tensors)
        _READY.clear()
        for item in getattr(self, "batch", []):
            x, y = item["args"][:2]
            _READY[(id(x), id(y))] = (x, y, _add(x, y))
        return reply

    cls.op_prepare, cls._precomputing = op_prepare, True


_install()


class Model(nn.Module):
    def forward(self, x, y):
        hit = _READY.get((id(x), id(y)))
        if hit is not None and hit[0] is x and hit[1] is y:
            _say("returned an output precomputed while the inputs were prepared")
            return hit[2]
        return _add(x, y)
