"""The one-shot command line and the HTTP server."""

import shutil

from conftest import DEVICE, FIXTURES, ON_GPU, PROBLEMS, HttpServe, file_content, harness_env, run_cli

KERNEL = str(PROBLEMS / "vector_add.py")
SPEC = str(PROBLEMS / "vector_add.yaml")


def cli_evaluate(candidate: str, *extra: str, env=None):
    flags = ["--no-timing"] if ON_GPU else []
    return run_cli("evaluate", "--kernel", KERNEL, "--candidate", candidate, "--device", DEVICE, *flags, *extra, env=env)


def test_a_verdict_exits_zero_and_prints_one_json_object():
    rc, out = cli_evaluate(str(FIXTURES / "add_zeros.py"))
    assert rc == 0
    assert out["verdict"] == "incorrect"
    assert set(out) >= {"verdict", "device", "compile", "correctness", "guard", "timing", "log"}


def test_the_spec_beside_the_kernel_is_found():
    rc, out = cli_evaluate(str(FIXTURES / "add_correct.py"))
    assert rc == 0 and out["verdict"] == "correct"
    assert [v["name"] for v in out["correctness"]["variants"]] == ["ci[0]", "ci[1]"]


def test_without_a_spec_the_kernelbench_get_inputs_convention_is_used(tmp_path):
    kernel = tmp_path / "vector_add.py"
    shutil.copy(KERNEL, kernel)  # no YAML beside this copy
    flags = ["--no-timing"] if ON_GPU else []
    rc, out = run_cli("evaluate", "--kernel", str(kernel), "--candidate", str(FIXTURES / "add_correct.py"), "--device", DEVICE, *flags)
    assert rc == 0 and out["verdict"] == "correct", out
    assert [v["name"] for v in out["correctness"]["variants"]] == ["default"]


def test_an_error_exits_two_and_names_the_field():
    rc, out = cli_evaluate(str(FIXTURES / "add_correct.py"), "--spec", str(FIXTURES / "bad_dims.yaml"))
    assert rc == 2
    assert out["verdict"] == "error" and "'ci[0].dims'" in out["error"]


def test_a_usage_error_is_json_too():
    rc, out = run_cli("evaluate", "--kernel", KERNEL)
    assert rc == 2 and out["verdict"] == "error" and "--candidate" in out["error"]


def test_the_candidate_sees_no_credentials_or_proxies_and_has_its_own_cache():
    env = harness_env(OPENAI_API_KEY="sk-test", HF_TOKEN="hf_test", https_proxy="http://127.0.0.1:9", TRITON_CACHE_DIR="/tmp/shared-cache")
    rc, out = cli_evaluate(str(FIXTURES / "add_env_check.py"), env=env)
    assert rc == 0 and out["verdict"] == "correct", out["message"]


def test_probe_prints_the_device():
    rc, out = run_cli("probe", "--device", DEVICE)
    assert rc == 0 and out["device"]["kind"] == DEVICE


def test_http_server_answers_evaluate_probe_ping_and_shutdown():
    server = HttpServe(token="t0ken")
    try:
        status, body = server.post("/ping", {})
        assert status == 200 and body["ok"]
        args = {
            "kernel": file_content(KERNEL),
            "spec": file_content(SPEC),
            "candidate": file_content(FIXTURES / "add_torch.py"),
            "device": DEVICE,
        }
        status, body = server.post("/evaluate", {"id": "h1", "args": args})
        assert status == 200 and body["id"] == "h1" and body["verdict"] == "rejected", body
        status, body = server.post("/evaluate", {**args, "candidate": file_content(FIXTURES / "add_segfault.py")})
        assert status == 200 and body["verdict"] == "crashed"
        status, body = server.post(
            "/", {"id": 9, "command": "evaluate", "args": {**args, "candidate": file_content(FIXTURES / "add_zeros.py")}}
        )
        assert status == 200 and body["id"] == 9 and body["verdict"] == "incorrect"
        status, body = server.post("/probe", {"device": DEVICE})
        assert status == 200 and body["device"]["kind"] == DEVICE
        status, body = server.post("/shutdown", {})
        assert status == 200 and body["ok"]
        assert server.proc.wait(timeout=60) == 0
    finally:
        server.close()
