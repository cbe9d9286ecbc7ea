"""How far the GEMMs of the generalisation suite can get towards cuBLAS by configs alone.

The autotune stage can only choose configs; where the best config of its space is still more than 10%
behind cuBLAS, either the space lacks a config that closes the gap or the kernel's own structure (its
program order, its masks, its layout) does. This script times, with do_bench in one process, every
config of the stage's space widened by a list of extra GEMM tiles (deeper pipelines, 256-wide tiles,
K tiles of 64 and 128), each checked against the naive file's output first, and the PyTorch equivalent.

    python3 gemm_headroom.py OUT_DIR [KERNEL ...]   (default: the GEMMs that missed cuBLAS by >10%)

Environment: XEFORGE_BIN, DRY_RUN_CPU=1 with FAMILY=ci (a rehearsal on the CPU interpreter). Writes
OUT_DIR/gemm_headroom.md and OUT_DIR/gemm_headroom.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

DEV = "cpu" if os.environ.get("DRY_RUN_CPU") == "1" else "cuda"
if DEV == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "general"))
import suite  # noqa: E402
from timing_gap import do_bench, load, naive_copy  # noqa: E402
from torch_equivalents import EQUIVALENTS  # noqa: E402

BIN = os.environ.get("XEFORGE_BIN", os.path.join(REPO, "target", "release", "xeforge"))
DEFAULT = ["gemm_bf16_2d", "gemm_nt_helper", "gemm_unmasked_fp16", "bmm_fp16", "gemm_splitk"]
# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) tried beside the shipped list.
EXTRA = [
    (128, 256, 64, 8, 4),
    (256, 128, 64, 8, 3),
    (256, 128, 64, 8, 4),
    (128, 128, 64, 8, 4),
    (128, 128, 64, 4, 4),
    (128, 128, 64, 4, 5),
    (64, 256, 64, 4, 4),
    (128, 64, 64, 4, 4),
    (64, 128, 64, 4, 4),
    (64, 64, 64, 4, 4),
    (128, 256, 64, 4, 3),
    (64, 64, 128, 4, 3),
    (32, 64, 128, 4, 3),
    (64, 32, 128, 4, 4),
    (128, 128, 128, 8, 3),
]


def overlay(dir_: str) -> None:
    shipped = json.load(open(os.path.join(REPO, "knowledge", "autotune", "gemm_cuda.json")))
    seen = {json.dumps(c, sort_keys=True) for c in shipped["configs"]}
    for m, n, k, w, s in EXTRA:
        c = {"kwargs": {"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 8}, "num_warps": w, "num_stages": s}
        if json.dumps(c, sort_keys=True) not in seen:
            shipped["configs"].append(c)
    shipped["source"] = "gemm_headroom.py: the shipped list and the script's EXTRA tiles (an experiment, not a published list)"
    os.makedirs(os.path.join(dir_, "autotune"), exist_ok=True)
    with open(os.path.join(dir_, "autotune", "gemm_cuda.json"), "w") as f:
        json.dump(shipped, f)


def run_kernel(name: str, work: str, kb: str) -> dict:
    spec, variant, rtol, atol, naive = naive_copy(name, work)
    space = os.path.join(work, "space")
    args = [BIN, "stage", "autotune", naive, "--device", DEV, "--knowledge", kb, "--max-configs", "64", "--emit-space", space]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    index_path = os.path.join(space, "index.json")
    if not os.path.exists(index_path):
        return {"kernel": name, "error": f"--emit-space wrote nothing (exit {p.returncode}): {p.stderr[-300:]}"}
    index = json.load(open(index_path))
    inputs = suite.make_inputs(spec, variant, DEV)
    original = load(naive, f"hr_naive_{name}")
    rows = []
    with torch.no_grad():
        ref = original(*inputs)
        for entry in index:
            t = time.monotonic()
            try:
                model = load(os.path.join(space, entry["file"]), f"hr_{name}_{entry['file'][:-3]}")
                out = model(*inputs)
                ok = bool(torch.allclose(out.float(), ref.float(), rtol=rtol, atol=atol))
                us = do_bench(lambda m=model: m(*inputs)) if ok else None
                rows.append({"config": entry["config"], "start": entry["start"], "correct": ok, "us": us})
            except Exception as e:  # noqa: BLE001  (a config that fails is reported, not fatal)
                rows.append({"config": entry["config"], "start": entry["start"], "error": str(e)[:200]})
            rows[-1]["seconds"] = round(time.monotonic() - t, 1)
        torch_us = do_bench(lambda: EQUIVALENTS[name](*inputs)) if name in EQUIVALENTS else None
    return {"kernel": name, "configs": rows, "torch_us": torch_us, "space": len(index)}


def main(argv: list[str]) -> int:
    out = argv[0]
    names = argv[1:] or DEFAULT
    os.makedirs(out, exist_ok=True)
    os.environ["HEADROOM_OUT"] = out
    work = os.path.join(os.environ.get("TMPDIR", "/tmp"), "xeforge-gemm-headroom")  # not under OUT: only the report comes back
    kb = os.path.join(work, "kb")
    overlay(kb)
    dev = torch.cuda.get_device_name(0) if DEV == "cuda" else "CPU interpreter (rehearsal)"
    results = []
    for name in names:
        print(f"{name} ...", flush=True)
        results.append(run_kernel(name, os.path.join(work, name), kb))
        text = report(results, dev)  # after each kernel: a call cut short keeps what it measured
    print(text)
    return 0


def report(results: list[dict], dev: str) -> str:
    out = os.environ.get("HEADROOM_OUT", ".")
    lines = [f"# GEMM headroom by configs alone: {dev}; torch {torch.__version__}\n"]
    lines.append(
        "| kernel | space | best shipped config µs (config) | best of all µs (config) | torch µs | shipped ÷ torch | all ÷ torch |"
    )
    lines.append("|---|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            lines.append(f"| {r['kernel']} | error: {r['error']} |||||")
            continue
        timed = [c for c in r["configs"] if c.get("us")]

        def is_extra(c: dict) -> bool:
            """Whether a label (`BM=128 BN=256 BK=64 w8 s3`) is one of EXTRA's tiles: the first three
            tuned values are the tile (the suite's kernels list them M, N, K)."""
            words = c["config"].split()
            values = [int(v) for w in words if "=" in w and (v := w.split("=", 1)[1]).isdigit()][:3]
            ws = tuple(int(w[1:]) for w in words if w[:1] in "ws" and w[1:].isdigit())
            return (*values, *ws) in EXTRA

        shipped = [c for c in timed if not is_extra(c)]
        best_all = min(timed, key=lambda c: c["us"], default=None)
        best_shipped = min(shipped, key=lambda c: c["us"], default=None)
        t = r["torch_us"]

        def cell(c):
            return f"{c['us']:.1f} ({c['config']})" if c else "–"

        def ratio(c, t=t):
            return f"{c['us'] / t:.3f}" if c and t else "–"

        lines.append(
            f"| {r['kernel']} | {r['space']} | {cell(best_shipped)} | {cell(best_all)} | {t:.1f} | {ratio(best_shipped)} | {ratio(best_all)} |"
        )
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "gemm_headroom.md"), "w").write(text)
    json.dump({"device": dev, "results": results}, open(os.path.join(out, "gemm_headroom.json"), "w"), indent=1)
    return text


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
