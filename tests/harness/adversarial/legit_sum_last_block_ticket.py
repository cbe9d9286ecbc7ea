"""LEGIT (sum_atomic): single-pass "last block" reduction (the threadfence-reduction pattern): each
program stores its partial (plain store), then increments a counter with an acq_rel atomic; the
program that sees count == nprog-1 sums every partial and writes the output. Expected: `correct`."""
import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, part_ptr, count_ptr, out_ptr, n, BLOCK: tl.constexpr, PBLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))
    done = tl.atomic_add(count_ptr, 1, sem="acq_rel")
    if done == nprog - 1:
        acc = tl.zeros([PBLOCK], tl.float32)
        for start in range(0, nprog, PBLOCK):
            p = start + tl.arange(0, PBLOCK)
            acc += tl.load(part_ptr + p, mask=p < nprog, other=0.0, volatile=True)
        tl.store(out_ptr, tl.sum(acc, axis=0))


def total(x):
    n = x.numel()
    g = triton.cdiv(n, 512)
    part = torch.empty(g, device=x.device, dtype=torch.float32)
    count = torch.zeros(1, device=x.device, dtype=torch.int32)
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    sum_kernel[(g,)](x, part, count, out, n, BLOCK=512, PBLOCK=16)
    return out
