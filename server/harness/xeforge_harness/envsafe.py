"""The environment a candidate runs in: no credentials, no proxies, its own Triton cache."""

from __future__ import annotations

import re

# Names that look like credentials. Matching by pattern (not by a fixed list) also removes keys the
# harness has never heard of, e.g. MYCORP_LLM_TOKEN; a false positive only costs a candidate an
# environment variable it should not be reading anyway.
_SECRET = re.compile(r"(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION)", re.IGNORECASE)
_PROXY = re.compile(r"^(https?|ftp|all|no|socks5?)_proxy$", re.IGNORECASE)
# A Ray worker's own variables (the cluster's address, its session, its auth token's path): a candidate
# run by a Ray lane gets no ready-made handle on the cluster (docs/harness-threat-model.md, Ray).
_CLUSTER = re.compile(r"^RAY_")
# Variables the harness sets itself for each candidate; an inherited value must not leak in.
_OWNED = {"TRITON_CACHE_DIR", "TRITON_INTERPRET", "TRITON_DUMP_DIR", "TRITON_OVERRIDE_DIR", "TRITON_ALWAYS_COMPILE"}


def is_removed(name: str) -> bool:
    return bool(_SECRET.search(name) or _PROXY.match(name) or _CLUSTER.match(name) or name in _OWNED)


def sanitized(environ: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if not is_removed(k)}


def protect_process() -> None:
    """Make this process non-dumpable: another process of the same user (a candidate) can then no
    longer ptrace it or open its /proc/PID/mem and /proc/PID/fd entries. Root is not stopped by this."""
    try:
        import ctypes

        PR_SET_DUMPABLE = 4
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: nothing to do
        pass
