"""Does Triton compile configs in parallel on threads? (what child/precompile.py relies on)

    python3 tests/bench/compile_threads.py [--configs 8] [--threads 2] [--repeats 3]

Compiles the same GEMM kernel for N configs to an sm_90 target (no GPU needed: `ptxas` ships with
Triton), one after the other and on a thread pool, alternately, each repetition in a fresh cache
directory; prints the median seconds of each and their ratio. A ratio near 1 would mean the compiler
holds the GIL and precompiling on threads gains nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def gemm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


SIGNATURE = {
    "a": "*fp16",
    "b": "*fp16",
    "c": "*fp16",
    "M": "i32",
    "N": "i32",
    "K": "i32",
    "BM": "constexpr",
    "BN": "constexpr",
    "BK": "constexpr",
}


def compile_one(cfg: tuple[int, int, int, int]) -> None:
    bm, bn, bk, warps = cfg
    src = triton.compiler.ASTSource(fn=gemm, signature=SIGNATURE, constexprs={"BM": bm, "BN": bn, "BK": bk})
    triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": 3})


def timed(configs, threads: int) -> float:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="xf-compile-bench-")
    start = time.perf_counter()
    if threads <= 1:
        for c in configs:
            compile_one(c)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(compile_one, configs))
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    space = [(bm, bn, bk, w) for bm in (64, 128) for bn in (64, 128) for bk in (32, 64) for w in (4, 8)]
    configs = space[: a.configs]
    timed(configs[:1], 1)  # imports and the backend's first use, outside the figures
    seq, par = [], []
    for _ in range(a.repeats):
        seq.append(timed(configs, 1))
        par.append(timed(configs, a.threads))
    s, p = statistics.median(seq), statistics.median(par)
    print(f"triton {triton.__version__}, {len(configs)} configs, {os.cpu_count()} CPUs")
    print(f"in turn: median {s:.2f} s; on {a.threads} threads: median {p:.2f} s; ratio {s / p:.2f}")


if __name__ == "__main__":
    main()
