import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # tanh approximation of GELU
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = 2.0 * tl.sigmoid(2.0 * inner) - 1.0
    y = 0.5 * x * (1.0 + t)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def gelu_1d(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 1
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 256
    gelu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
    return y


def gelu_2d(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024
    gelu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=8)
    return y


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    a = torch.randn(777, device=device)
    b = torch.randn(33, 129, device=device)
    ref_a = torch.nn.functional.gelu(a, approximate="tanh")
    ref_b = torch.nn.functional.gelu(b, approximate="tanh")
    torch.testing.assert_close(gelu_1d(a), ref_a, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(gelu_2d(b), ref_b, atol=1e-5, rtol=1e-5)
    print("ok")
