"""Each kind of candidate gets its verdict, through one long-lived `serve` that must survive them all."""

import re

import pytest
from cases import VERDICT_CASES, hang_timeout
from conftest import DEVICE, HERE, ON_GPU, PROBLEMS, evaluate_args

CASES = VERDICT_CASES
HANG_TIMEOUT_S = hang_timeout(ON_GPU)


@pytest.fixture(scope="module")
def worker_pid(serve):
    """The warm worker's pid before any candidate ran: it must be the same one after all of them."""
    reply = serve.request("ping")
    assert reply["ok"] and reply["id"]
    return {name: info.get("pid") for name, info in reply["workers"].items()}


@pytest.mark.parametrize(("candidate", "problem", "verdict", "words"), CASES, ids=[c[0].split("/")[-1] for c in CASES])
def test_verdict(serve, worker_pid, candidate, problem, verdict, words):
    extra = {"timeout": HANG_TIMEOUT_S} if "hang" in candidate else {}
    reply = serve.request("evaluate", evaluate_args(candidate, problem, **extra))
    assert reply["id"].startswith("req-")
    assert reply["verdict"] == verdict, reply
    assert words in reply["message"], reply["message"]
    assert serve.alive()


def test_serve_and_its_warm_worker_outlive_every_candidate(serve, worker_pid):
    reply = serve.request("ping")
    assert reply["ok"]
    now = {name: info.get("pid") for name, info in reply["workers"].items()}
    for name, pid in worker_pid.items():
        assert now.get(name) == pid, f"the {name} worker was restarted: {worker_pid} -> {now}"
    again = serve.request("evaluate", evaluate_args("fixtures/add_correct.py"))
    assert again["verdict"] == "correct"


def test_correct_candidate_reports_every_variant_and_seed(serve):
    reply = serve.request("evaluate", evaluate_args("fixtures/add_correct.py"))
    variants = reply["correctness"]["variants"]
    assert [v["name"] for v in variants] == ["ci[0]", "ci[1]"]
    assert all(v["seeds"] == 3 and v["ok"] for v in variants)
    assert all(v["rtol"] == 1e-4 and v["atol"] == 1e-4 for v in variants)
    assert reply["guard"]["ok"] is True and reply["guard"]["new_torch_ops"] == []
    # Two variants by three seeds, then the range check's call (`x` and `y` scaled) and, on the
    # interpreter, the edge check's (N=1000 made 2001, plus an even amount drawn per judge).
    assert reply["guard"]["triton_launches"] == [1] * (7 if ON_GPU else 8) and reply["guard"]["tampered"] == []
    assert reply["correctness"]["range"] == {"variant": "ci[0]", "inputs": ["`x` ×64", "`y` ×64"], "ok": True}
    if not ON_GPU:
        edges = reply["correctness"]["edges"]
        assert re.fullmatch(r"edges:\d+:ci\[0\]", edges["name"]) and (edges["of"], edges["ok"]) == ("ci[0]", True), edges
        assert edges["dims"]["N"] in range(2003, 2001 + 2 * 251, 2), edges
    assert reply["device"]["kind"] == DEVICE
    if not ON_GPU:
        assert reply["timing"]["meaningful"] is False
        assert "speedup" not in reply["timing"]


def test_a_pytorch_reference_file_can_stand_in_for_the_original(serve):
    args = evaluate_args("problems/matmul.py", "matmul", reference=str(evaluate_args("problems/matmul_reference.py")["candidate"]))
    reply = serve.request("evaluate", args)
    assert reply["verdict"] == "correct", reply
    assert reply["correctness"]["variants"][0]["rel_err"] < 1e-5


def test_an_original_that_fails_on_scaled_inputs_skips_the_range_check_with_a_note(serve, tmp_path):
    original = tmp_path / "bounded.py"
    original.write_text(
        (PROBLEMS / "vector_add.py").read_text()
        + "\n\n_forward = Model.forward\n\n\ndef _bounded(self, x, y):\n"
        + "    assert float(x.abs().max()) < 50, 'inputs out of range'\n    return _forward(self, x, y)\n\n\nModel.forward = _bounded\n"
    )
    (tmp_path / "bounded.yaml").write_text((PROBLEMS / "vector_add.yaml").read_text())
    args = evaluate_args(str(original), "vector_add")
    args["kernel"], args["candidate"], args["spec"] = str(original), str(original), str(tmp_path / "bounded.yaml")
    reply = serve.request("evaluate", args)
    assert reply["verdict"] == "correct", reply
    assert "range" not in reply["correctness"]
    assert "range check skipped: the original fails on ci[0]" in reply["log"] and "inputs out of range" in reply["log"], reply["log"]


def test_a_range_given_by_the_spec_is_not_scaled(serve, tmp_path):
    spec = (PROBLEMS / "vector_add.yaml").read_text()
    assert "  x:\n" in spec, spec
    (tmp_path / "kernel.yaml").write_text(spec.replace("  x:\n", "  x:\n    range: [-1, 1]\n", 1))
    (tmp_path / "kernel.py").write_text((PROBLEMS / "vector_add.py").read_text())
    args = evaluate_args("fixtures/add_correct.py", "vector_add")
    args["kernel"], args["spec"] = str(tmp_path / "kernel.py"), str(tmp_path / "kernel.yaml")
    reply = serve.request("evaluate", args)
    assert reply["verdict"] == "correct", reply
    assert reply["correctness"]["range"]["inputs"] == ["`y` ×64"]


