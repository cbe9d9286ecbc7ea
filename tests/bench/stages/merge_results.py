"""One table from several runs of `run_autotune_gpu.sh` (a suite split over device calls).

    python3 tests/bench/stages/merge_results.py OUT.md results-a.json results-b.json ...

A kernel measured in several runs keeps its row from the last file that has it; each row is marked with
the run it came from (¹ the first file, ² the second, ...), and the files are listed under the table."""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_table import table  # noqa: E402

SIGNS = "¹²³⁴⁵⁶⁷⁸⁹"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, files = argv[0], argv[1:]
    rows: dict[str, dict] = {}
    marks: dict[str, str] = {}
    devices, budgets = [], []
    for n, path in enumerate(files):
        with open(path, encoding="utf-8") as f:
            run = json.load(f)
        devices.append(run.get("device", "?"))
        budgets.append(str(run.get("budget", "15")))
        for r in run["results"]:
            rows[r["kernel"]] = r
            marks[r["kernel"]] = SIGNS[n % len(SIGNS)]
    if len(set(budgets)) > 1:
        print(f"warning: the runs used different budgets: {budgets}", file=sys.stderr)
    text = table(list(rows.values()), [], devices[-1], dev="cuda", family="bench-gpu", budget=budgets[-1], marks=marks)
    text += "\nRuns: " + "; ".join(f"{SIGNS[n % len(SIGNS)]} `{os.path.basename(p)}`" for n, p in enumerate(files)) + "\n"
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
