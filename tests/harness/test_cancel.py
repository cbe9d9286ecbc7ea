"""A running job can be cancelled (the Ray lane's path for `ray.cancel`): the zygote kills the job's
processes, answers with an `error` marked `cancelled` (no verdict), and judges the next job as usual."""

from __future__ import annotations

import time

from conftest import DEVICE, HERE, PROBLEMS
from xeforge_harness.pool import Zygote


def _job(candidate: str) -> dict:
    args = {
        "kernel": str(PROBLEMS / "vector_add.py"),
        "candidate": str(HERE / candidate),
        "spec": str(PROBLEMS / "vector_add.yaml"),
        "reference": None,
        "device": DEVICE,
        "family": "ci",
        "seeds": 3,
        "timeout": 120.0,
        "no_timing": True,
        "runs": 100,
        "warmup": 25,
        "timing_family": None,
        "stop_below": None,
    }
    return {"kind": "evaluate", "args": args, "timeout": 120.0}


def test_a_cancelled_job_stops_and_the_zygote_goes_on():
    with Zygote(interpret=DEVICE == "cpu") as zygote:
        zygote.start()
        asked = time.monotonic() + 3.0  # inside the candidate's sleeps (one second per forward)
        started = time.monotonic()
        reply = zygote.run(_job("fixtures/add_sleepy.py"), cancelled=lambda: time.monotonic() > asked)
        took = time.monotonic() - started
        assert reply["verdict"] == "error" and reply.get("cancelled") is True, reply
        assert "cancelled" in reply["message"]
        assert took < 10, f"the cancelled job ran on for {took:.1f} s"
        after = zygote.run(_job("adversarial/legit_add_block1024.py"))
        assert after["verdict"] == "correct", after.get("message")
