"""`make soak` in its CI form: three minutes, a fixed seed, every invariant checked.

The soak runs as a user runs it (a subprocess) and fails on any breach; this test also checks
that it wrote its table and picture. It needs the sandbox (the fault plan, the audit, restarts
with --state-file), so it skips against a real cluster.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SEED = 42  # a fixed schedule in CI; `SOAK_SEED=... make soak` replays any other

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.prometheus,
    pytest.mark.timeout(600),
    pytest.mark.sandbox_only("the sandbox's fault plan, write audit and --state-file restarts"),
]


def test_soak_short_form_holds_every_invariant(tmp_path):
    out = tmp_path / "soak"
    proc = subprocess.run(
        [sys.executable, "-m", "soak", "--minutes", "3", "--seed", str(SEED), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=560,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    table = (out / "soak.txt").read_text()
    assert ": PASS" in table.splitlines()[0]
    assert "decide --jsonl replays every logged pass exactly" in table
    assert (out / "soak.png").stat().st_size > 10_000


def _started_from(out: Path) -> dict[int, str]:
    """Live processes that name `out` on their command line, by pid (the soak's sandbox,
    adapters, autoscalers and Prometheus all take paths under it)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # gone meanwhile
        if str(out) in cmdline and state != "Z":
            found[int(entry.name)] = cmdline
    return found


def test_a_terminated_soak_stops_everything_it_started(tmp_path):
    out = tmp_path / "soak"
    proc = subprocess.Popen(
        [sys.executable, "-m", "soak", "--minutes", "3", "--seed", str(SEED), "--out", str(out)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "run" / "decisions-0.jsonl").exists():  # the autoscalers are up
            assert proc.poll() is None, proc.stdout.read().decode()[-3000:] if proc.stdout else ""
            assert time.monotonic() < deadline, "the soak's stack did not come up in 120 s"
            time.sleep(0.5)
        assert _started_from(out), "the stack's processes are visible before the signal"
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=90)[0].decode()
        assert proc.returncode == 130, output[-3000:]
        assert "interrupted; everything the soak started has been stopped" in output
        assert list(_started_from(out).values()) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _started_from(out):  # a failed run leaves nothing behind for later tests
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
