"""A running job can be cancelled (the Ray lane's path for `ray.cancel`): the zygote kills the job's
processes, answers with an `error` marked `cancelled` (no verdict), and judges the next job as usual."""

from __future__ import annotations

import time

from conftest import DEVICE, pool_job
from xeforge_harness.pool import Zygote


def test_a_cancelled_job_stops_and_the_zygote_goes_on():
    with Zygote(interpret=DEVICE == "cpu") as zygote:
        zygote.start()
        asked = time.monotonic() + 3.0  # inside the candidate's sleeps (one second per forward)
        started = time.monotonic()
        reply = zygote.run(pool_job("fixtures/add_sleepy.py"), cancelled=lambda: time.monotonic() > asked)
        took = time.monotonic() - started
        assert reply["verdict"] == "error" and reply.get("cancelled") is True, reply
        assert "cancelled" in reply["message"]
        assert took < 10, f"the cancelled job ran on for {took:.1f} s"
        after = zygote.run(pool_job("adversarial/legit_add_block1024.py"))
        assert after["verdict"] == "correct", after.get("message")
