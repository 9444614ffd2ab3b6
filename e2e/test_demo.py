"""`make demo` in its short form: the whole bundle on the sandbox, checked by what it printed.

The demo runs as a user would run it (a subprocess), with the load shape played three times
faster. The replica paths it prints must show both workloads following the load: `web` scales
up under the ramp and back down when the load drops; `worker` goes to zero when its queue is
empty and wakes again for the burst.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.prometheus,
    pytest.mark.timeout(240),
    pytest.mark.sandbox_only("the demo starts its own sandbox, Prometheus and adapter processes"),
]


def path_of(output: str, name: str) -> list[int]:
    line = next(line for line in output.splitlines() if line.startswith(f"{name} replica path:"))
    return [int(v) for v in line.split(":", 1)[1].split("->")]


def test_demo_short_form_follows_the_load(tmp_path):
    out = tmp_path / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "demo", "--speed", "3", "--plain", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=200,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    web = path_of(proc.stdout, "web")
    worker = path_of(proc.stdout, "worker")
    peak = web.index(max(web))
    assert web[0] == 1
    assert max(web) >= 4, f"web should scale out under 160 req/s at 20 per pod: {web}"
    assert min(web[peak:]) < max(web), f"web should scale back in when load drops: {web}"
    assert worker[0] == 1
    first_zero = worker.index(0)
    assert any(v > 0 for v in worker[first_zero:]), f"worker should wake from zero: {worker}"
    assert worker[-1] == 0, f"worker should end at zero with an empty queue: {worker}"

    picture = out / "demo.png"
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"picture: {picture}" in proc.stdout
    rows = (out / "demo.csv").read_text().splitlines()
    assert len(rows) > 30

    # nothing the demo started is left running
    leftovers = subprocess.run(
        ["pgrep", "-f", str(out)], capture_output=True, text=True, check=False
    ).stdout.split()
    assert leftovers == []
