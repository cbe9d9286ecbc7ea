"""The GPU benchmark scripts read the generalisation suite's specs without PyYAML (a bare device
machine may lack it): their small reader must give what PyYAML gives, for every spec of the suite."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

STAGES = Path(__file__).resolve().parents[1] / "bench" / "stages"
sys.path.insert(0, str(STAGES))
import suite  # noqa: E402

SPECS = sorted((STAGES / "general").glob("*.yaml"))


def test_the_suite_has_its_kernels():
    assert len(SPECS) >= 20


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_the_small_reader_agrees_with_pyyaml(path, monkeypatch):
    expected = yaml.safe_load(path.read_text())
    monkeypatch.setitem(sys.modules, "yaml", None)  # `import yaml` fails: the fallback reader runs
    assert suite.read_spec(str(path)) == expected


def test_inputs_follow_the_variant_and_the_seed():
    spec = suite.read_spec(str(STAGES / "general" / "rotary.yaml"))
    variant = spec["ci"][0]
    a, b = suite.make_inputs(spec, variant, "cpu"), suite.make_inputs(spec, variant, "cpu", seed=1)
    assert [tuple(t.shape) for t in a] == [(16, 6, 64), (16, 32), (16, 32)]
    assert all(str(t.dtype) == "torch.float16" for t in a)
    assert not a[0].equal(b[0])
