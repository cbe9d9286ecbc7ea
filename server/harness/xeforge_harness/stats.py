"""Distribution-free statistics for paired timing samples (pure Python, no torch)."""

from __future__ import annotations

import math


def median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of no samples")
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2


def median_ci(xs: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """Confidence interval for the median from order statistics.

    For n samples the rank interval [k, n-k+1] covers the true median with probability
    1 - 2·P(Binomial(n, 1/2) < k); k is the largest rank keeping that at or above `confidence`.
    No resampling, so the same samples always give the same interval.
    """
    s = sorted(xs)
    n = len(s)
    if n < 6:
        raise ValueError("at least 6 samples are needed for a 95% order-statistic interval")
    alpha = (1 - confidence) / 2
    k = 0
    tail = 0.0  # P(B < k+1)
    for j in range(n):
        tail += math.comb(n, j) / 2**n
        if tail > alpha:
            break
        k = j + 1
    k = max(k, 1)
    return s[k - 1], s[n - k]
