"""One real harness result per verdict the CPU interpreter can produce, stored as JSON in
tests/fixtures/harness_results/ for the Rust client's protocol test (`accepted`/`slower` need a GPU:
their JSON there is the contract's example). Run: PYTHONPATH=server/harness python tests/harness/capture_results.py
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "server", "harness")]
os.chdir(HERE)
from cases import VERDICT_CASES  # noqa: E402  (after the path set-up above)
from xeforge_harness import service  # noqa: E402
from xeforge_harness.pool import Workers  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def save(result, name):
    """Machine paths (checkout, temp dirs, interpreter) are replaced, so the files say the same anywhere."""
    text = json.dumps(result, indent=1).replace(REPO, "/repo")
    text = re.sub(r"/tmp/xeforge-(\w+)-\w+", r"/tmp/xeforge-\1", text)
    text = re.sub(r'[^"\s]*?/site-packages/', "site-packages/", text)
    text = re.sub(r'[^"\s]*?/lib/python3\.\d+/', "python/", text)
    with open(os.path.join(out, name + ".json"), "w") as f:
        f.write(text + "\n")


out = os.path.abspath(os.path.join(HERE, "..", "fixtures", "harness_results"))
seen = set()
with Workers() as w:
    for cand, prob, verdict, _ in VERDICT_CASES:
        if verdict in seen:
            continue
        args = {"kernel": f"problems/{prob}.py", "candidate": cand, "device": "cpu"}
        if verdict == "timeout":
            args["timeout"] = 8.0
        r = service.evaluate(args, w)
        seen.add(r["verdict"])
        save(r, r["verdict"])
    # error: a file with neither Model nor entry, after the harness started its processes
    r = service.evaluate(
        {
            "kernel": "../../examples/kernels/softmax_clean.py",
            "candidate": "../../examples/kernels/softmax_clean.py",
            "spec": "problems/softmax.yaml",
            "device": "cpu",
        },
        w,
    )
    save(r, "error")
    r = service.evaluate({"kernel": "problems/nope.py", "candidate": "x.py", "device": "cpu"}, w)
    save(r, "error_argument")
print(sorted(os.listdir(out)))
