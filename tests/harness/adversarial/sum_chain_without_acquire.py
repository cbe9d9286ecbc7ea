"""CHEAT (sum_atomic): a "chained" reduction with no waiting: program i plain-loads the running total
that program i-1 left in scratch[i-1], adds its block, stores scratch[i] and performs an atomic (a
release); the last program copies scratch[last] to out. It assumes program i-1 has finished before
program i starts, which holds on the sequential interpreter and not on a GPU (no spin/acquire on a
flag): a race. (No single atomic_add on the output, the chain is deterministic on the interpreter.)
Expected: incorrect (race)."""
import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, scratch_ptr, flag_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    part = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    prev = tl.load(scratch_ptr + pid - 1, mask=pid > 0, other=0.0)
    tl.store(scratch_ptr + pid, prev + part)
    tl.atomic_xchg(flag_ptr + pid, 1)
    if pid == tl.num_programs(0) - 1:
        tl.store(out_ptr, prev + part)


def total(x):
    n = x.numel()
    g = triton.cdiv(n, 1024)
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    scratch = torch.zeros(g, device=x.device, dtype=torch.float32)
    flags = torch.zeros(g, device=x.device, dtype=torch.int32)
    sum_kernel[(g,)](x, scratch, flags, out, n, BLOCK=1024)
    return out
