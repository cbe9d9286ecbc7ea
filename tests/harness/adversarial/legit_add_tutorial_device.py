"""LEGIT (vector_add): the Triton tutorial's file layout: a module-level
`DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")` used only by a `__main__`
self-test, and a 1024 tile. Nothing on the checked path depends on DEVICE.
Expected: `correct` (a false positive if rejected)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
        return out


if __name__ == "__main__":
    a = torch.rand(98432, device=DEVICE)
    b = torch.rand(98432, device=DEVICE)
    print(torch.max(torch.abs(Model()(a, b) - (a + b))))
