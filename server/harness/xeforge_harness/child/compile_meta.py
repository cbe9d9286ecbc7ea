"""Compile metadata (shared memory, registers, spills) of the Triton kernels a module launched.

Read from each `JITFunction`'s in-process kernel cache after the module ran, so it covers exactly the
specialisations (and, under `triton.autotune`, the configs) that were compiled. Best effort: the cache
layout is Triton-internal and differs between versions, so anything unexpected is skipped.
"""

from __future__ import annotations

from types import ModuleType

from triton.runtime.jit import JITFunction


def _jit_functions(module: ModuleType) -> list[JITFunction]:
    found, seen = [], set()
    for value in list(vars(module).values()):
        fn, depth = value, 0
        while fn is not None and not isinstance(fn, JITFunction) and depth < 8:
            fn, depth = getattr(fn, "fn", None), depth + 1  # Autotuner / Heuristics wrap `.fn`
        if isinstance(fn, JITFunction) and id(fn) not in seen:
            seen.add(id(fn))
            found.append(fn)
    return found


def _constexprs(kernel, fn: JITFunction) -> dict:
    src = getattr(kernel, "src", None)
    consts = getattr(src, "constants", None) or {}
    names = list(getattr(fn, "arg_names", []))
    out = {}
    for key, value in consts.items():
        index = key[0] if isinstance(key, tuple) and key else key
        if isinstance(index, int) and index < len(names) and isinstance(value, (bool, int, float, str)):
            out[names[index]] = value
        elif isinstance(index, str) and isinstance(value, (bool, int, float, str)):
            out[index] = value
    return out


def collect(module: ModuleType) -> list[dict]:
    configs = []
    for fn in _jit_functions(module):
        caches = getattr(fn, "device_caches", None) or {}
        for entry in list(caches.values()):
            kernel_cache = entry[0] if isinstance(entry, tuple) and entry else {}
            for kernel in list(getattr(kernel_cache, "values", lambda: [])()):
                meta = getattr(kernel, "metadata", None)
                config = _constexprs(kernel, fn)
                for opt in ("num_warps", "num_stages", "num_ctas", "grf_mode"):
                    value = getattr(meta, opt, None)
                    if isinstance(value, (int, str)) and value is not None:
                        config[opt] = value
                entry = {
                    "kernel": getattr(fn, "__name__", None) or getattr(kernel, "name", "?"),
                    "config": config,
                    "shared_bytes": getattr(meta, "shared", None),
                    "registers": getattr(kernel, "n_regs", None),
                    "spills": getattr(kernel, "n_spills", None),
                }
                entry.update(_chosen(meta))
                configs.append(entry)
    return configs


def _chosen(meta) -> dict:
    """What the backend chose where the config left it open: the sub-group size (`threads_per_warp`
    on XPU, the warp of 32 on CUDA) and, on XPU, the GRF mode its build flags carry; a large-GRF
    build of a config that did not ask for one is the backend's automatic recompile after spilling."""
    out: dict[str, object] = {}
    tpw = getattr(meta, "threads_per_warp", None) or getattr(meta, "warp_size", None)
    if isinstance(tpw, int):
        out["sub_group_size"] = tpw
    flags = getattr(meta, "build_flags", None)
    if isinstance(flags, str):
        out["build_flags"] = flags
        large = "256-GRF" in flags or "large-register-file" in flags
        asked = str(getattr(meta, "grf_mode", "") or "")
        out["grf_mode_built"] = "256" if large else ("128" if "128-GRF" in flags else "default")
        out["large_grf_recompiled"] = large and asked not in ("256", "large", "512")
    return out


def _config(cfg) -> dict | None:
    kwargs = getattr(cfg, "kwargs", None)
    if not isinstance(kwargs, dict):
        return None
    config = {k: v for k, v in kwargs.items() if isinstance(v, (bool, int, float, str))}
    for opt in ("num_warps", "num_stages"):
        v = getattr(cfg, opt, None)
        if isinstance(v, int):
            config[opt] = v
    return config


def _autotuners(module: ModuleType, table: str):
    """(kernel name, dict) for each `triton.autotune` of the module that has the dict attribute `table`."""
    for value in list(vars(module).values()):
        d = getattr(value, table, None)
        if not isinstance(d, dict) or not hasattr(value, "configs"):
            continue
        fn = getattr(value, "fn", None)
        yield getattr(fn, "__name__", None) or getattr(getattr(fn, "fn", None), "__name__", "?"), d


def timings(module: ModuleType) -> list[dict]:
    """Each `triton.autotune`'s last search: every config with its median time in ms (the autotuner's
    `configs_timings`; a config that failed to compile or ran out of resources is reported as inf,
    left out here). Measured in the candidate's own process: good for ordering a search, never a result."""
    out = []
    for name, table in _autotuners(module, "configs_timings"):
        for cfg, t in list(table.items()):
            config = _config(cfg)
            ms = t[0] if isinstance(t, (list, tuple)) and t else t
            if config is None or not isinstance(ms, (int, float)) or ms != ms or ms == float("inf"):
                continue
            out.append({"kernel": name, "config": config, "ms": float(ms)})
    return out


def picks(module: ModuleType) -> list[dict]:
    """What each `triton.autotune` of the module chose, per key it was called with (its `cache`)."""
    out = []
    for name, cache in _autotuners(module, "cache"):
        for key, cfg in list(cache.items()):
            config = _config(cfg)
            if config is None:
                continue
            out.append({"kernel": name, "key": [str(k) for k in (key if isinstance(key, tuple) else (key,))], "config": config})
    return out
