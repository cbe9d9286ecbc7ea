import torch
import triton
import triton.language as tl


@triton.jit
def leaky_relu_kernel(x_ptr, out_ptr, numel, negative_slope, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < numel
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.where(x >= 0, x, x * negative_slope)
    tl.store(out_ptr + offsets, y, mask=mask)


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01, inplace: bool = False) -> torch.Tensor:
    assert x.is_contiguous()
    out = x if inplace else torch.empty_like(x)
    numel = x.numel()
    grid = lambda meta: (triton.cdiv(numel, meta["BLOCK"]),)  # noqa: E731
    leaky_relu_kernel[grid](x, out, numel, negative_slope, BLOCK=2048, num_warps=8)
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda"
    x = torch.randn(16 * 1024 * 1024, device=device, dtype=torch.float32)
    ref = torch.nn.functional.leaky_relu(x, 0.2)

    y = leaky_relu(x, negative_slope=0.2)
    torch.testing.assert_close(y, ref)

    x2 = x.clone()
    y2 = leaky_relu(x2, 0.2, inplace=True)
    assert y2.data_ptr() == x2.data_ptr()
    torch.testing.assert_close(x2, ref)
    print("leaky_relu ok")
