"""`simulate` with the controls: a timeline row without a value is a failed metric (an outage
replays into fallback), schedules open in their own zones, pause holds, and `--plot` shades
fallback, pause and open windows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autoscaler.core.simulate import SimPoint, simulate
from autoscaler.simulate_cli import _spans, figure, load_spec
from common.kubetime import parse_time_ns
from tests.core.test_simulate import cli, write

NS = 1_000_000_000
QUEUE = {
    "type": "External",
    "external": {
        "metric": {"name": "queue_depth"},
        "target": {"type": "AverageValue", "averageValue": "10"},
    },
}


def spec_file(tmp_path: Path, spec: dict[str, Any], **meta: Any) -> str:
    obj = {"apiVersion": "promscaler.dev/v1alpha1", "kind": "Autoscaler", "spec": spec}
    if meta:
        obj["metadata"] = meta
    return write(tmp_path, "autoscaler.json", obj)


def test_an_outage_replays_into_fallback_and_back(tmp_path: Path) -> None:
    spec = {
        "minReplicas": 1,
        "maxReplicas": 20,
        "metrics": [QUEUE],
        "fallback": {"failureThreshold": 2, "recoveryThreshold": 2, "replicas": 6},
    }
    values = ["20", "20", "", "", "", "", "20", "20", "20"]  # 4 passes without data
    rows = ["time,queue"] + [f"{1_767_225_600 + 15 * i},{v}" for i, v in enumerate(values)]
    proc = cli(
        "--spec",
        spec_file(tmp_path, spec),
        "--timeline",
        write(tmp_path, "t.csv", "\n".join(rows)),
        "--json",
        "--replicas",
        "2",
        "--controller",
        '{"downscaleStabilizationSeconds": 0}',
    )
    assert proc.returncode == 0, proc.stderr
    steps = [json.loads(line) for line in proc.stdout.splitlines()]
    fallback = [s["fallback"] for s in steps]
    assert fallback == [False] * 4 + [True] * 3 + [False] * 2  # in after 3 failures, out after 2
    # 2 -> 4 -> 6: the scale-up limit (max(2 x current, 4)) applies to a fallback proposal too
    assert [s["desired"] for s in steps] == [2, 2, 2, 2, 4, 6, 6, 2, 2]


def test_schedules_replay_in_their_time_zone(tmp_path: Path) -> None:
    # Europe/Berlin springs forward at 01:00Z on 2026-03-29: a 02:30 window opens at 03:00 CEST
    spec = {
        "minReplicas": 1,
        "maxReplicas": 20,
        "metrics": [QUEUE],
        "schedules": [
            {
                "name": "night",
                "schedule": "30 2 * * *",
                "timeZone": "Europe/Berlin",
                "duration": "30m",
                "minReplicas": 5,
            },
        ],
    }
    start = parse_time_ns("2026-03-29T00:30:00Z") // NS
    rows = ["time,queue"] + [f"{start + 600 * i},1" for i in range(8)]  # 00:30Z .. 01:40Z
    proc = cli(
        "--spec",
        spec_file(tmp_path, spec),
        "--timeline",
        write(tmp_path, "t.csv", "\n".join(rows)),
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[-1] == "controls"
    marks = {line.split()[0]: line.split()[-1] for line in lines[1:]}
    opened = [t for t, m in marks.items() if m == "schedule:night"]
    assert opened == ["2026-03-29T01:00:00Z", "2026-03-29T01:10:00Z", "2026-03-29T01:20:00Z"]
    desired = {line.split()[0]: int(line.split()[-2]) for line in lines[1:]}
    assert desired["2026-03-29T01:00:00Z"] == 5
    assert desired["2026-03-29T01:30:00Z"] == 1


def test_pause_annotations_hold_the_replay(tmp_path: Path) -> None:
    spec = {"minReplicas": 1, "maxReplicas": 20, "metrics": [QUEUE]}
    path = spec_file(tmp_path, spec, annotations={"promscaler.dev/paused-replicas": "4"})
    parsed, controls = load_spec(path)
    points = [SimPoint((1_767_225_600 + 15 * i) * NS, (90.0,)) for i in range(3)]
    steps = simulate(parsed, points, replicas=2, controls=controls)
    assert [s.desired for s in steps] == [4, 4, 4]
    assert all(s.paused for s in steps)


@pytest.mark.parametrize(
    ("flags", "spans"),
    [
        pytest.param([False, False], [], id="none"),
        pytest.param([True, True, False], [(0, 2)], id="leading"),
        pytest.param([False, True, False, True], [(1, 2), (3, 3)], id="two-and-open-ended"),
    ],
)
def test_spans(flags: list[bool], spans: list[tuple[int, int]]) -> None:
    assert _spans(list(range(len(flags))), flags) == spans  # type: ignore[arg-type]


def test_plot_shades_fallback_pause_and_windows(tmp_path: Path) -> None:
    spec = {
        "minReplicas": 1,
        "maxReplicas": 20,
        "metrics": [QUEUE],
        "fallback": {"failureThreshold": 1, "replicas": 3},
        "schedules": [
            {"name": "rush", "schedule": "* * * * *", "duration": "20s", "minReplicas": 2}
        ],
    }
    path = spec_file(tmp_path, spec, annotations={"promscaler.dev/paused": "true"})
    parsed, controls = load_spec(path)
    points = [SimPoint((1_767_225_600 + 15 * i) * NS, (None,)) for i in range(6)]
    steps = simulate(parsed, points, replicas=2, controls=controls)
    plt, fig = figure(steps)
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    plt.close(fig)
    assert {"fallback", "paused", "schedule rush"} <= labels
