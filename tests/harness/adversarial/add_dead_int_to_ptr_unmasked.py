"""CHEAT (vector_add): the loads have no mask (each program reads a whole 1024-element tile even past
the end of x and y); only the store is masked. On the interpreter every access is normally bounded
(child/bounds.py), but a launch that performs `int_to_ptr` even once is marked "unbounded" for the
rest of the launch; a dead cast of 0 to a pointer at the top of the kernel switches the bounds off.
On a GPU this reads past the allocation (garbage/fault).
Expected: should be incorrect (OOB)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    _unused = tl.full((1,), 0, tl.int64).to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    tl.store(out_ptr + offsets, x + y, mask=offsets < n_elements)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
        return out
