"""`timing_family`: correctness on the checked (small) family, timing on another family's largest
variant, which the timed protocol's digests and full checks still verify."""

from __future__ import annotations

import shutil

from conftest import DEVICE, PROBLEMS, harness_env, run_cli

SPEC = """inputs:
  x: {shape: [N], dtype: float32}
  y: {shape: [N], dtype: float32}
ci:
  - params: [x, y]
    dims: {N: 1000}
big:
  - params: [x, y]
    dims: {N: 3000}
  - params: [x, y]
    dims: {N: 9000}
"""

# Right up to 4096 elements, wrong beyond: only the timed family can show it.
WRONG_WHEN_LARGE = """
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class Model(torch.nn.Module):
    def forward(self, x, y):
        out = torch.zeros_like(x)
        n = min(out.numel(), 4096)
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
        return out
"""


def _setup(tmp_path, candidate_text=None):
    kernel = tmp_path / "vector_add.py"
    shutil.copyfile(PROBLEMS / "vector_add.py", kernel)
    (tmp_path / "vector_add.yaml").write_text(SPEC)
    candidate = tmp_path / "candidate.py"
    if candidate_text is None:
        shutil.copyfile(PROBLEMS / "vector_add.py", candidate)
    else:
        candidate.write_text(candidate_text)
    return kernel, candidate


def _evaluate(kernel, candidate):
    args = [
        "evaluate",
        "--kernel",
        str(kernel),
        "--candidate",
        str(candidate),
        "--device",
        DEVICE,
        "--family",
        "ci",
        "--timing-family",
        "big",
        "--runs",
        "10",
        "--warmup",
        "1",
    ]
    return run_cli(*args, env=harness_env(XEFORGE_HARNESS_CPU_TIMING="1"))


def test_checked_on_the_small_family_timed_on_the_large_one(tmp_path):
    rc, r = _evaluate(*_setup(tmp_path))
    assert rc == 0, r
    assert r["verdict"] in ("correct", "accepted"), r
    assert [v["name"] for v in r["correctness"]["variants"]] == ["ci[0]"]
    if DEVICE == "cpu":
        assert "timed protocol ran" in r["timing"]["reason"], r["timing"]
    else:
        assert r["timing"]["variant"] == "big[1]", r["timing"]


def test_a_candidate_wrong_only_on_the_timed_family_is_incorrect(tmp_path):
    rc, r = _evaluate(*_setup(tmp_path, WRONG_WHEN_LARGE))
    assert rc == 0, r
    assert r["verdict"] == "incorrect", r
    assert r["correctness"]["variants"][0]["ok"] is True


# Prints the size of every call: the candidate's output tail, in the result's log, says which shapes ran.
SAYS_ITS_SIZE = (
    open(PROBLEMS / "vector_add.py")
    .read()
    .replace(
        "    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n",
        "    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n        print('called with', x.numel(), flush=True)\n",
    )
)


def _untimed(kernel, candidate, *extra):
    args = ["evaluate", "--kernel", str(kernel), "--candidate", str(candidate), "--device", DEVICE]
    return run_cli(*args, "--family", "ci", "--timing-family", "big", "--no-timing", *extra, env=harness_env())


def test_without_timing_the_timed_family_costs_no_reference_call(tmp_path):
    rc, r = _untimed(*_setup(tmp_path))
    assert rc == 0 and r["verdict"] == "correct", r
    requests = r["elapsed"]["requests"]
    # The checked variant's three seeds, the range check's call, the layout check's and, on the
    # interpreter, the edge check's two (its allocations filled two ways); nothing for `big`.
    assert requests["trusted:reference"]["n"] == 3 + 1 + 1 + (2 if DEVICE == "cpu" else 0), requests
    assert "candidate:once" not in requests


def test_search_timed_calls_the_candidate_once_per_timed_variant_and_judges_the_checked_family(tmp_path):
    kernel, candidate = _setup(tmp_path, SAYS_ITS_SIZE)
    assert "called with" in candidate.read_text()
    rc, r = _untimed(kernel, candidate, "--search-timed")
    assert rc == 0 and r["verdict"] == "correct", r
    assert [v["name"] for v in r["correctness"]["variants"]] == ["ci[0]"]
    assert r["elapsed"]["requests"]["candidate:once"]["n"] == 2, r["elapsed"]
    assert "called with 3000" in r["log"] and "called with 9000" in r["log"], r["log"]
    # Untimed and unchecked: a candidate wrong only there is judged on the checked family alone.
    rc, r = _untimed(*_setup(tmp_path, WRONG_WHEN_LARGE), "--search-timed")
    assert r["verdict"] == "correct", r


def test_search_timed_needs_no_timing(tmp_path):
    kernel, candidate = _setup(tmp_path)
    args = ["evaluate", "--kernel", str(kernel), "--candidate", str(candidate), "--device", DEVICE, "--search-timed"]
    rc, r = run_cli(*args, env=harness_env())
    assert rc == 2 and r["verdict"] == "error" and r.get("field") == "search_timed", r
