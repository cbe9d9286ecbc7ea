import torch
import triton
import triton.language as tl


@triton.jit
def leaky_relu_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.where(x >= 0, x, x * 0.01)
    tl.store(y_ptr + offs, y, mask=mask)


def leaky_relu(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    cfg = {"BLOCK_SIZE": 512, "num_warps": 4}
    grid = (triton.cdiv(n, cfg["BLOCK_SIZE"]),)
    leaky_relu_kernel[grid](x, y, n, **cfg)
    return y


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(4, 1000, device=device)
    out = leaky_relu(x)
    ref = torch.nn.functional.leaky_relu(x, 0.01)
    torch.testing.assert_close(out, ref)
    print("ok")
