import torch
import triton
import triton.language as tl


@triton.jit
def _per_head_scale_kernel(
    X,
    Scale,
    Out,
    stride_xb,
    stride_xh,
    stride_xn,
    stride_xd,
    stride_ob,
    stride_oh,
    stride_on,
    stride_od,
    H,
    N,
    D,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    # grid = (cdiv(N, BLOCK_N), H, B)
    start_n = tl.program_id(0)
    off_h = tl.program_id(1)
    off_b = tl.program_id(2)

    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    mask = (offs_n[:, None] < N) & (offs_d[None, :] < D)

    x_ptrs = X + off_b * stride_xb + off_h * stride_xh + offs_n[:, None] * stride_xn + offs_d[None, :] * stride_xd
    x = tl.load(x_ptrs, mask=mask, other=0.0)

    # one scalar per head
    s = tl.load(Scale + off_h).to(tl.float32)
    out = x.to(tl.float32) * s

    o_ptrs = Out + off_b * stride_ob + off_h * stride_oh + offs_n[:, None] * stride_on + offs_d[None, :] * stride_od
    tl.store(o_ptrs, out.to(Out.dtype.element_ty), mask=mask)


def per_head_scale(x, scale):
    """x: (B, H, N, D), scale: (H,). Returns x * scale[None, :, None, None]."""
    B, H, N, D = x.shape
    assert scale.shape == (H,)
    out = torch.empty((B, H, N, D), dtype=x.dtype, device=x.device)
    BLOCK_N = 64
    BLOCK_D = triton.next_power_of_2(D)
    grid = (triton.cdiv(N, BLOCK_N), H, B)
    _per_head_scale_kernel[grid](
        x,
        scale,
        out,
        x.stride(0),
        x.stride(1),
        x.stride(2),
        x.stride(3),
        out.stride(0),
        out.stride(1),
        out.stride(2),
        out.stride(3),
        H,
        N,
        D,
        BLOCK_N=BLOCK_N,
        BLOCK_D=BLOCK_D,
        num_warps=4,
    )
    return out
