import torch
import triton
import triton.language as tl


@triton.jit
def histogram_kernel(
    input_ptr,
    hist_ptr,
    n_elements,
    num_bins,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements

    vals = tl.load(input_ptr + offs, mask=mask, other=0).to(tl.int32)
    # drop anything out of range instead of corrupting memory
    valid = mask & (vals >= 0) & (vals < num_bins)
    ones = tl.full((BLOCK_SIZE,), 1, dtype=tl.int32)
    tl.atomic_add(hist_ptr + vals, ones, mask=valid)


def bincount(x: torch.Tensor, num_bins: int) -> torch.Tensor:
    """Count occurrences of each integer in [0, num_bins) in x.

    Values outside the range are ignored. Returns an int32 tensor of size num_bins.
    """
    assert not x.is_floating_point(), "bincount expects an integer tensor"
    x = x.reshape(-1).contiguous()
    n = x.numel()
    hist = torch.zeros(num_bins, dtype=torch.int32, device=x.device)
    if n == 0:
        return hist
    BLOCK_SIZE = 512
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    histogram_kernel[grid](x, hist, n, num_bins, BLOCK_SIZE=BLOCK_SIZE)
    return hist
