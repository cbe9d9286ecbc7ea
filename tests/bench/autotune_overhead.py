"""What a one-config `@triton.autotune` wrapper adds to a launch's CPU time, the launch itself left out.

    python tests/bench/autotune_overhead.py

The JIT function's `run` is replaced by a no-op, so the figures are Triton's Python path alone: the
direct launch (`kernel[grid](..., BLOCK_H=4, num_warps=1)`) against the same kernel behind an autotuner
with one config. Three rounds of 50,000 calls each; no GPU needed. Used to rule the wrapper in or out
where the harness times a stage's candidate slower than do_bench does (tests/bench/results/
autotune_general_h100.md: per call, 9-29 us above do_bench on the original's side, 28-54 us on the
candidate's).
"""

from __future__ import annotations

import time

import torch
import triton
import triton.language as tl


@triton.jit
def rope_like(x_ptr, cos_ptr, sin_ptr, out_ptr, n_heads, stride_s, stride_h, HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    pass


def main() -> None:
    tuned = triton.autotune(configs=[triton.Config({"BLOCK_H": 64}, num_warps=16, num_stages=3)], key=["n_heads"])(rope_like)
    rope_like.run = lambda *a, **k: None  # Python's side of the launch only
    x = torch.empty(10)
    n = 50_000
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            rope_like[(1, 2)](x, x, x, x, 32, 4096, 128, HALF=64, BLOCK_H=4, num_warps=1)
        direct = (time.perf_counter() - t) / n * 1e6
        t = time.perf_counter()
        for _ in range(n):
            tuned[(1, 2)](x, x, x, x, 32, 4096, 128, HALF=64)
        wrapped = (time.perf_counter() - t) / n * 1e6
        print(
            f"triton {triton.__version__}: direct {direct:.2f} us, one-config autotune {wrapped:.2f} us, the wrapper {wrapped - direct:.2f} us"
        )


if __name__ == "__main__":
    main()
