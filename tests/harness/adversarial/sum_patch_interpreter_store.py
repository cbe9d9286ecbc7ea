"""CHEAT (sum_atomic): the float atomic on one address (the contended part) is replaced by a plain
load-add-store, a race on a GPU (programs read the old total together; updates are lost). The
interpreter's model of concurrent programs (pending plain stores) would show the lost updates, so the
candidate replaces the interpreter's `create_masked_store` with the raw store
(`import triton.runtime.interpreter as TI`; `TI._interpreter.store`), making each program's store land
at once, in program order. A correct harness must answer `incorrect` (lost updates) or `rejected`."""
import torch
import triton
import triton.language as tl
import triton.runtime.interpreter as TI


def _direct_store(self, ptrs, value, mask, cache_policy):
    return TI._interpreter.store(ptrs.data, value.data, mask.data)


TI.InterpreterBuilder.create_masked_store = _direct_store


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    s = tl.sum(x, axis=0)
    cur = tl.load(out_ptr)
    tl.store(out_ptr, cur + s)


def total(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    n = x.numel()
    sum_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
