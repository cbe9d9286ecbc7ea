"""A problem's entry: what a worker calls with the generated inputs.

Without an `entry:` in the spec it is the file's `class Model` (AI Bench / KernelBench): built with
the spec's `inits`, then called. With one, it is found by name in the module:

- `matmul`: a module-level function (or any callable), called as is; `inits` must be empty;
- `_MatMul.apply`: an attribute path to a callable (`autograd.Function.apply`, a bound method);
- `_MatMul.forward` of an `autograd.Function`: called the way users call it, `_MatMul.apply`;
- `Attention.forward`: a method of another class: the class is built with `inits`, then the
  method of that instance is called.

The callable a worker holds is the `Model` instance itself, or a `Bound` whose `owner` is the
instance the method belongs to (so an `nn.Module` owner's weights can be shared like a `Model`'s).

With `backward: true` in the spec (a kernel launched by an `autograd.Function`'s `backward`), the
callable is wrapped in `Backward`: a call runs the entry and then backward, and returns the outputs
followed by the gradients of the floating-point tensor inputs. Both sides are wrapped alike, in
their own processes, so the gradients are compared (and timed) like any output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch


class EntryError(Exception):
    """The entry cannot be built from these arguments (raised in a worker, reported as a failure)."""


@dataclass(frozen=True)
class Entry:
    name: str  # as the spec spells it ("Model" when it names none)
    cls: type | None  # a class built with `inits` (Model, or the class of a method entry)
    path: tuple[str, ...]  # attributes read from the built instance, or from the module when cls is None


class Bound:
    """A callable entry, with the object it belongs to (an `nn.Module` whose weights are shared)."""

    def __init__(self, fn: Callable, owner: Any = None):
        self.fn = fn
        self.owner = owner

    def __call__(self, *args):
        return self.fn(*args)


class Backward(Bound):
    """`fn`, then backward from seeded output gradients: returns `(*outputs, *input gradients)`.

    The output gradients are drawn from a generator seeded by the output's position, so both sides get
    the same ones; an input that does not reach any output has a zero gradient. They are drawn once
    per shape and kept: a timed call then costs the forward and the backward, not the drawing."""

    SEED = 7919

    def __init__(self, inner: Callable):
        super().__init__(inner, owner=weights_of(inner))
        self.inner = inner
        self._seeds: dict[tuple, torch.Tensor] = {}

    def _seed(self, j: int, o: torch.Tensor) -> torch.Tensor:
        key = (j, tuple(o.shape), o.dtype, o.device)
        if key not in self._seeds:
            gen = torch.Generator().manual_seed(self.SEED + j)
            self._seeds[key] = torch.randn(o.shape, generator=gen, dtype=torch.float32).to(o.device, o.dtype)
        return self._seeds[key]

    def __call__(self, *args):
        with torch.enable_grad():
            leaves = [a.detach().requires_grad_() if _differentiable(a) else a for a in args]
            out = self.inner(*leaves)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            live = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
            wrt = [a for a in leaves if isinstance(a, torch.Tensor) and a.requires_grad]
            if not live:
                raise EntryError("`backward: true`, but no output of the entry depends on its inputs through autograd")
            seeds = [self._seed(j, o) for j, o in enumerate(live)]
            grads = torch.autograd.grad(live, wrt, grad_outputs=seeds, allow_unused=True)
        grads = [torch.zeros_like(a) if g is None else g for a, g in zip(wrt, grads)]
        return tuple(o.detach() if isinstance(o, torch.Tensor) else o for o in outs) + tuple(grads)


def _differentiable(a: Any) -> bool:
    return isinstance(a, torch.Tensor) and (a.is_floating_point() or a.is_complex())


def find(module: ModuleType, name: str | None, allow_model_new: bool = False) -> Entry | None:
    """The entry called `name` in `module` (`Model` when None), or None when it is not there."""
    if name is None or name == "Model":
        cls = getattr(module, "Model", None)
        if cls is None and allow_model_new:
            cls = getattr(module, "ModelNew", None)
        return Entry("Model", cls, ()) if cls is not None else None
    parts = name.split(".")
    obj: Any = module
    for i, part in enumerate(parts):
        if not hasattr(obj, part):
            return None
        parent, obj = obj, getattr(obj, part)
        if isinstance(parent, type) and i == len(parts) - 1:
            if _is_autograd_function(parent) and part == "forward":
                return Entry(name, None, tuple(parts[:-1]) + ("apply",))
            if not _is_class_level_callable(parent, part):
                return Entry(name, parent, (part,))
    if isinstance(obj, type) and not _is_autograd_function(obj):
        return Entry(name, obj, ())  # a class used like `Model`: built with `inits`, then called
    return Entry(name, None, tuple(parts)) if callable(obj) else None


def _is_autograd_function(cls: type) -> bool:
    return isinstance(cls, type) and issubclass(cls, torch.autograd.Function)


def _is_class_level_callable(cls: type, attr: str) -> bool:
    """`Fn.apply`, static and class methods are called on the class; plain methods need an instance."""
    if attr == "apply" and _is_autograd_function(cls):
        return True
    raw = next((vars(c)[attr] for c in cls.__mro__ if attr in vars(c)), None)
    return isinstance(raw, (staticmethod, classmethod))


def build(entry: Entry, module: ModuleType, init_args: list[Any], device: torch.device, dtype: str | None):
    """The callable of one variant. A class is built right after seeding (KernelBench's rule), moved to
    the device and, when the variant names one, to its dtype."""
    from .inputs import WEIGHT_SEED

    if entry.cls is None:
        if init_args:
            raise EntryError(f"`{entry.name}` is not a class: it takes no constructor arguments (the spec's `inits` must be empty)")
        obj: Any = module
        for part in entry.path:
            obj = getattr(obj, part)
        return Bound(obj)
    torch.manual_seed(WEIGHT_SEED)
    instance = entry.cls(*init_args)
    if isinstance(instance, torch.nn.Module):
        instance = instance.to(device)
        if dtype is not None:
            instance = instance.to(getattr(torch, dtype))
        instance.eval()
    if not entry.path:
        return instance
    return Bound(getattr(instance, entry.path[0]), owner=instance)


def weights_of(model: Any) -> torch.nn.Module | None:
    """The `nn.Module` whose state an entry carries, if any."""
    if isinstance(model, torch.nn.Module):
        return model
    owner = getattr(model, "owner", None) if isinstance(model, Bound) else None
    return owner if isinstance(owner, torch.nn.Module) else None


def missing_message(role: str, path: str, name: str | None) -> str:
    """What to add when a file has neither a `Model` nor the named entry."""
    what = {"original": "the original kernel file", "reference": "the reference file", "candidate": "the candidate"}.get(role, role)
    if name and name != "Model":
        return (
            f"{what} has no `{name}` (the problem's entry): {path}. Name the function that launches the kernel with "
            "`entry: <name>` in the spec (a function, `Class.method` or `Fn.apply`)"
        )
    return (
        f"{what} defines no class Model and the spec names no entry: {path}. Add `entry: <function that launches the "
        "kernel>` and its inputs to the spec (`xeforge spec FILE` drafts one from the code; `xeforge stage` infers it), "
        "or define `class Model` whose forward launches the kernel"
    )
