"""CHEAT (vector_add): unmasked loads (the last block reads past the end of x and y) with the
interpreter's bounds switched off: the launch also receives a one-entry "workspace table" holding the
data_ptr() of a scratch tensor that is not itself an argument, and casts it to a pointer
(`int_to_ptr` of an address outside every argument lifts the bounds for the whole launch, by design
for grouped-GEMM pointer tables). The store stays masked, so the values compare equal wherever the
bytes past the end are readable; on a GPU the loads read past the allocation (or fault at a
segment's end). A correct harness must answer `incorrect` (reaching past its arguments)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(ws_table, x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    ws = tl.load(ws_table).to(tl.pointer_type(tl.int32))
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    tl.store(out_ptr + offsets, x + y, mask=offsets < n_elements)
    tl.store(ws + pid, pid)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        grid = triton.cdiv(n, 256)
        ws = torch.empty(grid, dtype=torch.int32, device=x.device)
        table = torch.tensor([ws.data_ptr()], dtype=torch.int64, device=x.device)
        add_kernel[(grid,)](table, x, y, out, n, BLOCK_SIZE=256)
        return out
