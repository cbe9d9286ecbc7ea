"""What keeps two of the suite's GEMMs behind cuBLAS when no config closes the gap (gemm_headroom.py).

gemm_bf16_2d (8192x1024x2048 bf16) and gemm_nt_helper (4096^3 fp16, B stored N x K) share two traits
the GEMMs that reach cuBLAS lack: a mask on K inside the K loop, and a 2-D grid walked in launch order
(no grouped program order). This script writes the same GEMM four ways, each trait on or off, and times
each at the tiles that were fastest for the suite's GEMMs, with do_bench in one process beside torch.
An experiment for the issue's notes (which rewrite a structural stage would need), not a stage.

    python3 gemm_structure.py OUT_DIR        (DRY_RUN_CPU=1: a small rehearsal on the interpreter)

Writes OUT_DIR/gemm_structure.md and OUT_DIR/gemm_structure.json.
"""

from __future__ import annotations

import json
import os
import sys

DEV = "cpu" if os.environ.get("DRY_RUN_CPU") == "1" else "cuda"
if DEV == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing_gap import do_bench  # noqa: E402


@triton.jit
def gemm(
    A,
    B,
    C,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    scm,
    scn,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    GROUP: tl.constexpr,
    MASK_K: tl.constexpr,
):
    # GROUP == 0: a 2-D grid, program_id(0) along M; otherwise a 1-D grid in groups of GROUP rows of tiles.
    if GROUP == 0:
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
    else:
        pid = tl.program_id(0)
        n_m = tl.cdiv(M, BM)
        n_n = tl.cdiv(N, BN)
        per_group = GROUP * n_n
        first = (pid // per_group) * GROUP
        rows = min(n_m - first, GROUP)
        pid_m = first + (pid % per_group) % rows
        pid_n = (pid % per_group) // rows
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        if MASK_K:
            a = tl.load(A + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            b = tl.load(B + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        else:
            a = tl.load(A + rm[:, None] * sam + kk[None, :] * sak, mask=rm[:, None] < M, other=0.0)
            b = tl.load(B + kk[:, None] * sbk + rn[None, :] * sbn, mask=rn[None, :] < N, other=0.0)
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc.to(C.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def run(a, b, c, bm, bn, bk, w, s, group, mask_k):
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn)) if group == 0 else (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    gemm[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BM=bm,
        BN=bn,
        BK=bk,
        GROUP=group,
        MASK_K=mask_k,
        num_warps=w,
        num_stages=s,
    )
    return c


# (name, M, N, K, dtype, B stored N x K)
PROBLEMS = [("gemm_bf16_2d", 8192, 1024, 2048, torch.bfloat16, False), ("gemm_nt_helper", 4096, 4096, 4096, torch.float16, True)]
TILES = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (128, 256, 64, 8, 4), (256, 128, 64, 8, 3)]
SHAPES = [
    ("2-D, K masked (as written)", 0, True),
    ("2-D, no K mask", 0, False),
    ("grouped 8, K masked", 8, True),
    ("grouped 8, no K mask", 8, False),
]


def main(out: str) -> int:
    os.makedirs(out, exist_ok=True)
    results = []
    problems = PROBLEMS if DEV == "cuda" else [(n, 64, 32, 64, torch.float16, nt) for n, *_, nt in PROBLEMS]
    tiles = TILES if DEV == "cuda" else [(32, 32, 32, 4, 2)]
    for name, M, N, K, dt, nt in problems:
        torch.manual_seed(0)
        a = torch.randn(M, K, device=DEV, dtype=dt)
        w = torch.randn(N, K, device=DEV, dtype=dt) if nt else None
        b = w.t() if nt else torch.randn(K, N, device=DEV, dtype=dt)
        ref = (a.float() @ b.float()).to(dt)
        torch_us = do_bench(lambda a=a, b=b: a @ b) if DEV == "cuda" else None
        for label, group, mask_k in SHAPES:
            for t in tiles:
                c = torch.empty(M, N, device=DEV, dtype=dt)
                row = {"kernel": name, "shape": label, "tile": "x".join(map(str, t[:3])) + f" w{t[3]} s{t[4]}", "torch_us": torch_us}
                try:
                    run(a, b, c, *t, group, mask_k)
                    row["correct"] = bool(torch.allclose(c.float(), ref.float(), rtol=2e-2, atol=1e-1))
                    row["us"] = (
                        do_bench(lambda a=a, b=b, c=c, t=t, g=group, m=mask_k: run(a, b, c, *t, g, m))
                        if DEV == "cuda" and row["correct"]
                        else None
                    )
                except Exception as e:  # noqa: BLE001  (a tile that does not compile is reported)
                    row["error"] = str(e)[:160]
                results.append(row)
                print(row, flush=True)
    lines = [f"# GEMM structure against cuBLAS: {torch.cuda.get_device_name(0) if DEV == 'cuda' else 'CPU rehearsal'}\n"]
    lines.append("| kernel | shape | best tile | µs | torch µs | ÷ torch |")
    lines.append("|---|---|---|---|---|---|")
    for name, *_ in problems:
        for label, *_ in SHAPES:
            rows = [r for r in results if r["kernel"] == name and r["shape"] == label and r.get("us")]
            best = min(rows, key=lambda r: r["us"], default=None)
            if best:
                lines.append(
                    f"| {name} | {label} | {best['tile']} | {best['us']:.1f} | {best['torch_us']:.1f} | {best['us'] / best['torch_us']:.3f} |"
                )
            else:
                ok = [r for r in results if r["kernel"] == name and r["shape"] == label]
                lines.append(
                    f"| {name} | {label} | – ({'correct' if all(r.get('correct') for r in ok) else 'not all correct'}) | – | – | – |"
                )
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "gemm_structure.md"), "w").write(text)
    json.dump(results, open(os.path.join(out, "gemm_structure.json"), "w"), indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
