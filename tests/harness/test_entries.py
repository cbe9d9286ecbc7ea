"""Problems whose entry is not `class Model`: a function, `Class.method`, `Fn.apply` / `Fn.forward`,
with scalar inputs; and the errors that say what to add when there is no entry."""

import os
import sys
from pathlib import Path

import pytest
from conftest import DEVICE, HERE, ON_GPU
from xeforge_harness.child import worker
from xeforge_harness.spec import SpecError, parse_spec_text

ENTRIES = HERE.parent / "fixtures" / "entries"

AUTOGRAD = """
import torch
import triton
import triton.language as tl


@triton.jit
def _double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        _double[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
        return y
"""


def _eval(serve, kernel: Path, spec: str, tmp_path: Path, candidate: Path | None = None, **extra) -> dict:
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(spec)
    args = {"kernel": str(kernel), "candidate": str(candidate or kernel), "spec": str(spec_path), "device": DEVICE, **extra}
    if ON_GPU:
        args["no_timing"] = True
    return serve.request("evaluate", args)


def test_a_function_entry(serve, tmp_path):
    spec = "entry: add\ninputs:\n  x: {shape: [n], dtype: float32}\n  y: {shape: [n], dtype: float32}\nci:\n  - dims: {n: 1000}\n"
    r = _eval(serve, ENTRIES / "add_main.py", spec, tmp_path)
    assert r["verdict"] == "correct", r
    assert r["correctness"]["variants"][0]["seeds"] == 3


@pytest.mark.parametrize("name", ["Double.apply", "Double.forward"])
def test_an_autograd_function_is_called_through_apply(serve, tmp_path, name):
    kernel = tmp_path / "double.py"
    kernel.write_text(AUTOGRAD)
    spec = f"entry: {name}\ninputs:\n  x: {{shape: [n], dtype: float32}}\nci:\n  - dims: {{n: 300}}\n"
    r = _eval(serve, kernel, spec, tmp_path)
    assert r["verdict"] == "correct", r


def test_a_method_entry_builds_its_class_with_inits(serve, tmp_path):
    spec = (
        "entry: RowAttention.scores\ninputs:\n  q: {shape: [T, D], dtype: float32}\n  k: {shape: [T, D], dtype: float32}\n"
        "inits:\n  - dim: D\nci:\n  - dims: {T: 5, D: 48}\n"
    )
    r = _eval(serve, ENTRIES / "attention_method.py", spec, tmp_path)
    assert r["verdict"] == "correct", r


def test_a_scalar_input_is_passed_as_a_number(serve, tmp_path):
    spec = (
        "entry: axpy\ninputs:\n  alpha: {value: a}\n  x: {shape: [n], dtype: float32}\n  y: {shape: [n], dtype: float32}\n"
        "ci:\n  - dims: {n: 700, a: 0.25}\n"
    )
    r = _eval(serve, ENTRIES / "scale_scalar.py", spec, tmp_path)
    assert r["verdict"] == "correct", r
    # the same problem with another alpha in the candidate is caught
    cand = tmp_path / "cand.py"
    cand.write_text((ENTRIES / "scale_scalar.py").read_text().replace("alpha * tl.load", "(alpha + 1.0) * tl.load"))
    r = _eval(serve, ENTRIES / "scale_scalar.py", spec, tmp_path, candidate=cand)
    assert r["verdict"] == "incorrect", r


def test_a_file_that_asks_the_driver_for_its_device_runs_where_the_harness_runs(serve, tmp_path):
    # Triton's tutorials: `DEVICE = triton.runtime.driver.active.get_active_torch_device()` and the device's
    # properties at import, the launch inside `torch.cuda.device(x.device)`. On the interpreter there is
    # no driver and no CUDA device; the harness answers for both (child/interpreter.py).
    kernel = HERE.parent / "fixtures" / "launch_forms" / "tutorial_device.py"
    spec = "entry: scale\ninputs:\n  x: {shape: [n], dtype: float32}\n  alpha: {value: a}\nci:\n  - dims: {n: 5000, a: 3.0}\n"
    r = _eval(serve, kernel, spec, tmp_path)
    assert r["verdict"] == "correct", r
    cand = tmp_path / "cand.py"
    cand.write_text(kernel.read_text().replace("* alpha, mask=mask)", "* alpha + 1.0, mask=mask)"))
    r = _eval(serve, kernel, spec, tmp_path, candidate=cand)
    assert r["verdict"] == "incorrect", r


