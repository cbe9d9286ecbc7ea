# Seeded dropout (cf. triton tutorial 04-low-memory-dropout); returns output and keep-mask.
import torch
import triton
import triton.language as tl


@triton.jit
def _seeded_dropout(
    x_ptr,
    output_ptr,
    mask_ptr,
    n_elements,
    p,
    seed,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # random numbers in [0, 1) keyed on (seed, offset)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)
    tl.store(mask_ptr + offsets, x_keep.to(tl.int8), mask=mask)


def seeded_dropout(x: torch.Tensor, p: float, seed: int):
    assert 0.0 <= p < 1.0
    x = x.contiguous()
    output = torch.empty_like(x)
    keep = torch.empty(x.shape, device=x.device, dtype=torch.int8)
    n_elements = x.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    _seeded_dropout[grid](x, output, keep, n_elements, p, seed, BLOCK_SIZE=1024)
    return output, keep.bool()


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda"
    x = torch.randn(32 * 1024 * 1024, device=device, dtype=torch.float32)
    p = 0.1
    out, keep = seeded_dropout(x, p=p, seed=123)
    ref = torch.where(keep, x / (1 - p), torch.zeros_like(x))
    torch.testing.assert_close(out, ref)
    # same seed -> same mask
    out2, keep2 = seeded_dropout(x, p=p, seed=123)
    assert torch.equal(keep, keep2)
    frac = keep.float().mean().item()
    assert abs(frac - (1 - p)) < 1e-2, frac
    print("dropout ok")
