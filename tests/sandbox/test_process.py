"""`python -m sandbox serve`: a process that writes a kubeconfig and stops cleanly on signals."""

import asyncio
import re
import shutil
import signal
import sys

import pytest
import yaml


@pytest.mark.parametrize("loop", ["auto", "asyncio"])  # auto: uvloop, a dependency here
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
async def test_serve_writes_kubeconfig_and_exits_zero_on_signal(tmp_path, sig, loop):
    kubeconfig = tmp_path / "kube" / "config"
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump({"users": [{"name": "viewer", "token": "view-token"}]}))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sandbox",
        "serve",
        "--port",
        "0",
        "--kubeconfig",
        str(kubeconfig),
        "--config",
        str(policy),
        "--pod-ready-delay",
        "0.1",
        "--event-loop",
        loop,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
        port = int(re.search(r"port (\d+)", line).group(1))
        doc = yaml.safe_load(kubeconfig.read_text())
        assert doc["clusters"][0]["cluster"]["server"] == f"https://127.0.0.1:{port}"
        assert doc["users"][0]["user"]["token"]
        if shutil.which("kubectl"):
            kubectl = await asyncio.create_subprocess_exec(
                "kubectl",
                "--kubeconfig",
                str(kubeconfig),
                "get",
                "ns",
                "kube-system",
                "-o",
                "name",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
            )
            out, _ = await asyncio.wait_for(kubectl.communicate(), 30)
            assert out.decode().strip() == "namespace/kube-system"
    finally:
        proc.send_signal(sig)
        code = await asyncio.wait_for(proc.wait(), 20)
    assert code == 0


async def test_bad_config_is_reported_with_exit_2(tmp_path):
    bad = tmp_path / "policy.yaml"
    bad.write_text("rules:\n- users: [x]\n")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sandbox",
        "serve",
        "--port",
        "0",
        "--kubeconfig",
        str(tmp_path / "k"),
        "--config",
        str(bad),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 2
    assert "rules[0].verbs" in err.decode()


async def test_an_unknown_event_loop_is_reported_with_exit_2(tmp_path):
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sandbox",
        "serve",
        "--kubeconfig",
        str(tmp_path / "k"),
        "--event-loop",
        "tokio",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 2
    assert "--event-loop" in err.decode()
    assert "Traceback" not in err.decode()
