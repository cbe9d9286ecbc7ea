"""Where the timed loop puts the judge and the workers (child/affinity.py); the kernel's affinity
calls are replaced by a table, so the test runs on any machine."""

from __future__ import annotations

import pytest
from xeforge_harness.child import affinity


@pytest.fixture
def threads():
    return {100: [101, 102], 200: [201]}  # worker pid -> its threads


@pytest.fixture
def table(monkeypatch, threads):
    cpus = {0: {0, 1, 2, 3}, 101: {0, 1, 2, 3}, 102: {0, 1, 2, 3}, 201: {0, 1, 2, 3}}
    monkeypatch.setattr(affinity.os, "sched_getaffinity", lambda tid: set(cpus[tid]))
    monkeypatch.setattr(affinity.os, "sched_setaffinity", lambda tid, c: cpus.__setitem__(tid, set(c)))
    monkeypatch.setattr(affinity, "_threads", lambda pid: threads.get(pid, []))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("ZE_AFFINITY_MASK", raising=False)
    return cpus


def test_the_judge_gets_one_core_and_every_thread_of_both_workers_another(monkeypatch, table):
    monkeypatch.setattr(affinity, "physical_cores", lambda: [0, 1, 2, 3])
    p = affinity.Placement([100, 200])
    assert p.where == {"judge": 1, "workers": 2}
    assert table == {0: {1}, 101: {2}, 102: {2}, 201: {2}}
    p.release()
    assert all(c == {0, 1, 2, 3} for c in table.values())


def test_released_between_batches_a_thread_born_pinned_gets_its_process_s_cpus(monkeypatch, table, threads):
    monkeypatch.setattr(affinity, "physical_cores", lambda: [0, 1, 2, 3])
    p = affinity.Placement([100, 200])
    # a worker starts a thread pool while pinned: the new thread inherits the one core
    threads[100].append(103)
    table[103] = {2}
    p.release()
    assert all(c == {0, 1, 2, 3} for c in table.values())
    p.hold()
    assert table == {0: {1}, 101: {2}, 102: {2}, 103: {2}, 201: {2}}
    p.release()
    assert all(c == {0, 1, 2, 3} for c in table.values())


def test_comparisons_on_another_device_get_other_cores(monkeypatch, table):
    monkeypatch.setattr(affinity, "physical_cores", lambda: [0, 1, 2, 3, 4, 5])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert affinity.Placement([100]).where == {"judge": 3, "workers": 4}


def test_a_host_with_fewer_than_three_physical_cores_is_left_alone(monkeypatch, table):
    monkeypatch.setattr(affinity, "physical_cores", lambda: [0, 1])
    p = affinity.Placement([100, 200])
    assert p.where is None
    assert all(c == {0, 1, 2, 3} for c in table.values())


def test_cpu_lists_as_the_kernel_writes_them():
    assert affinity.cpu_list("0-3,8\n") == {0, 1, 2, 3, 8}
    assert affinity.cpu_list("5") == {5}
