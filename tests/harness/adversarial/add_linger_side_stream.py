"""Cheat (GPU only): leaves device work running after its reply, to slow the ORIGINAL's next batch.

Attack class: device work that outlives the candidate's timed request.
Reported: invented against this harness (the judge stops the candidate's processes while the
original is timed, but a stopped process's queued GPU work keeps running).
How it tries to fool the harness: the addition is honest, on the current stream, so its outputs and
digests are ready as soon as the kernel is done. Each call also queues a Triton spin kernel on a
second stream, which nothing the reply waits for depends on. The stream is made and switched to
without any name the source check looks for (`Stream`, `set_stream`, `stream`): the type of the
current stream is called, and the switch is looked up by a computed name, so only the wait at the
end of a timed request stands in its way (a first version wrote `torch.cuda.set_stream` and, run on
an H100, was rejected by the source check before it ran). A batch's spins run on after the reply, time-sliced with
the original's batch that the judge times next, so the original looks slower and the candidate
faster. The spins are Triton kernels, so no recorder sees a library fallback.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_SIDE = {}


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def spin_kernel(cell_ptr, iters):
    v = tl.load(cell_ptr)
    for _ in range(iters):
        v = v * 0.999999 + 1e-6
    tl.store(cell_ptr, v)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(out.numel(), 1024),)](x, y, out, out.numel(), BLOCK_SIZE=1024)
        if x.is_cuda:
            here = torch.cuda.current_stream(x.device)
            side, cell = _SIDE.get(x.device) or _SIDE.setdefault(x.device, (type(here)(device=x.device), torch.zeros(1, device=x.device)))
            switch = getattr(torch.cuda, "set_" + "str" + "eam")
            side.wait_stream(here)
            switch(side)
            spin_kernel[(1,)](cell, 200_000)  # about 0.5 ms a call: far longer than the addition
            switch(here)
        return out
