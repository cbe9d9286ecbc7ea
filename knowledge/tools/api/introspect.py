"""Print the public API of the Triton importable by this interpreter, as JSON on stdout.

Run by generate.py, once per Triton release, with that release's interpreter (an installed wheel) or
with ``--source DIR`` (a source tree whose native extension ``triton._C`` is not built: it is replaced
by a permissive stand-in, enough to import the Python front end and read its signatures).

Only names, kinds and signatures are read; docstrings are not shipped (knowledge/api text is our own).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
import types

MODULES = ["triton", "triton.language", "triton.language.extra.intel"]
# Parameters the front end passes itself (builder, semantic, generator): never written by a user.
HIDDEN_PREFIX = "_"


class _Anything:
    """Stands for every object of the missing native extension: callable, subclassable, indexable."""

    def __init__(self, *a, **k):
        pass

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Anything()

    def __call__(self, *a, **k):
        return _Anything()

    def __getitem__(self, k):
        return _Anything()

    def __iter__(self):
        return iter(())

    def __mro_entries__(self, bases):
        return (_Anything,)

    def __or__(self, other):
        return self

    __ror__ = __or__

    def __bool__(self):
        return False

    def __int__(self):
        return 0

    def __hash__(self):
        return 0

    def __eq__(self, other):
        return self is other


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Anything()


def stub_native() -> None:
    for name in ["triton._C", "triton._C.libtriton"]:
        mod = _StubModule(name)
        mod.__path__ = []  # a package, so submodules resolve to stubs too
        sys.modules[name] = mod

    class _Finder:
        """Any `triton._C.libtriton.<x>` submodule import gets a stub."""

        def find_spec(self, fullname, path=None, target=None):
            if fullname.startswith("triton._C."):
                import importlib.machinery

                return importlib.machinery.ModuleSpec(fullname, self)
            return None

        def create_module(self, spec):
            mod = _StubModule(spec.name)
            mod.__path__ = []
            return mod

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, _Finder())

    # No backend is installed with a bare source tree; the interpreter's own Triton, if any, must not
    # lend its backends either (they would import against this tree).
    import importlib.metadata as md

    real = md.entry_points

    def entry_points(**kw):
        eps = real(**kw)
        if kw.get("group") == "triton.backends":
            return ()
        if not kw and hasattr(eps, "select"):
            # 3.11 answers a dict of groups: build the flat list from the distributions instead.
            return md.EntryPoints(ep for d in md.distributions() for ep in d.entry_points if ep.group != "triton.backends")
        return eps

    md.entry_points = entry_points


def unwrap(obj):
    # JITFunction (and the autotuner's wrappers) keep the Python function in `.fn`.
    for _ in range(4):
        inner = getattr(obj, "fn", None)
        if inner is None or inner is obj or not callable(inner):
            break
        obj = inner
    return inspect.unwrap(obj) if callable(obj) else obj


def default_text(p: inspect.Parameter) -> str | None:
    if p.default is inspect.Parameter.empty:
        return None
    d = p.default
    if isinstance(d, (bool, int, float, str, type(None))):
        return repr(d)
    name = getattr(d, "name", None)  # a dtype: write it the way a kernel does
    if isinstance(name, str) and type(d).__name__ == "dtype":
        return f"tl.{name}" if not name.startswith("tl.") else name
    r = repr(d)
    return r if len(r) < 40 and "<" not in r else "..."


def params_of(obj) -> list[dict] | None:
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.name == "self" or p.name.startswith(HIDDEN_PREFIX):
            continue
        kind = {
            p.POSITIONAL_ONLY: "positional",
            p.POSITIONAL_OR_KEYWORD: "normal",
            p.KEYWORD_ONLY: "keyword",
            p.VAR_POSITIONAL: "args",
            p.VAR_KEYWORD: "kwargs",
        }[p.kind]
        entry = {"name": p.name, "kind": kind}
        d = default_text(p)
        if d is not None:
            entry["default"] = d
        out.append(entry)
    return out


def kind_of(obj) -> str:
    tname = type(obj).__name__
    if tname == "dtype" or (tname.endswith("_type") and hasattr(obj, "name") and not inspect.isclass(obj)):
        return "dtype"
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "constant"


def public_names(mod) -> list[str]:
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in vars(mod) if not n.startswith("_")]
    out = []
    for n in names:
        obj = getattr(mod, n, None)
        if obj is None:
            continue
        # Leave out the typing and stdlib names a module imports for itself.
        if not inspect.ismodule(obj) and getattr(obj, "__module__", "") in ("typing", "builtins", "functools", "enum"):
            if not inspect.isclass(obj) or obj.__module__ != "enum":
                continue
        out.append(n)
    return sorted(set(out))


def describe(modname: str) -> dict | None:
    try:
        mod = importlib.import_module(modname)
    except Exception as e:  # noqa: BLE001 - an absent module is a fact to record
        return {"absent": f"{type(e).__name__}: {e}"}
    symbols = {}
    for n in public_names(mod):
        obj = getattr(mod, n)
        kind = kind_of(obj)
        entry: dict = {"kind": kind}
        if kind in ("function", "class"):
            ps = params_of(unwrap(obj))
            if ps is not None:
                entry["params"] = ps
        symbols[n] = entry
    return {"symbols": symbols}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", help="a directory that holds the `triton` package (source tree, no native extension)")
    args = ap.parse_args()
    if args.source:
        sys.path.insert(0, args.source)
        os.environ["TRITON_BACKENDS_IN_TREE"] = "1"
        stub_native()
    import triton

    out = {"version": getattr(triton, "__version__", "?"), "modules": {}}
    for m in MODULES:
        out["modules"][m] = describe(m)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
