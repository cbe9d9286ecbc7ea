"""How often the local pool asks a child about the devices before the first request: every probe is
a process that starts the device's runtime, a second of a stage's start on an H100 host."""

from __future__ import annotations

from xeforge_harness import pool


class Probe:
    """Stands in for the compiler lane: answers probes as a host with `count` devices of `kind`."""

    def __init__(self, kind: str, count: int):
        self.kind, self.count = kind, count
        self.jobs: list[dict] = []

    def run(self, job: dict, cancelled=None) -> dict:
        self.jobs.append(job)
        return {"ok": True, "device": {"kind": self.kind}, "count": self.count}


def workers(kind: str, count: int) -> tuple[pool.Workers, Probe]:
    w = pool.Workers()
    probe = Probe(kind, count)
    w._probe = probe  # type: ignore[assignment]  (no child process is started)
    return w, probe


def test_the_probe_that_resolved_auto_also_counts_its_devices():
    w, probe = workers("cuda", 1)
    assert w.resolve("auto") == ("cuda", None)
    assert w._device_ids("cuda") == []  # one device: the compiler lane itself, unpinned
    assert len(probe.jobs) == 1


def test_several_devices_get_a_pinned_lane_each_from_the_same_probe(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    w, probe = workers("cuda", 2)
    w.resolve("auto")
    assert w._device_ids("cuda") == ["0", "1"]
    assert len(probe.jobs) == 1


def test_a_kind_auto_did_not_find_is_probed_on_its_own():
    w, probe = workers("cuda", 2)
    w.resolve("auto")
    w._device_ids("xpu")
    assert [j["args"]["device"] for j in probe.jobs] == ["auto", "xpu"]
