"""GPU timing of baseline vs candidate, after AI Bench's XPU method, on xpu and cuda alike.

Per timed call: zero a 256 MiB buffer (flushes L2), enqueue an untimed 1024x1024 matmul (keeps the
device busy so the start event is recorded before the kernel starts, not after a host round-trip),
record start, call, record end. Baseline (A) and candidate (B) are interleaved in pairs whose order
alternates (A B, B A, ...), so drift in clocks or temperature hits both alike and a systematic
first/second-position effect cancels. The speedup is the median of the per-pair ratios A/B; its 95%
interval comes from order statistics (`stats.median_ci`), with no resampling.

That interval covers run-to-run noise only. Two builds of the *same* kernel can still differ by a few
tenths of a percent for reasons no repetition removes (code and buffer placement: measured 0.08% for
a 2048³ matmul on an H200, with an interval of ±0.03%). So the reported interval is widened by
RESOLUTION on each side, and `speedup_ci95_raw` keeps the unwidened one. Verdicts use the widened one.
"""

from __future__ import annotations

from typing import Callable

import torch

from ..stats import median, median_ci
from .device import torch_device

FLUSH_BYTES = 256 * 1024 * 1024
FASTER = 1.02  # the interval's lower end must clear this for "faster"
RESOLUTION = 0.005  # systematic floor: ratios within ±0.5% of each other are not told apart


def measure(baseline: Callable[[], object], candidate: Callable[[], object], kind: str, runs: int, warmup: int) -> dict:
    api = getattr(torch, kind)
    dev = torch_device(kind)
    flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device=dev)
    fa = torch.randn(1024, 1024, device=dev)
    fb = torch.randn(1024, 1024, device=dev)

    with torch.no_grad():
        for _ in range(warmup):
            baseline()
            candidate()
        api.synchronize()

        events = [(api.Event(enable_timing=True), api.Event(enable_timing=True)) for _ in range(2 * runs)]
        slots: list[tuple[str, int]] = []
        for i in range(runs):
            order = ("A", "B") if i % 2 == 0 else ("B", "A")
            for which in order:
                fn = baseline if which == "A" else candidate
                start, end = events[len(slots)]
                flush.zero_()
                torch.mm(fa, fb)
                start.record()
                fn()
                end.record()
                slots.append((which, i))
        api.synchronize()

    base = [0.0] * runs
    cand = [0.0] * runs
    for (which, i), (start, end) in zip(slots, events):
        us = start.elapsed_time(end) * 1000.0
        (base if which == "A" else cand)[i] = us
    ratios = [b / c for b, c in zip(base, cand) if c > 0]
    raw_lo, raw_hi = median_ci(ratios)
    lo, hi = raw_lo / (1 + RESOLUTION), raw_hi * (1 + RESOLUTION)
    return {
        "meaningful": True,
        "baseline_us": round(median(base), 3),
        "candidate_us": round(median(cand), 3),
        "speedup": round(median(ratios), 4),
        "speedup_ci95": [round(lo, 4), round(hi, 4)],
        "speedup_ci95_raw": [round(raw_lo, 4), round(raw_hi, 4)],
        "runs": runs,
        "warmup": warmup,
        "method": "device events, 256 MiB L2 flush and queue filler per call, A/B pairs in alternating order, median ratio with order-statistic 95% interval widened by a 0.5% resolution floor",
    }


def not_meaningful(reason: str) -> dict:
    return {"meaningful": False, "reason": reason}


def classify(timing: dict) -> str:
    """'faster', 'slower' or 'same' from the ratio interval (symmetric margins around 1)."""
    lo, hi = timing["speedup_ci95"]
    if lo > FASTER:
        return "faster"
    if hi < 1 / FASTER:
        return "slower"
    return "same"