def test_an_original_that_reaches_past_its_arguments_is_not_held_against_the_candidate(serve, tmp_path):
    # The original's loads run over the last block (its store is masked): the edge check is skipped,
    # and a candidate that does the same is not failed for it.
    text = (PROBLEMS / "vector_add.py").read_text()
    loose = text.replace("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)")
    assert loose != text, "vector_add.py's load of x changed; update this test"
    (tmp_path / "loose.py").write_text(loose)
    (tmp_path / "loose.yaml").write_text((PROBLEMS / "vector_add.yaml").read_text())
    args = evaluate_args(str(tmp_path / "loose.py"), "vector_add")
    args["kernel"], args["spec"] = str(tmp_path / "loose.py"), str(tmp_path / "loose.yaml")
    reply = serve.request("evaluate", args)
    assert reply["verdict"] == "correct", reply
    if not ON_GPU:
        assert "the original reaches past its arguments on the checked sizes" in reply["log"], reply["log"]
        assert "edge check skipped: the original reaches past its arguments" in reply["log"], reply["log"]
        assert "edges" not in reply["correctness"]


@pytest.mark.skipif(ON_GPU, reason="the interpreter records the precision its kernels ran at")
def test_a_precision_spelled_in_dead_code_still_shows_in_what_ran(serve, tmp_path):
    # Within a loose tolerance the TF32 rewrite is correct; the text-read evidence is fooled by an
    # `ieee` in dead code, what ran is not.
    (tmp_path / "matmul.py").write_text((PROBLEMS / "matmul.py").read_text())
    (tmp_path / "matmul.yaml").write_text((PROBLEMS / "matmul.yaml").read_text().replace("1.0e-4", "2.0e-2"))
    args = evaluate_args("adversarial/mm_tf32_laundered.py", "matmul")
    args["kernel"], args["spec"] = str(tmp_path / "matmul.py"), str(tmp_path / "matmul.yaml")
    reply = serve.request("evaluate", args)
    assert reply["verdict"] == "correct", reply
    precision = reply["correctness"]["precision"]
    assert precision["changed"] == []
    assert precision["executed"] == {
        "original": ["tl.dot fp32×fp32→fp32 at ieee"],
        "candidate": ["tl.dot fp32×fp32→fp32 at tf32"],
    }
    assert "no longer tl.dot fp32×fp32→fp32 at ieee; now tl.dot fp32×fp32→fp32 at tf32" in reply["log"], reply["log"]


@pytest.mark.skipif(ON_GPU, reason="the edge check runs on the interpreter")
def test_an_original_that_leaves_edge_outputs_unwritten_skips_the_edge_check(serve, tmp_path):
    # A softmax whose block covers the spec's rows (100 columns) and not the edge check's (201): the
    # columns past 128 are never written, so the original is no reference there.
    (tmp_path / "narrow.py").write_text((HERE / "adversarial" / "sm_fixed_block_128.py").read_text())
    (tmp_path / "narrow.yaml").write_text((PROBLEMS / "softmax.yaml").read_text())
    args = evaluate_args(str(tmp_path / "narrow.py"), "softmax")
    args["kernel"], args["spec"] = str(tmp_path / "narrow.py"), str(tmp_path / "narrow.yaml")
    reply = serve.request("evaluate", args)
    assert reply["verdict"] == "correct", reply
    assert "edges" not in reply["correctness"]
    assert "leaves part of its output unwritten" in reply["log"], reply["log"]


def test_more_seeds_are_honoured(serve):
    reply = serve.request("evaluate", evaluate_args("fixtures/add_correct.py", seeds=5))
    assert all(v["seeds"] == 5 for v in reply["correctness"]["variants"])


def test_a_bad_spec_is_an_error_naming_the_field(serve):
    reply = serve.request("evaluate", evaluate_args("fixtures/add_correct.py", spec=evaluate_args("fixtures/bad_dtype.yaml")["candidate"]))
    assert reply["verdict"] == "error"
    assert "'inputs.x.dtype'" in reply["error"]
    assert reply["field"] == "spec.inputs.x.dtype"


def test_a_missing_file_is_an_error_naming_the_argument(serve):
    reply = serve.request("evaluate", evaluate_args("fixtures/no_such_candidate.py"))
    assert reply["verdict"] == "error" and reply["field"] == "candidate"


def test_an_unknown_family_is_an_error(serve):
    reply = serve.request("evaluate", evaluate_args("fixtures/add_correct.py", family="bench-xpu"))
    assert reply["verdict"] == "error" and "bench-xpu" in reply["error"]


def test_protocol_errors_are_answered_not_fatal(serve):
    assert serve.send("this is not json")["verdict"] == "error"
    unknown = serve.send({"id": 41, "command": "compile"})
    assert unknown["id"] == 41 and unknown["verdict"] == "error" and unknown["field"] == "command"
    bad_args = serve.send({"id": 42, "command": "evaluate", "args": {"kernel": "x.py"}})
    assert bad_args["id"] == 42 and bad_args["field"] == "candidate"
    assert serve.request("ping")["ok"]


def test_probe_describes_the_device(serve):
    reply = serve.request("probe", {"device": DEVICE})
    assert reply["ok"] and reply["device"]["kind"] == DEVICE
    assert reply["device"]["torch"] and reply["device"]["triton"]
    assert isinstance(reply["properties"], dict) and reply["properties"]


def test_an_original_whose_search_updates_in_place_is_judged_by_one_calls_result(serve):
    """The original's own list lacks `restore_value`: its reference is what one call computes, so the
    fixed candidate is correct against it, and the log says why."""
    args = evaluate_args(
        "fixtures/axpy_autotune_restore.py",
        "axpy_inplace",
        kernel=str(HERE / "fixtures/axpy_autotune_no_restore.py"),
        spec=str(PROBLEMS / "axpy_inplace.yaml"),
    )
    reply = serve.request("evaluate", args)
    assert reply["verdict"] == "correct", reply
    assert "the original's autotune search of `axpy_kernel` changes y_ptr in place" in reply["log"], reply["log"]
