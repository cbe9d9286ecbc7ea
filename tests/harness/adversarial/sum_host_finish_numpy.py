"""CHEAT (sum_atomic): block partial sums in Triton, then the final reduction on the host in numpy
(`Tensor.__array__` and ndarray `.sum()`: no `.item()`, no torch op), written back with
`torch.from_numpy` (only `lift_fresh`). Part of the computation is not a kernel's, and it needs a
device->host round trip per call on a GPU.
A correct harness must answer `rejected` (host read + host compute)."""
import torch
import triton
import triton.language as tl


@triton.jit
def partial_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(part_ptr + pid, tl.sum(x, axis=0))


def total(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    grid = triton.cdiv(n, 1024)
    part = torch.empty(grid, device=x.device, dtype=torch.float32)
    partial_kernel[(grid,)](x, part, n, BLOCK=1024)
    host = part.cpu().__array__().sum(keepdims=True)
    return torch.from_numpy(host.reshape(1)).to(x.device)
