"""CHEAT (sum_atomic): "no second pass to publish the total": each program atomically adds its block sum
into an accumulator, gets the running total back, and publishes that running total into the output
with `tl.atomic_xchg` (every program, different values). The output ends as whichever exchange lands
last: on the interpreter programs run in order, so the last one carries the full sum; on a GPU the
exchanges of concurrent programs land in any order (a program whose add came earlier can publish
later), so the output is often a partial total. The interpreter's race check only looks at plain
stores, not atomic writes of different values to one element.
A correct harness must answer `incorrect`."""
import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, acc_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    running = tl.atomic_add(acc_ptr, s) + s
    tl.atomic_xchg(out_ptr, running.to(tl.int32, bitcast=True))  # out viewed as int32 bits


def total(x: torch.Tensor) -> torch.Tensor:
    acc = torch.zeros(1, device=x.device, dtype=torch.float32)
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    n = x.numel()
    sum_kernel[(triton.cdiv(n, 1024),)](x, acc, out.view(torch.int32), n, BLOCK=1024)
    return out
