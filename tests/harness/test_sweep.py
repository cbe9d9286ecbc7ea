"""`sweep`: several candidates of one problem judged by one judge, the trusted side set up once.

A sweep must judge each candidate exactly as `evaluate` would: the adversarial matrix's cheats stay
cheats, and, since the trusted side is shared, no candidate may change the verdict of the one after
it. So every cheat is followed by a legitimate rewrite that must still come out legitimate.
"""

from __future__ import annotations

import importlib.util

import pytest
from conftest import DEVICE, HERE, ON_GPU, PROBLEMS, ServeSession, run_cli

ADV = HERE / "adversarial"
_spec = importlib.util.spec_from_file_location("xeforge_adversarial_cases_sweep", ADV / "cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

LEGIT = str(ADV / "legit_add_block1024.py")
LEGIT_VERDICTS = cases.LEGIT_VERDICTS_GPU if ON_GPU else cases.LEGIT_VERDICTS_CPU


def _vector_add_cases(expected: str) -> list[str]:
    return [
        f
        for f, problem, exp, gpu_only, _ in cases.CASES
        if problem == "vector_add" and exp == expected and (ON_GPU or not gpu_only) and cases.SESSION.get(f) != "fresh"
    ]  # attacks on the serve itself are test_adversarial's


def _sweep_args(candidates: list[str], **extra) -> dict:
    args = {
        "kernel": str(PROBLEMS / "vector_add.py"),
        "candidates": candidates,
        "device": DEVICE,
        "family": "ci",
        "runs": 20 if ON_GPU else 10,
        "warmup": 5 if ON_GPU else 2,
        "timeout": 60,
    }
    args.update(extra)
    return args


@pytest.fixture(scope="module")
def timed_serve():
    """A serve whose judges run the timed protocol even on the interpreter, so timed cheats are seen."""
    import os

    saved = os.environ.get("XEFORGE_HARNESS_CPU_TIMING")
    os.environ["XEFORGE_HARNESS_CPU_TIMING"] = "1"
    try:
        session = ServeSession()
    finally:
        if saved is None:
            os.environ.pop("XEFORGE_HARNESS_CPU_TIMING", None)
        else:
            os.environ["XEFORGE_HARNESS_CPU_TIMING"] = saved
    yield session
    session.close()


def test_every_cheat_stays_a_cheat_and_leaves_the_next_candidate_unharmed(timed_serve):
    cheats = _vector_add_cases("cheat")
    assert len(cheats) >= 20, cheats
    wrong = []
    # A sweep takes at most 64 candidates: 32 cheats, each followed by a legitimate rewrite, a sweep.
    for start in range(0, len(cheats), 32):
        order: list[tuple[str, str]] = []
        for cheat in cheats[start : start + 32]:
            order += [(cheat, "cheat"), ("legit_add_block1024.py", "legit")]
        reply = timed_serve.request("sweep", _sweep_args([str(ADV / f) for f, _ in order]), timeout=60 * len(order) + 120)
        assert reply.get("kind") == "sweep" and "verdict" not in reply, reply
        results = reply["results"]
        assert len(results) == len(order), (reply.get("stopped"), [r["verdict"] for r in results])
        for i, ((file, expected), result) in enumerate(zip(order, results)):
            allowed = cases.CHEAT_VERDICTS if expected == "cheat" else LEGIT_VERDICTS
            if result["verdict"] not in allowed:
                after = f" (after {order[i - 1][0]})" if expected == "legit" else ""
                wrong.append(f"{file}{after}: {result['verdict']}: {result['message'][:300]}")
        assert reply["stopped"] is None
    assert not wrong, "\n".join(wrong)


def test_legitimate_rewrites_come_out_as_evaluate_says(timed_serve):
    legit = [str(ADV / f) for f in _vector_add_cases("legit")]
    reply = timed_serve.request("sweep", _sweep_args(legit), timeout=600)
    assert len(reply["results"]) == len(legit), reply
    assert all(r["verdict"] in LEGIT_VERDICTS for r in reply["results"]), reply
    for r in reply["results"]:
        # Each result is a whole `evaluate` result, with its own share of the time.
        assert set(r) >= {"verdict", "message", "compile", "correctness", "guard", "timing", "elapsed", "log"}
        assert r["elapsed"]["candidate_s"] > 0
    assert reply["setup_s"] > 0


def test_a_budget_stops_starting_candidates_but_judges_the_minimum(timed_serve):
    reply = timed_serve.request("sweep", _sweep_args([LEGIT] * 6, budget_s=0.01, min_candidates=2), timeout=300)
    assert len(reply["results"]) == 2 and all(r["verdict"] in LEGIT_VERDICTS for r in reply["results"]), reply
    assert reply["stopped"].startswith("budget: 2 of 6"), reply["stopped"]


def test_a_judge_killed_mid_sweep_keeps_the_earlier_results_and_blames_the_running_candidate():
    # The guard keeps every known way of signalling the judge out of candidates, so the judge's death
    # is staged here: a real SIGKILL status, a channel that had carried one result.
    import os
    import signal

    from xeforge_harness import zygote

    pid = os.fork()
    if pid == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    done = {"verdict": "correct", "message": "ok"}
    report = {
        "phase": "candidate:timing",
        "device": {"kind": "cpu"},
        "groups": [],
        "partial": [done],
        "result": None,
        "timed_out": False,
        "status": status,
    }
    job = {"kind": "sweep", "args": {"candidates": ["a.py", "b.py", "c.py"]}}
    out = zygote._outcome(job, "/nonexistent", report, 30, 1.0)
    assert [r["verdict"] for r in out["results"]] == ["correct", "crashed"], out
    assert "candidate 2 of 3" in out["stopped"] and "SIGKILL" in out["stopped"], out["stopped"]
    assert "verdict" not in out  # the sweep as such did not fail: the results stand
    # Died during the trusted side's setup: nothing to blame on a candidate, an `error` for the sweep.
    report.update(phase="setup", partial=[])
    out = zygote._outcome(job, "/nonexistent", report, 30, 1.0)
    assert out["verdict"] == "error" and out["results"] == [] and out["kind"] == "sweep", out


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"candidate": LEGIT}, "candidate"),
        ({"candidates": []}, "candidates"),
        ({"candidates": [LEGIT, 3]}, "candidates"),
        ({"candidates": [LEGIT] * 65}, "candidates"),
        ({"budget_s": 0}, "budget_s"),
        ({"min_candidates": 0}, "min_candidates"),
        ({"candidates": [LEGIT, str(ADV / "no_such_file.py")]}, "candidates[1]"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(timed_serve, extra, field):
    reply = timed_serve.request("sweep", {**_sweep_args([LEGIT]), **extra}, timeout=60)
    assert reply["verdict"] == "error" and reply["field"] == field, reply
    assert reply["kind"] == "sweep" and reply["results"] == []


def test_the_command_line_sweeps_too():
    code, reply = run_cli(
        "sweep",
        "--kernel",
        str(PROBLEMS / "vector_add.py"),
        "--candidate",
        LEGIT,
        "--candidate",
        str(ADV / "add_zero_inputs.py"),
        "--device",
        DEVICE,
        "--family",
        "ci",
    )
    assert [r["verdict"] for r in reply["results"]][1] in cases.CHEAT_VERDICTS, reply
    assert reply["results"][0]["verdict"] in LEGIT_VERDICTS
    assert code == 0
