"""The harness's source check (`child/source.py`): which constructs a candidate adds are refused before
anything runs, and which spellings of ordinary code are not."""

import pytest
from xeforge_harness.child.source import reaching

REACHES = [
    ("import sys as S\nm = S.modules['xeforge_harness.child.guard']\n", "S.modules"),
    ("import sys\nS = sys\nT = S\nm = T.modules\n", "T.modules"),
    ("from os import sys as s\nm = s.modules\n", "s.modules"),
    ("import sys\nm = getattr(sys, 'modules')\n", "getattr(sys, 'modules')"),
    ("import os\nm = getattr(os, 'sys')\n", "getattr(os, 'sys')"),
    ("import io, torch\nb = io.BytesIO()\ntorch.save(x, b)\n", "torch.save"),
    ("import torch\nt = torch.frombuffer(b, dtype=torch.float32)\n", "torch.frombuffer"),
    ("import struct\n", "struct"),
    ("import torch\nMODE = 'fast' if torch.cuda.is_available() else 'safe'\n", "branches on where it runs"),
    ("def f(x):\n    if not x.is_cuda:\n        raise ValueError('gpu only')\n    else:\n        return x\n", "branches on where it runs"),
    # the device read into a name first, then compared through it (or a slice of it)
    (
        "def f(x, n):\n    where = str(x.device)\n    w = where[:2]\n    if w != 'c' + 'p':\n        n = n - 1\n    return n\n",
        "branches on where it runs",
    ),
    ("def f(x, n):\n    d = x.device\n    return n if d.index is None else n - 1\n", "branches on where it runs"),
    (
        "def f(x, n):\n    if getattr(x, 'is_' + 'cuda') or getattr(x, 'is_cuda'):\n        n = 0\n    return n\n",
        "branches on where it runs",
    ),
]

ORDINARY = [
    "import torch\nDEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
    "import torch\nDEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
    "def f(x):\n    if not x.is_cuda:\n        raise ValueError('inputs must be on the GPU')\n    return x\n",
    "import torch\ny = getattr(torch, 'float16')\n",
    # a tensor made on the input's device holds no answer to where it runs
    "import torch\ndef f(x):\n    out = torch.empty(x.shape, device=x.device)\n    if out.numel() == 0:\n        return out\n    return out\n",
    "def f(x):\n    dev = x.device\n    return x.to(dev)\n",
]


@pytest.mark.parametrize(("text", "construct"), REACHES, ids=[c for _, c in REACHES])
def test_a_construct_that_reaches_the_harness_or_computes_elsewhere_is_found(text, construct):
    found = [c for c, _ in reaching(text)]
    assert any(construct in c for c in found), found


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_spellings_are_not(text):
    assert reaching(text) == []
