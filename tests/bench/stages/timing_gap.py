"""Why the harness and `triton.testing.do_bench` disagree on a kernel's fastest config.

On an H100 (call 2026-12-05j3) the harness judged rotary's BLOCK_H=64 w16 config 0.81x the original
and split-K's best config 0.90x, where do_bench in the benchmark's own process put them 1.08x and
1.24x faster; the harness's per-call times were also 9-29 us above do_bench's for both sides. This
script measures one kernel's original against the do_bench-best config of its pruned space several ways,
in one call:

1. do_bench, L2 flushed before every call (the benchmark's measure: device time of one call);
2. back to back in this process on distinct input sets, as the harness times a batch: per-call wall
   time with the device synchronised at the end only, and the CPU time of issuing the calls alone
   (a per-call issue time near the wall time means the launch path, not the device, sets the pace);
3. the harness (`python -m xeforge_harness evaluate`, timing on the same family) under each setting
   (`pair` placement, the default; `free`: placement left to the OS; `touch`: pair placement and
   XEFORGE_HARNESS_TOUCH=both, built against the harness's lean towards the original), with
   XEFORGE_HARNESS_DIAG=1: per side, the issue time and the device time of
   each batch's calls by the worker's own clocks, beside the judge's per-call times.

    python3 timing_gap.py OUT_DIR [KERNEL ...]   (default: rotary gemm_splitk vector_add)

Environment: XEFORGE_BIN (for `--emit-space`), FAMILY (default bench-gpu), RUNS (harness pairs,
default 20), DRY_RUN_CPU=1 with FAMILY=ci (a rehearsal on the CPU interpreter: every path runs, no
time means anything). Writes OUT_DIR/timing_gap.md and OUT_DIR/timing_gap.json.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

DEV = "cpu" if os.environ.get("DRY_RUN_CPU") == "1" else "cuda"
if DEV == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported

import torch  # noqa: E402
import triton  # noqa: E402
import triton.testing  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
import suite  # noqa: E402

SUITE = os.path.join(HERE, "general")
BIN = os.environ.get("XEFORGE_BIN", os.path.join(REPO, "target", "release", "xeforge"))
FAMILY = os.environ.get("FAMILY", "bench-gpu")
RUNS = os.environ.get("RUNS", "20")
SETTINGS = [("pair", {}), ("free", {"XEFORGE_HARNESS_PIN": "0"}), ("touch", {"XEFORGE_HARNESS_TOUCH": "both"})]
SETS_BYTES = 4 << 30  # the distinct input sets of a back-to-back batch, at most this much memory


def log(msg: str) -> None:
    print(msg, flush=True)


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Model()


def sync() -> None:
    if DEV == "cuda":
        torch.cuda.synchronize()


def do_bench(fn) -> float:
    if DEV == "cpu":
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e6
    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median") * 1000.0


def back_to_back(model, sets: list[list], rounds: int = 5) -> dict:
    """Per-call wall time of every set called in turn, the device synchronised at the end only, and the
    CPU time of issuing the calls (median over rounds)."""
    walls, issues = [], []
    with torch.no_grad():
        for s in sets:  # warm: compiles and any autotuner search happen here
            model(*s)
        sync()
        for _ in range(rounds):
            t0 = time.perf_counter()
            for s in sets:
                model(*s)
            t1 = time.perf_counter()
            sync()
            t2 = time.perf_counter()
            walls.append((t2 - t0) * 1e6 / len(sets))
            issues.append((t1 - t0) * 1e6 / len(sets))
    return {"wall_us": statistics.median(walls), "issue_us": statistics.median(issues), "sets": len(sets)}


def harness(naive: str, cand: str, spec: str, env_extra: dict) -> dict:
    env = dict(os.environ)
    env.update({"XEFORGE_HARNESS_DIAG": "1", "XEFORGE_HARNESS_SANDBOX_UID": "off", "PYTHONPATH": os.path.join(REPO, "server", "harness")})
    env.update(env_extra)
    cmd = [sys.executable, "-m", "xeforge_harness", "evaluate", "--kernel", naive, "--candidate", cand, "--spec", spec]
    cmd += ["--device", DEV, "--family", FAMILY, "--runs", RUNS]
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    took = time.monotonic() - t
    try:
        res = json.loads(p.stdout)
    except ValueError:
        return {"error": f"exit {p.returncode}: {p.stderr[-300:]}", "seconds": took}
    timing = res.get("timing") or {}
    out = {
        "verdict": res.get("verdict"),
        "speedup": timing.get("speedup"),
        "ci95": timing.get("speedup_ci95"),
        "baseline_us": timing.get("baseline_us"),
        "candidate_us": timing.get("candidate_us"),
        "batch": timing.get("batch"),
        "cpus": timing.get("cpus"),
        # what the judge took off or added: the request's own cost, the candidate's input-making charge
        "gross_us": timing.get("gross_us"),
        "request_overhead_us": timing.get("request_overhead_us"),
        "prepare_charged_us": timing.get("prepare_charged_us"),
        "reason": timing.get("reason") or res.get("error"),
        "seconds": round(took, 1),
    }
    diag, batch = timing.get("diag") or {}, timing.get("batch") or 1
    for side in ("original", "candidate"):
        rows = [d for d in diag.get(side) or [] if d]
        if rows:
            out[side] = {
                k: round(statistics.median(d[k] for d in rows if k in d) / batch, 2)
                for k in ("issue_us", "calls_gpu_us", "digest_us")
                if any(k in d for d in rows)
            }
    return out


def naive_copy(name: str, work: str) -> tuple[dict, dict, float, float, str]:
    """A suite kernel copied into `work` as naive.py, its spec beside it as naive.yaml (the spec the
    stage and `--emit-space` read): the spec, the timed family's first variant, that variant's
    tolerances and the copy's path."""
    spec = suite.read_spec(os.path.join(SUITE, f"{name}.yaml"))
    variant = spec[FAMILY][0]
    rtol, atol = float(variant.get("rtol", 1e-2)), float(variant.get("atol", 1e-2))
    os.makedirs(work, exist_ok=True)
    naive = os.path.join(work, "naive.py")
    shutil.copyfile(os.path.join(SUITE, f"{name}.py"), naive)
    with open(os.path.join(work, "naive.yaml"), "w") as f:
        json.dump(spec, f)  # JSON is YAML
    return spec, variant, rtol, atol, naive


