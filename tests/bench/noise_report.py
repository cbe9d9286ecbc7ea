"""Where a timed comparison's noise comes from, from noise_bench.sh's raw records and clock log.

    python3 tests/bench/noise_report.py RAW.jsonl [CLOCKS.csv]

For every timed record that carries `diag` (XEFORGE_HARNESS_DIAG=1): per side, the median and spread
(interquartile range over the median) of the judge's per-call time, of the worker's own launch-issue
time and device time of its calls (per call), and of the digest; whether the batch was bound by issuing
launches (issue time within 10% of the device time of the calls) or by the device; and how far the two
sides of a pair move together (correlation of per-pair times). With the clock log: the SM and memory
clocks seen during each record's pairs (min / median / max MHz). A second table splits each side's
batch time (median ± standard deviation) into the device span of its calls and the rest, beside the
launch-issue time and its correlation with the judge's time.
"""

from __future__ import annotations

import csv
import json
import statistics
import sys


def spread(xs: list[float]) -> str:
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return "—"
    q = statistics.quantiles(xs, n=4) if len(xs) > 3 else [xs[0], statistics.median(xs), xs[-1]]
    med = statistics.median(xs)
    return f"{med:.1f} (IQR {100 * (q[2] - q[0]) / med:.0f}%)" if med else "0"


def corr(a: list[float], b: list[float]) -> float | None:
    if len(a) < 3:
        return None
    try:
        return statistics.correlation(a, b)
    except statistics.StatisticsError:
        return None


def clocks(path: str) -> list[tuple[float, int, int]]:
    import datetime

    out = []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            try:
                t = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
                out.append((t.timestamp(), int(row[1].split()[0]), int(row[2].split()[0])))
            except (ValueError, IndexError):
                continue
    return out


def main() -> int:
    records = [json.loads(line) for line in open(sys.argv[1])]
    clk = clocks(sys.argv[2]) if len(sys.argv) > 2 else []
    print(
        "| side | problem | verdict | width | judge µs/call A · B | issue µs/call A · B | device µs/call A · B | "
        "digest µs/batch A · B | bound by (A · B) | corr A,B | SM MHz min/med/max | mem MHz |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in records:
        t = r.get("timing") or {}
        lo, hi = (t.get("speedup_ci95") or [None, None])[:2]
        width = f"{hi - lo:.4f}" if lo is not None else "—"
        samples = t.get("samples_us") or {}
        a, b = samples.get("original") or [], samples.get("candidate") or []
        d = t.get("diag") or {}
        batch = t.get("batch") or 1
        cells = []
        bound = []
        for key in ("issue_us", "calls_gpu_us", "digest_us"):
            per = 1 if key == "digest_us" else batch
            cells.append(
                " · ".join(spread([x[key] / per for x in d.get(side, []) if x and key in x]) for side in ("original", "candidate"))
            )
        for side in ("original", "candidate"):
            xs = [x for x in d.get(side, []) if x and "calls_gpu_us" in x]
            issue_bound = sum(1 for x in xs if x["issue_us"] >= 0.9 * x["calls_gpu_us"])
            bound.append(f"issue {issue_bound}/{len(xs)}" if xs else "—")
        c = corr(a, b)
        sm = mem = "—"
        ts = d.get("t") or []
        if clk and ts:
            seen = [(s, m) for (when, s, m) in clk if ts[0] - 0.5 <= when <= ts[-1] + 0.5]
            if seen:
                s_ = sorted(x for x, _ in seen)
                m_ = sorted(y for _, y in seen)
                sm = f"{s_[0]}/{statistics.median(s_):.0f}/{s_[-1]}"
                mem = f"{m_[0]}/{statistics.median(m_):.0f}/{m_[-1]}"
        print(
            f"| {r['side']} | {r['problem']} | {r.get('verdict')} | {width} | {spread(a)} · {spread(b)} | "
            + " | ".join(cells)
            + f" | {' · '.join(bound)} | {'—' if c is None else f'{c:.2f}'} | {sm} | {mem} |"
        )
    print()
    print(
        "| side | problem | worker | batch µs (judge) | device span of the calls | judge − span | launch issue | "
        "corr(judge, issue) | judge − issue − digest |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in records:
        t = r.get("timing") or {}
        d, b = t.get("diag"), t.get("batches_us")
        if not d or not b:
            continue
        for side in ("original", "candidate"):
            pairs = [(j, x) for j, x in zip(b[side], d[side]) if x and "calls_gpu_us" in x][1:]  # the first is cold
            if len(pairs) < 3:
                continue
            judge = [j for j, _ in pairs]
            span = [x["calls_gpu_us"] for _, x in pairs]
            issue = [x["issue_us"] for _, x in pairs]
            rest = [j - s for j, s in zip(judge, span)]
            # What the worker's own account leaves out: the request's trip, the wake-up, the handler.
            own = [j - x["issue_us"] - x["digest_us"] for j, (_, x) in zip(judge, pairs) if "digest_us" in x]

            def ms(v: list[float]) -> str:
                return f"{statistics.median(v):.0f} ± {statistics.pstdev(v):.0f}"

            c = corr(judge, issue)
            print(
                f"| {r['side']} | {r['problem']} | {side} | {ms(judge)} | {ms(span)} | {ms(rest)} | {ms(issue)} | "
                f"{'—' if c is None else f'{c:.2f}'} | {ms(own) if own else '—'} |"
            )
    print()
    print(order_table(records))
    return 0


def order_table(records: list[dict]) -> str:
    """Does the side timed second lose? Pairs alternate AB (original first) and BA; per record, the
    median over pairs of candidate ÷ original, for the judge's batch time and for launch issue, split
    by order. Equal sides give 1.0 in both columns; a lean that follows the order does not cancel."""
    rows = [
        "| side | round | problem | speedup | judge time C/O: AB · BA | launch issue C/O: AB · BA |",
        "|---|---|---|---|---|---|",
    ]
    for r in records:
        t = r.get("timing") or {}
        d, b = t.get("diag") or {}, t.get("batches_us") or {}
        o, c = d.get("original") or [], d.get("candidate") or []
        bo, bc = b.get("original") or [], b.get("candidate") or []
        if not o or not c or not bo or not bc:
            continue

        def med(xs: list[float]) -> str:
            return f"{statistics.median(xs):.3f}" if xs else "—"

        n = min(len(bo), len(bc), len(o), len(c))
        judge = [bc[i] / bo[i] for i in range(n)]
        issue = [c[i]["issue_us"] / o[i]["issue_us"] if o[i] and c[i] and o[i].get("issue_us") else None for i in range(n)]
        cells = []
        for ratios in (judge, issue):
            # even pairs: the original first (AB); odd: the candidate first (BA)
            split = [med([x for x in ratios[first::2] if x is not None]) for first in (0, 1)]
            cells.append(" · ".join(split))
        speedup = t.get("speedup")
        rows.append(
            f"| {r['side']} | {r.get('round', '—')} | {r['problem']} | {'—' if speedup is None else f'{speedup:.3f}'} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
