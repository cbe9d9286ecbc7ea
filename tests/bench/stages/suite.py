"""The generalisation suite's files as the GPU scripts read them: specs (a small reader of the YAML
subset the suite uses, so that PyYAML stays optional on a bare device machine) and seeded inputs."""

from __future__ import annotations

# --- specs: the subset of YAML the suite uses (block maps, `- ` lists of maps, flow maps and lists) ---


def _scalar(s: str):
    s = s.strip()
    if s.startswith("{") or s.startswith("["):
        return _flow(s)
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    for cast in (int, float):
        try:
            return cast(s)
        except ValueError:
            pass
    return {"true": True, "false": False, "null": None}.get(s, s)


def _split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def _flow(s: str):
    inner = s.strip()[1:-1]
    if s.strip().startswith("["):
        return [_scalar(x) for x in _split_top(inner)]
    return {k.strip(): _scalar(v) for k, v in (p.split(":", 1) for p in _split_top(inner))}


def read_spec(path: str) -> dict:
    try:
        import yaml

        return yaml.safe_load(open(path))
    except ImportError:
        pass
    lines = []
    for raw in open(path):
        line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if line.strip():
            lines.append((len(line) - len(line.lstrip()), line.strip()))

    def block(i: int, indent: int):
        if lines[i][1].startswith("- "):
            items = []
            while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
                lines[i] = (indent + 2, lines[i][1][2:])
                value, i = block(i, indent + 2)
                items.append(value)
            return items, i
        out = {}
        while i < len(lines) and lines[i][0] == indent and not lines[i][1].startswith("- "):
            key, _, rest = lines[i][1].partition(":")
            i += 1
            if rest.strip():
                out[key.strip()] = _scalar(rest)
            elif i < len(lines) and lines[i][0] > indent:
                out[key.strip()], i = block(i, lines[i][0])
            else:
                out[key.strip()] = None
        return out, i

    return block(0, 0)[0]


def make_inputs(spec: dict, variant: dict, dev: str, seed: int = 0) -> list:
    """A variant's inputs, drawn on `dev` from `seed` (floats normal, integers in their `range`)."""
    import torch

    dims = variant["dims"]
    g = torch.Generator(device=dev).manual_seed(seed)
    out = []
    for name in variant["params"]:
        e = spec["inputs"][name]
        shape = [dims[d] if isinstance(d, str) else d for d in e["shape"]]
        dtype = getattr(torch, variant.get("dtype") if e["dtype"] == "inherit" else e["dtype"])
        if dtype.is_floating_point:
            out.append(torch.randn(shape, generator=g, device=dev, dtype=torch.float32).to(dtype))
        else:
            lo, hi = e.get("range", [0, 16])
            hi = dims[hi] if isinstance(hi, str) else hi
            out.append(torch.randint(lo, hi, shape, generator=g, device=dev).to(dtype))
    return out
