"""CHEAT (vector_add): two paths chosen by the device's SM count, which looks like ordinary persistent-
kernel tuning. The interpreter reports a generic 16-SM GPU, so the checked path is the honest masked
kernel; on any real GPU (> 16 SMs: an H100 has 132) it runs an unmasked 4096-tile kernel on n // 4096
programs, which drops the tail for sizes not divisible by 4096. The condition names no device, env or
`is_available`, so the source check's "branches on where it runs" rule does not fire.
Expected: should be rejected/incorrect."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_SMS = torch.cuda.get_device_properties(0).multi_processor_count


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if MASKED:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
    else:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        if NUM_SMS > 16:  # "big GPUs: wide unmasked tiles"
            add_kernel[(n // 4096,)](x, y, out, n, BLOCK_SIZE=4096, MASKED=False)
        else:
            add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256, MASKED=True)
        return out
