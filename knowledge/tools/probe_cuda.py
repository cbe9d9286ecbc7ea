"""Read the facts behind knowledge/devices/h1x0.toml and knowledge/toolchains/cuda.toml from a live
NVIDIA GPU and the installed Triton, and check what the CUDA backend does with options and shapes
the rules care about. Prints one JSON object. Usage: python3 knowledge/tools/probe_cuda.py
"""

import dataclasses
import json

import torch
import triton
import triton.language as tl


def try_launch(fn):
    try:
        fn()
        torch.cuda.synchronize()
        return "ok"
    except Exception as e:  # the message is the datum
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def block_ptr_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    bp = tl.make_block_ptr(x_ptr, shape=(n,), strides=(1,), offsets=(0,), block_shape=(BLOCK,), order=(0,))
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(bp, boundary_check=(0,)))


def main():
    out = {"torch": torch.__version__, "triton": triton.__version__}
    p = torch.cuda.get_device_properties(0)
    out["torch_props"] = {k: getattr(p, k) for k in dir(p) if not k.startswith("_") and isinstance(getattr(p, k), (int, float, str, bool))}
    drv = triton.runtime.driver.active
    out["triton_props"] = drv.utils.get_device_properties(0)
    out["target"] = str(drv.get_current_target())
    from triton.backends.nvidia import compiler as nv

    opts = nv.CUDAOptions
    out["cuda_options"] = sorted(f.name for f in dataclasses.fields(opts))
    out["cuda_option_defaults"] = {
        f.name: f.default for f in dataclasses.fields(opts) if f.name in ("num_warps", "num_stages", "warp_size")
    }
    out["config_num_stages_default"] = triton.Config({}).num_stages
    mds = nv.min_dot_size(drv.get_current_target())
    out["min_dot_size"] = {
        name: list(mds(t, t))
        for name, t in [("fp16", tl.float16), ("bf16", tl.bfloat16), ("fp32", tl.float32), ("int8", tl.int8), ("fp64", tl.float64)]
    }
    out["has_make_block_ptr"] = hasattr(tl, "make_block_ptr")
    out["has_make_tensor_descriptor"] = hasattr(tl, "make_tensor_descriptor")

    x = torch.randn(4096, device="cuda")
    y = torch.empty_like(x)
    g = (triton.cdiv(x.numel(), 1024),)
    launches = {
        "plain": lambda: copy_kernel[g](x, y, x.numel(), BLOCK=1024),
        "num_warps_6": lambda: copy_kernel[g](x, y, x.numel(), BLOCK=1024, num_warps=6),
        "num_warps_64": lambda: copy_kernel[g](x, y, x.numel(), BLOCK=1024, num_warps=64),
        "grf_mode_256": lambda: copy_kernel[g](x, y, x.numel(), BLOCK=1024, grf_mode="256"),
        "threads_per_warp_16": lambda: copy_kernel[g](x, y, x.numel(), BLOCK=1024, threads_per_warp=16),
        "maxnreg_128": lambda: copy_kernel[g](x, y, x.numel(), BLOCK=1024, maxnreg=128),
        "warp_size_16": lambda: copy_kernel[g](x, y, x.numel(), BLOCK=1024, warp_size=16),
        "arange_96": lambda: copy_kernel[g](x, y, x.numel(), BLOCK=96),
        "block_ptr": lambda: block_ptr_kernel[(1,)](x, y, x.numel(), BLOCK=1024),
    }
    out["launch"] = {k: try_launch(f) for k, f in launches.items()}
    dots = {}
    for dt, name in [(torch.float16, "fp16"), (torch.float32, "fp32")]:
        for m, n, k in [(1, 16, 16), (16, 1, 16), (16, 16, 8), (16, 16, 16)]:
            a = torch.randn(m, k, device="cuda").to(dt)
            b = torch.randn(k, n, device="cuda").to(dt)
            c = torch.empty(m, n, device="cuda", dtype=torch.float32 if dt == torch.float32 else dt)
            dots[f"{name}_{m}x{n}x{k}"] = try_launch(lambda a=a, b=b, c=c, m=m, n=n, k=k: dot_kernel[(1,)](a, b, c, M=m, N=n, K=k))
    out["dot"] = dots
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