def run_kernel(name: str, work: str) -> dict:
    r: dict = {"kernel": name}
    spec, variant, rtol, atol, naive = naive_copy(name, work)
    spec_path = os.path.join(work, "naive.yaml")
    space = os.path.join(work, "space")
    p = subprocess.run(
        [BIN, "stage", "autotune", naive, "--device", DEV, "--emit-space", space], capture_output=True, text=True, timeout=120
    )
    index_path = os.path.join(space, "index.json")
    if not os.path.exists(index_path):
        return {**r, "error": f"--emit-space wrote nothing (exit {p.returncode}): {p.stderr[-300:]}"}
    index = json.load(open(index_path))

    inputs = suite.make_inputs(spec, variant, DEV)
    original = load(naive, f"gap_naive_{name}")
    with torch.no_grad():
        ref = original(*inputs)
        timed = []
        for entry in index:
            if entry["start"]:
                continue
            try:
                model = load(os.path.join(space, entry["file"]), f"gap_{name}_{entry['file'][:-3]}")
                out = model(*inputs)
                if not torch.allclose(out.float(), ref.float(), rtol=rtol, atol=atol):
                    continue
                timed.append((do_bench(lambda m=model: m(*inputs)), entry))
            except Exception:  # noqa: BLE001  (a config that fails is not the one looked at)
                continue
        if not timed:
            return {**r, "error": "no config of the space is correct"}
        best_us, best = min(timed, key=lambda t: t[0])
        cand_model = load(os.path.join(space, best["file"]), f"gap_{name}_best")
        r["config"] = best["config"]
        r["do_bench"] = {"original_us": do_bench(lambda: original(*inputs)), "candidate_us": best_us}
        per_set = sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor)) + ref.numel() * ref.element_size()
        n_sets = max(2, min(16, SETS_BYTES // max(per_set, 1)))
        sets = [suite.make_inputs(spec, variant, DEV, seed=1 + k) for k in range(n_sets)]
        r["back_to_back"] = {"original": back_to_back(original, sets), "candidate": back_to_back(cand_model, sets)}
        del sets
    if DEV == "cuda":
        torch.cuda.empty_cache()
    r["harness"] = {label: harness(naive, os.path.join(space, best["file"]), spec_path, extra) for label, extra in SETTINGS}
    return r


def ratio(a, b) -> str:
    return f"{a / b:.3f}" if a and b else "–"


def report(results: list[dict], device: str) -> str:
    lines = [
        f"# Harness against do_bench: {device}",
        "",
        "Speedup of the do_bench-best config over the original, measured several ways (µs per call; ratio = original ÷ candidate).",
        "",
        "| kernel | config | do_bench orig · cand · ratio | back-to-back wall orig · cand · ratio | issue per call orig · cand | "
        + " | ".join(f"harness `{label}` speedup [ci] · orig · cand µs" for label, _ in SETTINGS)
        + " |",
        "|---|---|---|---|---|" + "---|" * len(SETTINGS),
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['kernel']} | {r['error'][:120]} |" + " |" * (3 + len(SETTINGS)))
            continue
        d, b = r["do_bench"], r["back_to_back"]
        cells = [
            r["kernel"],
            r["config"],
            f"{d['original_us']:.1f} · {d['candidate_us']:.1f} · {ratio(d['original_us'], d['candidate_us'])}",
            f"{b['original']['wall_us']:.1f} · {b['candidate']['wall_us']:.1f} · {ratio(b['original']['wall_us'], b['candidate']['wall_us'])}",
            f"{b['original']['issue_us']:.1f} · {b['candidate']['issue_us']:.1f}",
        ]
        for label, _ in SETTINGS:
            h = r["harness"][label]
            if "error" in h or h.get("speedup") is None:
                cells.append(f"{h.get('verdict') or ''} {h.get('error', '')[:80]}".strip())
            else:
                ci = h.get("ci95") or [None, None]
                cells.append(f"{h['speedup']:.3f} [{ci[0]}, {ci[1]}] · {h['baseline_us']} · {h['candidate_us']}")
        lines.append("| " + " | ".join(cells) + " |")
    sides, judged = [], []
    for r in results:
        for label, _ in SETTINGS:
            h = (r.get("harness") or {}).get(label) or {}
            for side, judge in (("original", h.get("baseline_us")), ("candidate", h.get("candidate_us"))):
                if s := h.get(side):
                    d = [s.get(k, "–") for k in ("issue_us", "calls_gpu_us", "digest_us")]
                    sides.append(f"| {r['kernel']} | {label} | {side} | {d[0]} | {d[1]} | {d[2]} | {judge} |")
            if g := h.get("gross_us"):
                judged.append(
                    f"| {r['kernel']} | {label} | {h.get('batch')} | {g[0]} · {g[1]} | {h.get('request_overhead_us')} | {h.get('prepare_charged_us')} | {h.get('cpus')} |"
                )
    lines += ["", "Per side, by the worker's own clocks (median per call over the timed batches):", ""]
    lines.append("| kernel | setting | side | issue µs | device µs of the calls | digest µs | judge's per-call µs |")
    lines.append("|---|---|---|---|---|---|---|")
    lines += sides
    lines += ["", "What the judge took off or added (per call, µs; the charge is the candidate's whole input-making excess):", ""]
    lines.append("| kernel | setting | batch | gross orig · cand | request's own cost | input-making charge | cpus |")
    lines.append("|---|---|---|---|---|---|---|")
    lines += judged
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, names = argv[0], argv[1:] or ["rotary", "gemm_splitk", "vector_add"]
    os.makedirs(out, exist_ok=True)
    device = f"{torch.cuda.get_device_name(0) if DEV == 'cuda' else 'CPU interpreter (rehearsal)'}; torch {torch.__version__}; triton {triton.__version__}"
    work = tempfile.mkdtemp(prefix="xeforge-gap-")
    results = []
    for name in names:
        log(f"{name} ...")
        try:
            r = run_kernel(name, os.path.join(work, name))
        except Exception as e:  # noqa: BLE001  (one kernel's failure is a row)
            r = {"kernel": name, "error": f"{type(e).__name__}: {e}"}
        results.append(r)
        log(json.dumps(r, default=str)[:2000])
        with open(os.path.join(out, "timing_gap.json"), "w") as f:
            json.dump({"device": device, "results": results}, f, indent=1, default=str)
        with open(os.path.join(out, "timing_gap.md"), "w") as f:
            f.write(report(results, device))
    print(open(os.path.join(out, "timing_gap.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