def test_a_file_that_imports_pytest_for_its_tests_is_judged_like_any_other(serve, tmp_path):
    # As root the candidate runs as `nobody`; a Python installed where only root reads (pyenv, uv under
    # /root) then hides every module not loaded before the switch: `import pytest` failed, "No module
    # named 'html'". The modules the original imports are loaded first (worker.preload_installed).
    kernel = HERE.parent / "fixtures" / "launch_forms" / "tests_beside_kernel.py"
    spec = "entry: leaky_relu\ninputs:\n  x: {shape: [n], dtype: float32}\n  slope: {value: 0.1}\nci:\n  - dims: {n: 3000}\n"
    r = _eval(serve, kernel, spec, tmp_path)
    assert r["verdict"] == "correct", r


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the sandbox user is taken only by root")
def test_a_sandboxed_candidate_finds_the_installed_modules_the_original_imports(tmp_path):
    # Two modules in a folder only root can read, standing in for a root-only Python installation:
    # the one preloaded is found after the switch to the sandbox user, the other is not.
    lib = tmp_path / "lib"
    lib.mkdir(mode=0o700)
    (lib / "xf_preloaded.py").write_text("VALUE = 1\n")
    (lib / "xf_not_preloaded.py").write_text("VALUE = 2\n")
    os.chmod(tmp_path, 0o700)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            sys.path.insert(0, str(lib))
            worker._installed_roots = lambda: (os.path.join(str(lib), ""),)
            worker.preload_installed(["xf_preloaded", "xf_nowhere"])
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            import xf_preloaded  # noqa: F401

            try:
                import xf_not_preloaded  # noqa: F401
            except ModuleNotFoundError:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_no_model_and_no_entry_says_what_to_add(serve, tmp_path):
    spec = "inputs:\n  x: {shape: [n], dtype: float32}\n  y: {shape: [n], dtype: float32}\nci:\n  - dims: {n: 10}\n"
    r = _eval(serve, ENTRIES / "add_main.py", spec, tmp_path)
    assert r["verdict"] == "error", r
    assert "defines no class Model and the spec names no entry" in r["message"]
    assert "entry: <function that launches the kernel>" in r["message"]


def test_an_entry_the_file_lacks_is_named(serve, tmp_path):
    spec = "entry: add2\ninputs:\n  x: {shape: [n], dtype: float32}\nci:\n  - dims: {n: 10}\n"
    r = _eval(serve, ENTRIES / "add_main.py", spec, tmp_path)
    assert r["verdict"] == "error" and "has no `add2` (the problem's entry)" in r["message"], r


def test_a_candidate_without_the_entry_does_not_compile(serve, tmp_path):
    spec = "entry: add\ninputs:\n  x: {shape: [n], dtype: float32}\n  y: {shape: [n], dtype: float32}\nci:\n  - dims: {n: 10}\n"
    cand = tmp_path / "cand.py"
    cand.write_text((ENTRIES / "add_main.py").read_text().replace("def add(", "def add_renamed("))
    r = _eval(serve, ENTRIES / "add_main.py", spec, tmp_path, candidate=cand)
    assert r["verdict"] == "compile_error" and "has no `add`" in r["message"], r


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("entry: 'not a name'\ninputs: {x: {shape: [N]}}\nci: [{dims: {N: 1}}]\n", "entry"),
        ("inputs: {x: {value: {a: 1}}}\nci: [{dims: {N: 1}}]\n", "inputs.x.value"),
        ("inputs: {x: {value: [1, 2.5]}}\nci: [{dims: {N: 1}}]\n", "inputs.x.value[1]"),
        ("inputs: {x: {value: [1, M]}}\nci: [{dims: {N: 1}}]\n", "inputs.x.value[1]"),
        ("inputs: {x: {value: M}}\nci: [{dims: {N: 1}}]\n", "inputs.x.value"),
        ("entry: f\nprovenance: [a]\ninputs: {x: {shape: [N]}}\nci: [{dims: {N: 1}}]\n", "provenance"),
    ],
)
def test_bad_entry_fields_are_named(text, field):
    with pytest.raises(SpecError) as e:
        parse_spec_text(text)
    assert e.value.field == field


def test_entry_and_provenance_are_not_families():
    spec = parse_spec_text("entry: f\nprovenance: {N: 'k.py:3'}\ninputs: {x: {shape: [N]}, s: {value: 2.5}}\nci: [{dims: {N: 4}}]\n")
    assert spec.entry == "f" and list(spec.families) == ["ci"]
    assert spec.scalar_value(spec.variants("ci")[0], "s") == 2.5


FALLBACK = """
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=m), 0.0), mask=m)


def relu(x):
    if x.numel() < MIN:
        return torch.relu(x)
    y = torch.empty_like(x)
    _relu[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y
"""


@pytest.mark.parametrize("minimum", [10_000, 10])
def test_an_original_that_never_reaches_its_kernel_is_an_error_not_correct(serve, tmp_path, minimum):
    # Below MIN the wrapper falls back to torch on both sides: `correct` would check no kernel at all.
    kernel = tmp_path / "relu_fallback.py"
    kernel.write_text(FALLBACK.replace("MIN", str(minimum)))
    spec = "entry: relu\ninputs:\n  x: {shape: [n], dtype: float32}\nci:\n  - dims: {n: 1000}\n"
    r = _eval(serve, kernel, spec, tmp_path)
    if minimum > 1000:
        assert r["verdict"] == "error", r
        assert "the original launched no Triton kernel on ci[0]" in r["message"], r
    else:
        assert r["verdict"] == "correct", r


@pytest.mark.parametrize(("dtype", "verdict"), [("float32", "error"), ("float16", "correct")])
def test_a_target_kernel_the_wrapper_does_not_pick_for_these_inputs_is_an_error(serve, tmp_path, dtype, verdict):
    # A stage working on `_relu_half` checked on float32 inputs would check `_relu_fp32` alone.
    kernel = ENTRIES / "relu_by_dtype.py"
    spec = f"entry: relu\ninputs:\n  x: {{shape: [n], dtype: {dtype}}}\nci:\n  - dims: {{n: 1000}}\n"
    r = _eval(serve, kernel, spec, tmp_path, target_kernel="_relu_half")
    assert r["verdict"] == verdict, r
    if verdict == "error":
        assert "the original never launched `_relu_half` on ci[0]: its entry ran `_relu_fp32` instead" in r["message"], r
