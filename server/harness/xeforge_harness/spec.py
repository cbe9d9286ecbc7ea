"""AI Bench problem specs (YAML), with Xe-Forge's extensions.

The format (libxsmm/AI-bench `ai_bench/harness/core/specs.py`):

    inputs:                      # forward() tensors by name
      X: {shape: [BATCH, DIM], dtype: float16}     # dtype may be `inherit` (= the variant's dtype)
      I: {shape: [N], dtype: int64, range: [0, N]} # integer inputs take a value range
      P: {shape: [N, N], dtype: float32, inits: [softmax]}   # optional transforms
    inits:                       # positional Model(...) arguments
      - dim: DIM
    ci:                          # a variant family: a list of variants
      - params: [X]
        dtype: float32
        dims: {BATCH: 4, DIM: 128}      # or a list of such mappings (one variant each)
        flop: "2*BATCH*DIM"             # number or formula over dims
        mem_bytes: "BATCH*DIM*4"
        rtol: 1.0e-4                    # Xe-Forge: per-variant tolerances
        atol: 1.0e-4
    default_variant: bench-gpu   # Xe-Forge: the family used when none is named
    entry: matmul                # Xe-Forge: what is called instead of `Model` (see child/entry.py)
    backward: true               # Xe-Forge: also compare the gradients of the floating inputs (child/entry.py)
    provenance: {M: "k.py:12"}   # Xe-Forge: where each inferred fact came from (read by people only)

Xe-Forge also allows a scalar argument among the inputs: `eps: {value: 1.0e-5}` or `n: {value: N}`
(a dimension name), passed as a Python number rather than a tensor; and a tuple of sizes,
`normalized_shape: {value: [N]}` (each a size or a dimension name), passed as a tuple of ints.

Any top-level list is a family (Xe-Forge allows `bench-gpu-1`, `bench-gpu-old`, ...).
This module only needs PyYAML: the harness parent validates a spec without importing torch, so a
bad spec is reported (verdict `error`, naming the field) before any process is started.
"""

from __future__ import annotations

import ast
import math
import operator
import os
import random
from dataclasses import dataclass, field, replace
from typing import Any

STANDARD_FAMILIES = ("ci", "bench-cpu", "bench-gpu", "bench-xpu")
_NOT_FAMILIES = {"inputs", "inits", "default_variant", "entry", "backward", "provenance", "edges"}

# torch dtype attribute names a spec may use (`getattr(torch, name)` in AI Bench).
# The name prefix of a variant derived from a spec's own (`Spec.edge_variant`): `edges:ci[0]`.
EDGES = "edges:"

DTYPES = frozenset(
    """float32 float float16 half bfloat16 float64 double float8_e4m3fn float8_e5m2
    float8_e4m3fnuz float8_e5m2fnuz int8 int16 short int32 int int64 long uint8 uint16
    uint32 uint64 bool complex64 complex128""".split()
)

# AI Bench's input transforms (`InInitKey`), applied in order after the random draw.
INPUT_TRANSFORMS = frozenset("scale softmax abs normalize symmetric triu tril transpose uniform rademacher".split())
MEMORY_FORMATS = frozenset({"channels_last", "channels_last_3d", "contiguous_format"})


class SpecError(Exception):
    """A spec that cannot be used. `field` is the dotted path of the offending entry."""

    def __init__(self, field: str, message: str, path: str | None = None):
        self.field = field
        self.message = message
        self.path = path
        where = f"{path}: " if path else ""
        super().__init__(f"{where}spec field '{field}': {message}")


@dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple[str | int, ...]
    dtype: str  # a DTYPES name or "inherit"
    value_range: tuple[float, float] | None = None
    transforms: tuple[str, ...] = ()
    value: Any = None  # a scalar argument: a number, a dimension name resolved per variant, or a tuple of either

    @property
    def is_scalar(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class Variant:
    family: str
    index: int
    params: tuple[str, ...]
    dims: dict[str, int | float]
    dtype: str | None = None
    rtol: float | None = None
    atol: float | None = None
    flop: float | None = None
    mem_bytes: float | None = None
    memory_format: str | None = None

    @property
    def name(self) -> str:
        return self.family if self.family.startswith(EDGES) else f"{self.family}[{self.index}]"


@dataclass
class Spec:
    inputs: dict[str, InputSpec]
    inits: list[Any]  # raw entries, resolved per variant by `init_args`
    families: dict[str, list[Variant]] = field(default_factory=dict)
    default_variant: str | None = None
    path: str | None = None
    entry: str | None = None  # None: the file's `Model`
    backward: bool = False  # the entry's outputs and its inputs' gradients are compared
    edges: bool = True  # `edges: false`: sizes are tied in ways the spec does not say; no edge variant

    def resolve_family(self, requested: str | None) -> str:
        """The family to run: the one asked for, else `ci`, else `default_variant`, else the first."""
        if requested:
            if requested not in self.families:
                have = ", ".join(self.families) or "none"
                raise SpecError("family", f"no variant family '{requested}' (the spec has: {have})", self.path)
            return requested
        if "ci" in self.families:
            return "ci"
        if self.default_variant:
            return self.default_variant
        return next(iter(self.families))

    def variants(self, family: str) -> list[Variant]:
        return self.families[family]

    def variant_by_name(self, name: str) -> Variant:
        """`ci[1]` → that variant (the name a variant is known by between processes); `edges:ci[1]` →
        its [`edge_variant`], `edges:7:ci[1]` the one drawn with salt 7."""
        if name.startswith(EDGES):
            rest = name[len(EDGES) :]
            salt, sep, after = rest.partition(":")
            if sep and salt.isdigit():
                edge = self.edge_variant(self.variant_by_name(after), salt=int(salt))
            else:
                edge = self.edge_variant(self.variant_by_name(rest))
            if edge is None:
                raise KeyError(name)
            return edge
        family, _, rest = name.partition("[")
        return self.families[family][int(rest.rstrip("]"))]

    def edge_variant(self, base: Variant, salt: int = 0) -> Variant | None:
        """`base` with every size of at least 16 doubled plus one (the next odd number free, where that
        one is taken), and every size from 2 to 15 grown by one (the next number free): sizes equal in
        `base` stay equal (two inputs a kernel assumes alike still are), unequal ones stay unequal, the
        large ones are no multiple of any tile and past any capacity fitted to the spec's, and the
        small ones (channels, heads, a filter's width) differ from the spec's, so code that only holds
        for the spec's sizes (a load or store without its mask, a block written to hold a row of the
        spec's length, a size written into the kernel) shows. A size of 1 stays: it is often what the
        problem means (one batch, one row). None when no size moves.

        With a `salt` (the judge draws one per process, unknown to the candidate until it is called),
        each large size grows by a further even amount drawn from it (2 up to half the size), and
        each small one by up to three: the sizes are not the same two in every run, so a candidate that
        lists them (a block table fitted to `2n+1`) does not pass."""
        rng = random.Random(salt) if salt else None
        moved: dict[int, int] = {}
        taken = {v for v in base.dims.values() if isinstance(v, int)}
        dims: dict[str, int | float] = {}
        for k, v in base.dims.items():
            if not isinstance(v, int) or isinstance(v, bool) or v < 2:
                dims[k] = v
                continue
            if v not in moved:
                n, step = (2 * v + 1, 2) if v >= 16 else (v + 1, 1)
                if rng is not None:  # never the unsalted size itself: that one a candidate could list
                    n += step * (rng.randrange(1, max(2, v // 4 + 1)) if v >= 16 else rng.randrange(0, 4))
                while n in taken or n in moved.values():
                    n += step
                moved[v] = n
            dims[k] = moved[v]
        if not moved or not self.edges:
            return None
        family = EDGES + (f"{salt}:" if salt else "") + base.name
        return replace(base, family=family, index=0, dims=dims, flop=None, mem_bytes=None)

    def input_dtype(self, variant: Variant, name: str) -> str:
        declared = self.inputs[name].dtype
        if declared == "inherit":
            # validated at load time: an `inherit` input is only used by variants with a dtype
            return variant.dtype or "float32"
        return declared

    def scalar_value(self, variant: Variant, name: str) -> Any:
        value = self.inputs[name].value
        if isinstance(value, tuple):
            return tuple(int(variant.dims[d]) if isinstance(d, str) else d for d in value)
        return variant.dims[value] if isinstance(value, str) else value

    def input_shape(self, variant: Variant, name: str) -> tuple[int, ...]:
        return tuple(d if isinstance(d, int) else int(variant.dims[d]) for d in self.inputs[name].shape)

    def init_args(self, variant: Variant) -> list[Any]:
        return [_resolve_init(entry, variant.dims) for entry in self.inits]


def find_spec_for(kernel_path: str) -> str | None:
    """`<kernel>.yaml` (or `.yml`) beside the kernel file, as AI Bench pairs them."""
    stem, _ = os.path.splitext(kernel_path)
    for ext in (".yaml", ".yml"):
        if os.path.isfile(stem + ext):
            return stem + ext
    return None


def load_spec(path: str) -> Spec:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SpecError("<file>", f"cannot read spec: {e.strerror or e}", path) from e
    return parse_spec_text(text, path)


def parse_spec_text(text: str, path: str | None = None) -> Spec:
    data = _load_yaml(text, path)
    return parse_spec(data, path)


def _load_yaml(text: str, path: str | None) -> Any:
    try:
        import yaml
    except ImportError:
        # YAML is a superset of JSON, so a spec written as JSON still loads without PyYAML.
        import json

        try:
            return json.loads(text)
        except ValueError as e:
            raise SpecError("<file>", "PyYAML is not installed and the spec is not plain JSON", path) from e
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise SpecError("<file>", f"invalid YAML{where}: {problem}", path) from e


def parse_spec(data: Any, path: str | None = None) -> Spec:
    if not isinstance(data, dict):
        raise SpecError("<root>", "expected a mapping at the top level", path)

    inputs = _parse_inputs(data.get("inputs"), path)
    inits = data.get("inits") or []
    if not isinstance(inits, list):
        raise SpecError("inits", "expected a list of constructor arguments", path)
    for i, entry in enumerate(inits):
        if isinstance(entry, dict) and len(entry) != 1:
            raise SpecError(f"inits[{i}]", "expected a single-key mapping such as {dim: NAME}", path)

    entry = data.get("entry")
    if entry is not None and not (isinstance(entry, str) and _is_dotted_name(entry)):
        raise SpecError("entry", f"expected a function, `Class.method` or `Fn.apply` name, got {entry!r}", path)
    provenance = data.get("provenance")
    if provenance is not None and not isinstance(provenance, dict):
        raise SpecError("provenance", "expected a mapping of fact to where it came from", path)

    backward = data.get("backward", False)
    if not isinstance(backward, bool):
        raise SpecError("backward", f"expected true or false, got {backward!r}", path)

    edges = data.get("edges", True)
    if not isinstance(edges, bool):
        raise SpecError("edges", f"expected true or false, got {edges!r}", path)

    spec = Spec(inputs=inputs, inits=list(inits), path=path, entry=entry, backward=backward, edges=edges)
    for key, value in data.items():
        if key in _NOT_FAMILIES:
            continue
        if not isinstance(value, list):
            if key in STANDARD_FAMILIES:
                raise SpecError(str(key), "expected a list of variants", path)
            continue  # other scalar/mapping keys are metadata AI Bench ignores too
        spec.families[str(key)] = _parse_family(str(key), value, inputs, inits, path)

    if not spec.families:
        raise SpecError("<root>", "no variant family (a list such as `ci:`) in the spec", path)

    default = data.get("default_variant")
    if default is not None:
        if not isinstance(default, str) or default not in spec.families:
            raise SpecError("default_variant", f"names no variant family in this spec: {default!r}", path)
        spec.default_variant = default
    return spec


def _is_dotted_name(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def _parse_inputs(raw: Any, path: str | None) -> dict[str, InputSpec]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise SpecError("inputs", "expected a mapping of input name to {shape, dtype}", path)
    out: dict[str, InputSpec] = {}
    for name, entry in raw.items():
        where = f"inputs.{name}"
        if not isinstance(entry, dict):
            raise SpecError(where, "expected a mapping with `shape` and `dtype`", path)
        if "value" in entry:
            value = entry["value"]
            if isinstance(value, list):
                for j, d in enumerate(value):
                    if not (isinstance(d, str) and d.isidentifier() or isinstance(d, int) and not isinstance(d, bool) and d >= 0):
                        raise SpecError(f"{where}.value[{j}]", f"expected a size or a dimension name, got {d!r}", path)
                value = tuple(value)
            elif not (isinstance(value, (int, float, str)) and (not isinstance(value, str) or value.isidentifier())):
                raise SpecError(
                    f"{where}.value", f"expected a number, true/false, a dimension name or a list of sizes, got {value!r}", path
                )
            out[str(name)] = InputSpec(str(name), (), "scalar", value=value)
            continue
        shape = entry.get("shape")
        if not isinstance(shape, list):
            raise SpecError(f"{where}.shape", "expected a list of dimension names", path)
        for j, d in enumerate(shape):
            if not (isinstance(d, str) or (isinstance(d, int) and not isinstance(d, bool) and d >= 0)):
                raise SpecError(f"{where}.shape[{j}]", f"expected a dimension name or a size, got {d!r}", path)
        dtype = entry.get("dtype", "float32")
        if dtype != "inherit" and dtype not in DTYPES:
            raise SpecError(f"{where}.dtype", f"unknown dtype {dtype!r}", path)
        value_range = None
        if "range" in entry:
            r = entry["range"]
            if not (isinstance(r, list) and len(r) == 2):
                raise SpecError(f"{where}.range", "expected [low, high]", path)
            value_range = (r[0], r[1])
        transforms = entry.get("inits") or []
        if not isinstance(transforms, list):
            raise SpecError(f"{where}.inits", "expected a list of transform names", path)
        for j, t in enumerate(transforms):
            if t not in INPUT_TRANSFORMS:
                raise SpecError(f"{where}.inits[{j}]", f"unknown input transform {t!r}", path)
        out[str(name)] = InputSpec(str(name), tuple(shape), str(dtype), value_range, tuple(transforms))
    return out


def _parse_family(family: str, entries: list, inputs: dict[str, InputSpec], inits: list, path: str | None) -> list[Variant]:
    variants: list[Variant] = []
    for i, raw in enumerate(entries):
        where = f"{family}[{i}]"
        if not isinstance(raw, dict):
            raise SpecError(where, "expected a mapping with `params` and `dims`", path)
        dims_raw = raw.get("dims", {})
        # AI Bench: `dims` may be a list of mappings, each its own variant.
        dims_options = dims_raw if isinstance(dims_raw, list) else [dims_raw]
        for k, dims in enumerate(dims_options):
            dwhere = f"{where}.dims" + (f"[{k}]" if isinstance(dims_raw, list) else "")
            variants.append(_parse_variant(family, len(variants), where, dwhere, raw, dims, inputs, inits, path))
    return variants


def _parse_variant(family, index, where, dwhere, raw, dims, inputs, inits, path) -> Variant:
    if not isinstance(dims, dict):
        raise SpecError(dwhere, "expected a mapping of dimension name to size", path)
    dims = {name: _yaml_number(size) for name, size in dims.items()}
    for name, size in dims.items():
        if isinstance(size, bool) or not isinstance(size, (int, float)):
            raise SpecError(f"{dwhere}.{name}", f"expected a number, got {size!r}", path)

    params = raw.get("params", list(inputs))
    if not isinstance(params, list):
        raise SpecError(f"{where}.params", "expected a list of input names", path)
    for j, p in enumerate(params):
        if p not in inputs:
            raise SpecError(f"{where}.params[{j}]", f"names no entry of `inputs`: {p!r}", path)

    dtype = raw.get("dtype")
    if dtype is not None and dtype not in DTYPES:
        raise SpecError(f"{where}.dtype", f"unknown dtype {dtype!r}", path)

    for p in params:
        spec_in = inputs[p]
        if spec_in.is_scalar:
            if isinstance(spec_in.value, str) and spec_in.value not in dims:
                raise SpecError(f"inputs.{p}.value", f"names no dimension of {where}: {spec_in.value!r}", path)
            for j, d in enumerate(spec_in.value if isinstance(spec_in.value, tuple) else ()):
                if isinstance(d, str) and d not in dims:
                    raise SpecError(f"inputs.{p}.value[{j}]", f"names no dimension of {where}: {d!r}", path)
                if isinstance(d, str) and (not float(dims[d]).is_integer() or dims[d] < 0):
                    raise SpecError(f"{dwhere}.{d}", f"a size must be a non-negative integer, got {dims[d]!r}", path)
            continue
        if spec_in.dtype == "inherit" and dtype is None:
            raise SpecError(f"{where}.dtype", f"input {p!r} has dtype `inherit` but the variant sets none", path)
        for d in spec_in.shape:
            if isinstance(d, str):
                if d not in dims:
                    raise SpecError(dwhere, f"missing dimension {d!r} used by input {p!r}", path)
                if not float(dims[d]).is_integer() or dims[d] < 0:
                    raise SpecError(f"{dwhere}.{d}", f"a shape dimension must be a non-negative integer, got {dims[d]!r}", path)
        if spec_in.value_range is not None:
            for j, bound in enumerate(spec_in.value_range):
                if isinstance(bound, str) and bound not in dims:
                    raise SpecError(f"inputs.{p}.range[{j}]", f"names no dimension of {where}: {bound!r}", path)

    for j, entry in enumerate(inits):
        if isinstance(entry, dict) and "dim" in entry and entry["dim"] not in dims:
            raise SpecError(f"inits[{j}].dim", f"dimension {entry['dim']!r} is not set by {where}.dims", path)

    memory_format = raw.get("memory_format")
    if memory_format is not None and memory_format not in MEMORY_FORMATS:
        raise SpecError(f"{where}.memory_format", f"unknown memory format {memory_format!r}", path)

    return Variant(
        family=family,
        index=index,
        params=tuple(params),
        dims=dict(dims),
        dtype=dtype,
        rtol=_tolerance(raw, "rtol", where, path),
        atol=_tolerance(raw, "atol", where, path),
        flop=_formula(raw, "flop", dims, where, path),
        mem_bytes=_formula(raw, "mem_bytes", dims, where, path),
        memory_format=memory_format,
    )


def _yaml_number(value):
    """`eps: 1e-5` as the number it is: PyYAML (YAML 1.1) reads a float without a `.` as a string."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        return number if math.isfinite(number) else value
    return value


def _tolerance(raw: dict, key: str, where: str, path: str | None) -> float | None:
    if key not in raw:
        return None
    value = raw[key]
    # PyYAML (YAML 1.1) reads `1e-4` as a string; accept it as the number it obviously is.
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise SpecError(f"{where}.{key}", f"expected a number, got {raw[key]!r}", path) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or math.isnan(value):
        raise SpecError(f"{where}.{key}", f"expected a non-negative number, got {raw[key]!r}", path)
    return float(value)


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


def _formula(raw: dict, key: str, dims: dict, where: str, path: str | None) -> float | None:
    if key not in raw or raw[key] is None:
        return None
    value = raw[key]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        raise SpecError(f"{where}.{key}", f"expected a number or a formula, got {value!r}", path)
    try:
        return float(eval_formula(value, dims))
    except (ValueError, SyntaxError, ZeroDivisionError, OverflowError) as e:
        raise SpecError(f"{where}.{key}", f"cannot evaluate {value!r}: {e}", path) from None


def eval_formula(text: str, dims: dict[str, int | float]) -> float:
    """Arithmetic over dimension names, without `eval`: + - * / // % ** and parentheses."""

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in dims:
                raise ValueError(f"unknown dimension {node.id!r}")
            return dims[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        raise ValueError(f"unsupported expression {ast.dump(node)[:40]}")

    return ev(ast.parse(text.strip(), mode="eval"))


def _resolve_init(entry: Any, dims: dict[str, int | float]) -> Any:
    if isinstance(entry, dict):
        ((key, value),) = entry.items()
        if key == "dim":
            return dims[value]
        # Xe-Forge's form {param_name: DIM_NAME or literal}
        if isinstance(value, str) and value in dims:
            return dims[value]
        return value
    return entry
