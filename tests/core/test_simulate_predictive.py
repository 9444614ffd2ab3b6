"""`simulate` with spec.predictive (docs/predictive.md "simulate"): the replay never lets the
model see a pass's own value or later ones; prediction runs ahead of a daily ramp; the figures
(pod-seconds short, replica-seconds, scale events); the CLI prints both runs."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from autoscaler.core import parse_spec
from autoscaler.core.controls_document import parse_controls
from autoscaler.core.model import NS
from autoscaler.core.replay_figures import RunFigures, run_figures
from autoscaler.core.simulate import SimPoint, SimStep, simulate

T0 = 1_767_225_600 * NS  # 2026-01-01T00:00:00Z
STEP = 60  # seconds between passes: fast enough for three days in a test
DAY_STEPS = 86400 // STEP

SPEC: dict[str, Any] = {
    "minReplicas": 1,
    "maxReplicas": 50,
    "metrics": [
        {
            "type": "External",
            "external": {
                "metric": {"name": "rps"},
                "target": {"type": "AverageValue", "averageValue": "10"},
            },
        }
    ],
    "predictive": {"mode": "Scale", "horizon": "5m", "history": "49h", "seasonality": ["24h"]},
}


def ramp(i: int) -> float:
    """10 at night, 200 from 08:00 to 18:00 UTC: a steep morning step every day."""
    hour = (i % DAY_STEPS) * STEP / 3600
    return 200.0 if 8 <= hour < 18 else 10.0


def timeline(values: list[float]) -> list[SimPoint]:
    return [SimPoint(T0 + i * STEP * NS, (v,)) for i, v in enumerate(values)]


def run(values: list[float], *, predictive: bool = True) -> list[SimStep]:
    obj = {"spec": SPEC}
    controls = parse_controls({}, obj)
    if not predictive:
        controls = replace(controls, predictive=None)
    return simulate(
        parse_spec(SPEC, "spec"),
        timeline(values),
        replicas=1,
        pod_ready_delay=60,
        controls=controls,
    )


THREE_DAYS = [ramp(i) for i in range(3 * DAY_STEPS)]
CUT = 2 * DAY_STEPS + 7 * 60 + 57  # day 3, 07:57, three minutes before the ramp


def test_the_replay_never_peeks() -> None:
    """Changing every value from a pass on changes nothing before that pass."""
    honest = run(THREE_DAYS)
    leaked = run(THREE_DAYS[:CUT] + [1e6] * (len(THREE_DAYS) - CUT))
    assert honest[:CUT] == leaked[:CUT]
    assert honest[CUT] != leaked[CUT]  # the pass itself sees its own value: the cut is real
    assert any(f is not None for s in honest[:CUT] for f in s.forecast)  # the model was Ready


def test_prediction_is_ready_before_the_ramp_and_reactive_is_not() -> None:
    with_p = run(THREE_DAYS)
    without = run(THREE_DAYS, predictive=False)
    at_eight = 2 * DAY_STEPS + 8 * 60  # day 3, 08:00: demand 20 pods
    assert with_p[at_eight].ready >= 20
    assert without[at_eight].ready < 20
    day3 = T0 + 2 * 86400 * NS
    spec = parse_spec(SPEC, "spec")
    a = run_figures(spec, without, since=day3)
    b = run_figures(spec, with_p, since=day3)
    assert b.short_pod_seconds < a.short_pod_seconds / 2
    assert b.replica_seconds <= a.replica_seconds * 1.1


def step(t: int, value: float, current: int, ready: int, desired: int) -> SimStep:
    return SimStep(T0 + t * NS, (value,), current, ready, desired, "")


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        pytest.param(
            [step(0, 30, 2, 2, 3), step(15, 30, 3, 2, 3), step(30, 30, 3, 3, 3)],
            RunFigures(15.0 + 15.0, 90.0, 1, 30.0),
            id="one-pod-short-for-two-passes",
        ),
        pytest.param(
            [step(0, 10, 2, 2, 1), step(10, 10, 1, 1, 1)],
            RunFigures(0.0, 10.0, 1, 10.0),
            id="over-provisioned-is-not-short",
        ),
        pytest.param(
            [step(0, 25, 2, 2, 2), step(60, 25, 2, 2, 2)],
            RunFigures(30.0, 120.0, 0, 60.0),
            id="half-a-pod-short-for-a-minute",
        ),
    ],
)
def test_figures(steps: list[SimStep], want: RunFigures) -> None:
    assert run_figures(parse_spec(SPEC, "spec"), steps) == want


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autoscaler", "simulate", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def write(tmp_path: Path, spec: dict[str, Any], values: list[float]) -> tuple[str, str]:
    s = tmp_path / "spec.json"
    s.write_text(json.dumps({"spec": spec}))
    t = tmp_path / "load.csv"
    rows = ["time,rps"] + [f"{T0 // NS + i * STEP},{v}" for i, v in enumerate(values)]
    t.write_text("\n".join(rows) + "\n")
    return str(s), str(t)


def test_cli_prints_both_runs_and_plots_them(tmp_path: Path) -> None:
    spec, load = write(tmp_path, SPEC, THREE_DAYS)
    png = tmp_path / "both.png"
    proc = cli("--spec", spec, "--timeline", load, "--pod-ready-delay", "60", "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    tail = proc.stdout.splitlines()[-4:]
    assert tail[0].split() == ["without", "prediction", "with", "prediction"]
    assert tail[1].startswith("pod-seconds short of demand")
    assert tail[2].startswith("replica-seconds")
    assert tail[3].startswith("scale events")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    proc = cli("--spec", spec, "--timeline", load, "--pod-ready-delay", "60", "--json")
    last = json.loads(proc.stdout.splitlines()[-1])
    spec_obj = parse_spec(SPEC, "spec")
    want = run_figures(spec_obj, run(THREE_DAYS, predictive=False))
    assert last["comparison"]["withoutPrediction"]["scaleEvents"] == want.scale_events


def test_cli_refuses_a_bad_predictive_block(tmp_path: Path) -> None:
    spec, load = write(tmp_path, {**SPEC, "predictive": {"history": "14d"}}, [1.0])
    proc = cli("--spec", spec, "--timeline", load)
    assert proc.returncode == 2
    assert "spec.predictive.history: must be a Go duration such as 336h" in proc.stderr
    assert "Traceback" not in proc.stderr
