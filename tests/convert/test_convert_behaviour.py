"""Converted ScaledObjects replayed by `simulate` (the decision core, controls included) behave
as KEDA documents them: the cron page's example wakes to desiredReplicas when its window opens
in Asia/Kolkata, holds it while open, and comes back to 0 after the window closes."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from autoscaler.convert import convert
from tests.convert.keda_docs import DOCS


def replay(tmp_path: Path, start: datetime, minutes: int, replicas: int) -> list[dict]:
    spec = tmp_path / "autoscaler.yaml"
    spec.write_text(yaml.safe_dump(convert(yaml.safe_load(DOCS["cron-page"])).autoscaler))
    points = [start + timedelta(seconds=15 * i) for i in range(minutes * 4)]
    timeline = tmp_path / "timeline.csv"
    # the idle metric reads 0 on every pass
    timeline.write_text("time,idle\n" + "".join(f"{p:%Y-%m-%dT%H:%M:%SZ},0\n" for p in points))
    args = ["--spec", str(spec), "--timeline", str(timeline), "--replicas", str(replicas)]
    out = subprocess.run(
        [sys.executable, "-m", "autoscaler", "simulate", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_the_cron_page_example_wakes_at_06_00_kolkata(tmp_path):
    # 06:00 in Asia/Kolkata (UTC+05:30) is 00:30 UTC
    rows = replay(tmp_path, datetime(2026, 3, 2, 0, 28, tzinfo=UTC), 4, replicas=0)
    desired = {r["time"]: r["desired"] for r in rows}
    assert desired["2026-03-02T00:29:45Z"] == 0
    assert desired["2026-03-02T00:30:00Z"] == 10
    assert {d for t, d in desired.items() if t >= "2026-03-02T00:30:00Z"} == {10}


def test_the_cron_page_example_returns_to_0_after_20_00_kolkata(tmp_path):
    # 20:00 in Asia/Kolkata is 14:30 UTC; KEDA reaches 0 cooldownPeriod (300 s) after it
    rows = replay(tmp_path, datetime(2026, 3, 2, 14, 25, tzinfo=UTC), 25, replicas=10)
    before = [r["desired"] for r in rows if r["time"] < "2026-03-02T14:30:00Z"]
    after = [r["desired"] for r in rows if r["time"] >= "2026-03-02T14:30:00Z"]
    assert set(before) == {10}
    assert after[-1] == 0
    assert after == sorted(after, reverse=True)  # down only, never back up
