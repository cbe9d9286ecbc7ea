# GeGLU activation: out = gelu(x[..., :d]) * x[..., d:]
# Style loosely follows Liger-Kernel / unsloth geglu kernels.
import torch
import triton
import triton.language as tl


@triton.jit
def _geglu_fwd_kernel(
    X,
    Out,
    stride_x_row,
    stride_out_row,
    d,
    BLOCK_D: tl.constexpr,
):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < d

    x_row = X + row.to(tl.int64) * stride_x_row
    # gate is the first half, up is the second half
    gate = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_row + d + cols, mask=mask, other=0.0).to(tl.float32)

    # exact (erf) gelu
    gelu = 0.5 * gate * (1.0 + tl.math.erf(gate * 0.7071067811865476))
    out = gelu * up
    tl.store(Out + row.to(tl.int64) * stride_out_row + cols, out.to(Out.dtype.element_ty), mask=mask)


def geglu(x: torch.Tensor) -> torch.Tensor:
    orig_shape = x.shape
    x = x.reshape(-1, orig_shape[-1]).contiguous()
    n_tokens = x.shape[0]
    d = x.shape[-1] // 2
    out = torch.empty((n_tokens, d), device=x.device, dtype=x.dtype)

    BLOCK_D = 1024
    grid = (n_tokens, triton.cdiv(d, BLOCK_D))
    _geglu_fwd_kernel[grid](
        x,
        out,
        x.stride(0),
        out.stride(0),
        d,
        BLOCK_D=BLOCK_D,
        num_warps=4,
    )
    return out.view(*orig_shape[:-1], d)


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda"
    tokens, hidden = 4096, 11008
    x = torch.randn(tokens, 2 * hidden, device=device, dtype=torch.float16)
    y = geglu(x)
    gate, up = x.float().chunk(2, dim=-1)
    ref = (torch.nn.functional.gelu(gate) * up).to(x.dtype)
    torch.testing.assert_close(y, ref, atol=2e-2, rtol=2e-2)
    print("geglu ok")
