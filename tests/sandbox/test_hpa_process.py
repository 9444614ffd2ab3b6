"""`promscaler-sandbox serve --hpa-controller` with kube-controller-manager's flag names."""

import asyncio
import re
import shutil
import signal
import sys

import pytest

HPA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: lost}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nope}
  maxReplicas: 3
"""


async def _serve(tmp_path, *flags):
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sandbox",
        "serve",
        "--port",
        "0",
        "--kubeconfig",
        str(tmp_path / "kubeconfig"),
        *flags,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def _kubectl(kubeconfig, *args, stdin=b""):
    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        "--kubeconfig",
        str(kubeconfig),
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin), 30)
    assert proc.returncode == 0, err.decode()
    return out.decode()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_serve_runs_the_hpa_controller_at_the_given_sync_period(tmp_path):
    proc = await _serve(
        tmp_path,
        "--hpa-controller",
        "--horizontal-pod-autoscaler-sync-period",
        "200ms",
        "--horizontal-pod-autoscaler-tolerance",
        "0.05",
    )
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
        assert re.search(r"port (\d+)", line)
        await _kubectl(tmp_path / "kubeconfig", "apply", "-f", "-", stdin=HPA.encode())
        reason = ""
        for _ in range(100):
            reason = await _kubectl(
                tmp_path / "kubeconfig",
                "get",
                "hpa",
                "lost",
                "-o",
                'jsonpath={.status.conditions[?(@.type=="AbleToScale")].reason}',
            )
            if reason:
                break
            await asyncio.sleep(0.1)
        assert reason == "FailedGetScale"
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 20)
    assert code == 0


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        pytest.param(
            ["--horizontal-pod-autoscaler-sync-period", "soon"],
            "invalid duration 'soon'",
            id="bad-duration",
        ),
        pytest.param(
            ["--horizontal-pod-autoscaler-sync-period", "0s"], "must be > 0", id="zero-period"
        ),
        pytest.param(
            ["--horizontal-pod-autoscaler-tolerance", "lots"],
            "invalid float value",
            id="bad-tolerance",
        ),
    ],
)
def test_bad_flag_is_a_one_line_error(tmp_path, capsys, flags, needle):
    from sandbox.__main__ import main

    argv = ["serve", "--port", "0", "--kubeconfig", str(tmp_path / "k"), "--hpa-controller"]
    try:
        code = main([*argv, *flags])
    except SystemExit as stop:  # argparse's own errors
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2
    assert needle in err
    assert "Traceback" not in err
    assert not (tmp_path / "k").exists(), "nothing started"
