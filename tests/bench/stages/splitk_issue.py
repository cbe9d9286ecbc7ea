"""gemm_splitk's time three ways on one GPU: do_bench (L2 flushed per call), back to back with the host
well ahead (a `torch.cuda._sleep` queued first, so device time alone), and the host's launch issue.

    python3 tests/bench/stages/splitk_issue.py tests/bench/stages/general/gemm_splitk.py BEST.py > micro.json

BEST.py is the same file with another config at its launch (the run of 2026-12-06 used
`BLOCK_M=32, BLOCK_N=64, BLOCK_K=32, SPLIT_K=4, num_warps=2, num_stages=5`, the grid's 64 for M made 32);
its result is tests/bench/results/autotune_general_h100_run/splitk-micro-2026-12-06q1.json.
"""

import importlib.util
import json
import statistics
import sys
import time

import torch
import triton

M, N, K = 512, 512, 16384
CALLS = 64  # distinct inputs, one call each
SLEEP_CYCLES = 200_000_000  # far longer than issuing CALLS calls takes


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Model()


def measure(model, ins: list) -> dict:
    for a, b in ins[:3]:
        model(a, b)
    torch.cuda.synchronize()
    first = ins[0]
    out: dict[str, list[float]] = {
        "do_bench_flush": [triton.testing.do_bench(lambda: model(*first), warmup=10, rep=40, return_mode="median") * 1000]
    }
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        torch.cuda._sleep(SLEEP_CYCLES)
        t0 = time.perf_counter()
        start.record()
        for a, b in ins:
            model(a, b)
        end.record()
        issued = time.perf_counter() - t0
        end.synchronize()
        out.setdefault("b2b_device_us", []).append(start.elapsed_time(end) * 1000 / CALLS)
        out.setdefault("issue_us", []).append(issued * 1e6 / CALLS)
        # host-paced: nothing queued ahead, from the first launch to the last result
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for a, b in ins:
            model(a, b)
        torch.cuda.synchronize()
        out.setdefault("wall_us", []).append((time.perf_counter() - t0) * 1e6 / CALLS)
        # the same inputs every call (warm L2)
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        for _ in range(CALLS):
            model(*first)
        end.record()
        end.synchronize()
        out.setdefault("b2b_same_inputs_us", []).append(start.elapsed_time(end) * 1000 / CALLS)
    return {k: round(statistics.median(v), 2) for k, v in out.items()}


def main() -> None:
    ins = [
        (torch.randn(M, K, device="cuda", dtype=torch.float16), torch.randn(K, N, device="cuda", dtype=torch.float16)) for _ in range(CALLS)
    ]
    res = {name: measure(load(path, name), ins) for name, path in (("naive", sys.argv[1]), ("best", sys.argv[2]))}
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
