"""Driver of run_autotune_gpu.sh: for each kernel of the generalisation suite, run the autotune stage
(the xeforge binary, real harness, `--device cuda`), then in this one process time the naive file, the
stage's file, every config of the stage's pruned space (`--emit-space`: the exhaustive sweep the stage is
judged against) and the PyTorch equivalent; write the table and the raw figures.

Usage: general_bench.py SUITE_DIR WORK_DIR OUT_DIR  (environment: XEFORGE_BIN, STAGE_BUDGET, DEADLINE_S,
KERNELS, FAMILY, DRY_RUN_CPU=1 for a rehearsal on the CPU interpreter with FAMILY=ci). Needs torch and triton with a CUDA device; PyYAML is optional (specs are read by a
small reader of the subset the suite uses and handed to the harness as JSON, which is also YAML).
"""

from __future__ import annotations

import concurrent.futures as cf
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

DEV = "cpu" if os.environ.get("DRY_RUN_CPU") == "1" else "cuda"
if DEV == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported

import torch  # noqa: E402
import triton  # noqa: E402
import triton.testing  # noqa: E402

T0 = time.monotonic()
SUITE, WORK, OUT = sys.argv[1:4]
BIN = os.environ.get("XEFORGE_BIN", "xeforge")
FAMILY = os.environ.get("FAMILY", "bench-gpu")
BUDGET = os.environ.get("STAGE_BUDGET", "15")
DEADLINE = float(os.environ.get("DEADLINE_S", "500"))
# Interleaved kinds, so a run cut short by the deadline still covers GEMMs, norms and element-wise kernels.
ORDER = [
    "gemm_grouped_fp16",
    "softmax_rows",
    "vector_add",
    "rmsnorm_bf16",
    "gemm_bf16_2d",
    "attention_fwd",
    "layernorm_affine",
    "bias_gelu_chain",
    "gemm_nt_helper",
    "cross_entropy",
    "transpose",
    "bmm_fp16",
    "swiglu",
    "row_sum",
    "linear_bias_relu",
    "softmax_looped",
    "rotary",
    "gemm_fp32_floordiv",
    "total_sum",
    "gemm_splitk",
    "conv2d_implicit_gemm",
    "gemm_unmasked_fp16",
]
sys.path.insert(0, SUITE)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite  # noqa: E402
from bench_table import table as _table  # noqa: E402
from suite import read_spec  # noqa: E402
from torch_equivalents import EQUIVALENTS  # noqa: E402


def table(results: list[dict], skipped: list[str], device: str) -> str:
    return _table(results, skipped, device, dev=DEV, family=FAMILY, budget=BUDGET)


def log(msg: str) -> None:
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def make_inputs(spec: dict, variant: dict) -> list:
    return suite.make_inputs(spec, variant, DEV)


# --- timing --------------------------------------------------------------------------------------


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench(fn) -> float:
    """Median µs over ~40 ms of calls, L2 flushed between calls (triton.testing.do_bench)."""
    if DEV == "cpu":  # rehearsal: the interpreter's times mean nothing
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e6
    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median") * 1000.0


def sync() -> None:
    if DEV == "cuda":
        torch.cuda.synchronize()


def close(a, b, rtol, atol) -> bool:
    try:
        return bool(torch.allclose(a.float(), b.float(), rtol=rtol, atol=atol))
    except Exception:  # noqa: BLE001
        return False


def picked(mod) -> str | None:
    for v in vars(mod).values():
        best = getattr(v, "best_config", None)
        if best is not None and hasattr(v, "configs"):
            kw = " ".join(f"{k}={x}" for k, x in best.kwargs.items())
            return f"{kw} w{best.num_warps} s{best.num_stages}"
    return None


def sweep(space_dir: str, inputs: list, ref, rtol, atol) -> list[dict]:
    index = json.load(open(os.path.join(space_dir, "index.json")))
    mods = {}

    def warm(entry):
        # Compiling is most of a config's cost; Triton's compiler runs outside the GIL for the most part.
        try:
            m = load(os.path.join(space_dir, entry["file"]), "sweep_" + entry["file"][:-3])
            model = m.Model()
            with torch.no_grad():
                out = model(*inputs)
            return entry["file"], (m, model, out, None)
        except Exception as e:  # noqa: BLE001  (a config that does not compile is a result)
            return entry["file"], (None, None, None, f"{type(e).__name__}: {str(e)[:120]}")

    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        for f, r in pool.map(warm, index):
            mods[f] = r
    sync()
    rows = []
    for entry in index:
        m, model, out, err = mods[entry["file"]]
        row = {"config": entry["config"], "start": entry["start"]}
        if err is not None:
            row["error"] = err
        elif not close(out, ref, rtol, atol):
            row["error"] = "incorrect"
        else:
            with torch.no_grad():
                row["us"] = bench(lambda model=model: model(*inputs))
        rows.append(row)
    return rows


