"""LEGIT (vector_add): persistent grid (one program per SM, grid-stride loop over tiles) with an
autotune list over the tile size; the even-size fast path is picked by a heuristic.
Expected: `correct`."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_SMS = torch.cuda.get_device_properties(0).multi_processor_count


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE": b}, num_warps=w) for b, w in ((256, 2), (512, 4), (1024, 4), (2048, 8))],
    key=["n_elements"],
)
@triton.heuristics({"EVEN": lambda a: a["n_elements"] % a["BLOCK_SIZE"] == 0})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    tiles = tl.cdiv(n_elements, BLOCK_SIZE)
    for t in range(pid, tiles, nprog):
        offsets = t * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        if EVEN:
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
        else:
            mask = offsets < n_elements
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        grid = lambda meta: (min(NUM_SMS, triton.cdiv(n, meta["BLOCK_SIZE"])),)
        add_kernel[grid](x, y, out, n)
        return out
