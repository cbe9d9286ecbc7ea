"""CHEAT (sum_atomic): no atomic on the total: each program does a plain load-add-store of out[0]
between two `tl.atomic_add(sync, 0)` "fences". On a GPU the programs run concurrently: fences order
memory but give no mutual exclusion, so programs read the same old total and updates are lost (the
result is one block's sum or a few). On the interpreter programs run one after another, and its
concurrency model lets a program's released stores be seen by the next program's acquire, so the
read-modify-write sequence is serialised and the sum comes out exact; the race detector only compares
stores still pending at the launch's end. A correct harness must answer `incorrect`."""
import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, sync_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    s = tl.sum(x, axis=0)
    tl.atomic_add(sync_ptr, 0)  # acquire
    cur = tl.load(out_ptr)
    tl.store(out_ptr, cur + s)
    tl.atomic_add(sync_ptr, 0)  # release


def total(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    sync = torch.zeros(1, device=x.device, dtype=torch.int32)
    n = x.numel()
    sum_kernel[(triton.cdiv(n, 1024),)](x, out, sync, n, BLOCK=1024)
    return out
