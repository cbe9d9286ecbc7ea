# fp32 vector add, 128 elements per program (as in Triton's tutorial 01, with the block written in).
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


class Model(torch.nn.Module):
    def forward(self, x, y):
        output = torch.empty_like(x)
        n_elements = output.numel()
        add_kernel[(triton.cdiv(n_elements, 128),)](x, y, output, n_elements, BLOCK_SIZE=128)
        return output
