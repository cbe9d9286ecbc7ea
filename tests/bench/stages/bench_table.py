"""The generalisation suite's table and goals, from `general_bench.py`'s rows (one definition, used by the
driver after each kernel and by `merge_results.py` for runs split over several device calls)."""

from __future__ import annotations

import statistics

GEMMS = {
    "gemm_grouped_fp16",
    "gemm_bf16_2d",
    "gemm_nt_helper",
    "bmm_fp16",
    "linear_bias_relu",
    "gemm_fp32_floordiv",
    "gemm_splitk",
    "gemm_unmasked_fp16",
    "conv2d_implicit_gemm",
}


def judged_incorrect(r: dict) -> set[str]:
    """Configs the stage's own rounds judged `incorrect` (on its check family: sizes the sweep does not run).

    A round's detail starts with the config as the sweep names it: `BLOCK_N=1024 w4 s3 (config 2 of 15, ...)`.
    """
    return {x["detail"].split(" (")[0] for x in r.get("rounds") or [] if x.get("verdict") == "incorrect" and x.get("detail")}


def best_correct(r: dict) -> tuple[float | None, str | None]:
    """The sweep's fastest config among those the stage did not judge incorrect. The sweep checks each
    config on the timed inputs only; a config that is wrong on other sizes is not a result the stage
    could have given."""
    wrong = judged_incorrect(r)
    ok = [x for x in r.get("sweep") or [] if "us" in x and x["config"] not in wrong]
    if not ok:
        return None, None
    best = min(ok, key=lambda x: x["us"])
    return best["us"], best["config"]


def fmt(x, spec="{:.1f}"):
    return "–" if x is None or x != x else spec.format(x)


def table(
    results: list[dict], skipped: list[str], device: str, *, dev: str, family: str, budget: str, marks: dict[str, str] | None = None
) -> str:
    """Markdown table plus the goal lines. `marks`: a footnote sign per kernel (which call measured it)."""
    marks = marks or {}
    lines = [
        f"# Autotune stage on {len(results) + len(skipped)} naive kernels: {device}",
        "",
        f"`xeforge stage autotune FILE --device {dev} --family {family} --format json --apply`"
        + (f" `--budget {budget}`" if budget != "0" else "")
        + ", every other setting default.",
        "Times: median µs of `triton.testing.do_bench` in one process (naive file, the stage's file after its autotuner's",
        "warm-up, every config of the stage's pruned space, the PyTorch equivalent: cuBLAS/cuDNN/ATen).",
        "vs sweep = stage µs ÷ the sweep's best µs (≤ 1.05 is the goal); vs correct = the same against the sweep's",
        "best config that the stage's rounds did not judge incorrect on its check family (– where that is the",
        "sweep's best: the sweep checks outputs on the timed sizes only); vs torch = stage µs ÷ torch µs.",
        "",
        "| kernel | outcome | stage s | configs measured/space | naive µs | stage µs | speedup | sweep best µs (config) | vs sweep | vs correct | torch µs | vs torch | autotuner pick |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        stage_us = r.get("stage_us")
        sp = r["naive_us"] / stage_us if stage_us else None
        vs = stage_us / r["sweep_best_us"] if stage_us and r.get("sweep_best_us") else None
        vt = stage_us / r["torch_us"] if stage_us and r.get("torch_us") else None
        ok_us, ok_config = best_correct(r)
        vc = stage_us / ok_us if stage_us and ok_us and ok_config != r.get("sweep_best") else None
        outcome = r["outcome"] + ("" if r.get("stage_correct", True) else " **(output differs)**")
        lines.append(
            f"| {r['kernel']}{marks.get(r['kernel'], '')} | {outcome} | {r['stage_s']} | {r.get('measured', '–')}/{r.get('space', '–')} | "
            f"{fmt(r['naive_us'])} | {fmt(stage_us)} | {fmt(sp, '{:.2f}×')} | {fmt(r.get('sweep_best_us'))} ({r.get('sweep_best', '–')}) | "
            f"{fmt(vs, '{:.3f}')} | {fmt(vc, '{:.3f}') if vc else '–'} | {fmt(r.get('torch_us'))} | {fmt(vt, '{:.2f}')} | {r.get('autotuner_pick') or '–'} |"
        )
    done = [r for r in results if "stage_us" in r]
    within = [r for r in done if r.get("sweep_best_us") and r["stage_us"] <= 1.05 * r["sweep_best_us"]]
    within_ok = [r for r in done if (ok_us := best_correct(r)[0]) and r["stage_us"] <= 1.05 * ok_us]
    slower = [r["kernel"] for r in done if r["stage_us"] > 1.03 * r["naive_us"]]
    refused = [r["kernel"] for r in results if r["outcome"].startswith("failed")]
    gemm = [r for r in done if r["kernel"] in GEMMS and r.get("torch_us")]
    gemm_ok = [r for r in gemm if r["stage_us"] <= 1.10 * r["torch_us"]]
    med = statistics.median([r["stage_s"] for r in results]) if results else None
    lines += [
        "",
        "Goals:",
        f"- every kernel gets an outcome: {len(results) - len(refused)}/{len(results)} (failed: {', '.join(refused) or 'none'})"
        + (f"; not run within the deadline: {', '.join(skipped)}" if skipped else ""),
        f"- stage within 5% of the sweep's best: {len(within)}/{len(done)} (goal ≥ 90%); of the best config not judged "
        f"incorrect by the stage: {len(within_ok)}/{len(done)}",
        f"- no kernel slower than it started (3% noise allowance): {'yes' if not slower else 'no: ' + ', '.join(slower)}",
        f"- median stage time: {fmt(med)} s (goal ≤ 60 s)",
        f"- GEMMs within 10% of cuBLAS/cuDNN: {len(gemm_ok)}/{len(gemm)}",
    ]
    return "\n".join(lines) + "\n"