def run_kernel(name: str) -> dict:
    r: dict = {"kernel": name}
    spec = read_spec(os.path.join(SUITE, f"{name}.yaml"))
    variant = spec[FAMILY][0]
    rtol, atol = float(variant.get("rtol", 1e-2)), float(variant.get("atol", 1e-2))
    work = os.path.join(WORK, name)
    os.makedirs(work, exist_ok=True)
    shutil.copyfile(os.path.join(SUITE, f"{name}.py"), os.path.join(work, f"{name}.py"))
    shutil.copyfile(os.path.join(SUITE, f"{name}.py"), os.path.join(work, "naive.py"))
    with open(os.path.join(work, f"{name}.yaml"), "w") as f:
        json.dump(spec, f)  # JSON is YAML: the harness reads it with or without PyYAML

    # 1. The stage, at default settings but for the budget (see run_autotune_gpu.sh).
    cmd = [BIN, "stage", "autotune", os.path.join(work, f"{name}.py"), "--device", DEV, "--family", FAMILY, "--format", "json", "--apply"]
    if BUDGET != "0":
        cmd += ["--budget", BUDGET]
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    r["stage_s"] = round(time.monotonic() - t, 1)
    with open(os.path.join(OUT, "stage.log"), "a") as f:
        f.write(f"==== {name} (exit {p.returncode}, {r['stage_s']} s)\n{p.stderr[-4000:]}\n{p.stdout[-4000:]}\n")
    try:
        res = json.loads(p.stdout)
        r["outcome"] = res.get("status", "?")
        r["changed"] = bool(res.get("changed"))
        r["harness_speedup"] = res.get("speedup")
        # Configs judged one by one: not the checks of the starting config, the screen or a re-check.
        r["measured"] = sum(1 for x in res.get("rounds", []) if x.get("verdict") and "(config " in (x.get("detail") or ""))
        # Each round in brief (what was judged, its verdict and time, the stage's notes on it).
        r["rounds"] = [
            {k: x.get(k) for k in ("detail", "verdict", "speedup", "seconds", "notes", "harness_s")} for x in res.get("rounds", [])
        ]
    except ValueError:
        r["outcome"] = f"failed (exit {p.returncode})"
        r["changed"] = False
    # 2. Its space, from the original file and the same spec (its dtypes size the GEMM tiles that fit).
    space_dir = os.path.join(work, "space")
    subprocess.run(
        [
            BIN,
            "stage",
            "autotune",
            os.path.join(work, "naive.py"),
            "--device",
            "cuda",
            "--spec",
            os.path.join(work, f"{name}.yaml"),
            "--emit-space",
            space_dir,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )

    # 3. Everything timed here, on the same inputs.
    inputs = make_inputs(spec, variant)
    naive = load(os.path.join(work, "naive.py"), f"naive_{name}").Model()
    with torch.no_grad():
        ref = naive(*inputs)
        r["naive_us"] = bench(lambda: naive(*inputs))
        tuned_mod = load(os.path.join(work, f"{name}.py"), f"tuned_{name}")
        tuned = tuned_mod.Model()
        tuned(*inputs)  # the autotuner's search happens here, never in the timed calls
        sync()
        r["autotuner_pick"] = picked(tuned_mod)
        r["stage_correct"] = close(tuned(*inputs), ref, rtol, atol)
        r["stage_us"] = bench(lambda: tuned(*inputs))
        eq = EQUIVALENTS[name]
        try:
            r["torch_us"] = bench(lambda: eq(*inputs))
        except Exception as e:  # noqa: BLE001
            r["torch_error"] = str(e)[:120]
    if os.path.exists(os.path.join(space_dir, "index.json")):
        rows = sweep(space_dir, inputs, ref, rtol, atol)
        ok = [x for x in rows if "us" in x]
        r["space"] = len(rows)
        r["sweep"] = rows
        if ok:
            best = min(ok, key=lambda x: x["us"])
            r["sweep_best_us"], r["sweep_best"] = best["us"], best["config"]
    return r


def main() -> int:
    device = f"{torch.cuda.get_device_name(0) if DEV == 'cuda' else 'CPU interpreter (rehearsal)'}; torch {torch.__version__}; triton {triton.__version__}"
    names = os.environ.get("KERNELS", "").split() or ORDER
    results, skipped = [], []
    for i, name in enumerate(names):
        left = DEADLINE - (time.monotonic() - T0)
        per = (time.monotonic() - T0) / i if i else 30.0
        if left < per:
            skipped = names[i:]
            log(f"deadline: {len(skipped)} kernels not run")
            break
        log(f"{name} ({left:.0f} s left)")
        try:
            r = run_kernel(name)
        except Exception as e:  # noqa: BLE001  (one kernel's failure is a row, not the end of the run)
            r = {"kernel": name, "outcome": f"failed ({type(e).__name__}: {str(e)[:80]})", "stage_s": 0, "naive_us": float("nan")}
        results.append(r)
        if DEV == "cuda":
            torch.cuda.empty_cache()
        log(f"{name}: {r.get('outcome')} stage {r.get('stage_us')} naive {r.get('naive_us')} sweep {r.get('sweep_best_us')}")
        with open(os.path.join(OUT, "results.json"), "w") as f:
            json.dump({"device": device, "budget": BUDGET, "results": results, "skipped": skipped}, f, indent=1)
        with open(os.path.join(OUT, "autotune_general_h200.md"), "w") as f:
            f.write(table(results, names[i + 1 :] if i + 1 < len(names) else [], device))
    with open(os.path.join(OUT, "autotune_general_h200.md"), "w") as f:
        f.write(table(results, skipped, device))
    print(open(os.path.join(OUT, "autotune_general_h200.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
