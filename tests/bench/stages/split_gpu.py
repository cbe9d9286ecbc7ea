"""The autotune stage's wall time with compile and correctness running beside timing, on one GPU.

    XEFORGE_BIN=target/gpu/xeforge python3 tests/bench/stages/split_gpu.py OUT_DIR KERNEL [KERNEL ...]

For each kernel of tests/bench/stages/general, the stage runs twice in fresh workspaces, once with
`--jobs-per-device 1` (one job at a time: today's default) and once with 2 (a second job compiles and
checks its candidate while the first is timed; the device's gate still lets one timed comparison run at
a time), in alternating order from kernel to kernel so that drift hits both. Everything else is the
stage's default but `--budget` (STAGE_BUDGET, default 15, as run_autotune_gpu.sh). Writes OUT_DIR/split.md
(the table) and OUT_DIR/split.json (every figure, with each round's verdict and time).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = Path(__file__).resolve().parent / "general"
BIN = os.environ.get("XEFORGE_BIN", "xeforge")
BUDGET = os.environ.get("STAGE_BUDGET", "15")
FAMILY = os.environ.get("FAMILY", "bench-gpu")
DEVICE = os.environ.get("DEVICE", "cuda")


def stage(kernel: str, jobs: int, log) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"split-{kernel}-{jobs}-"))
    (work / "pyproject.toml").write_text('[project]\nname = "split-bench"\n')
    shutil.copyfile(SUITE / f"{kernel}.py", work / f"{kernel}.py")
    shutil.copyfile(SUITE / f"{kernel}.yaml", work / f"{kernel}.yaml")
    cmd = [BIN, "stage", "autotune", str(work / f"{kernel}.py"), "--device", DEVICE, "--family", FAMILY]
    cmd += ["--format", "json", "--jobs-per-device", str(jobs)] + (["--budget", BUDGET] if BUDGET != "0" else [])
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=400, cwd=work)
    row: dict = {"kernel": kernel, "jobs": jobs, "wall_s": round(time.monotonic() - t, 1), "exit": p.returncode}
    log.write(f"==== {kernel} P={jobs} (exit {p.returncode}, {row['wall_s']} s)\n{p.stderr[-3000:]}\n{p.stdout[-6000:]}\n")
    log.flush()
    try:
        res = json.loads(p.stdout)
    except ValueError:
        row["status"] = f"failed (exit {p.returncode})"
        return row
    rounds = res.get("rounds", [])
    row.update(
        status=res.get("status"),
        speedup=res.get("speedup"),
        measured=sum(1 for r in rounds if r.get("verdict")),
        verdicts=[r.get("verdict") for r in rounds],
        rounds=[{k: r.get(k) for k in ("detail", "verdict", "speedup", "seconds")} for r in rounds],
    )
    return row


def main() -> int:
    out = Path(sys.argv[1])
    kernels = sys.argv[2:]
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with open(out / "split.log", "w") as log:
        for i, kernel in enumerate(kernels):
            for jobs in (1, 2) if i % 2 == 0 else (2, 1):
                row = stage(kernel, jobs, log)
                print(json.dumps({k: v for k, v in row.items() if k != "rounds"}), flush=True)
                rows.append(row)
                (out / "split.json").write_text(json.dumps(rows, indent=1))
    lines = [
        f"# Autotune stage, one job per device against two (`--jobs-per-device`), {DEVICE}",
        "",
        f"`XEFORGE_BIN=... python3 tests/bench/stages/split_gpu.py OUT {' '.join(kernels)}`; `--budget {BUDGET}`, "
        f"`--family {FAMILY}`, fresh workspace per run, order alternating by kernel.",
        "",
        "| kernel | P=1 wall s | P=2 wall s | ratio | P=1 outcome (speedup, measured) | P=2 outcome (speedup, measured) |",
        "|---|---:|---:|---:|---|---|",
    ]
    ratios = []
    for kernel in kernels:
        by = {r["jobs"]: r for r in rows if r["kernel"] == kernel}
        one, two = by.get(1, {}), by.get(2, {})
        ratio = two["wall_s"] / one["wall_s"] if one.get("wall_s") and two.get("wall_s") else None
        if ratio:
            ratios.append(ratio)

        def cell(r: dict) -> str:
            return f"{r.get('status')} ({r.get('speedup')}, {r.get('measured')})" if r else "—"

        lines.append(
            f"| {kernel} | {one.get('wall_s', '—')} | {two.get('wall_s', '—')} | "
            f"{f'{ratio:.2f}' if ratio else '—'} | {cell(one)} | {cell(two)} |"
        )
    if ratios:
        lines += ["", f"Median P=2 / P=1 wall time: {statistics.median(ratios):.2f}."]
    (out / "split.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
