"""`simulate`: the load model, CSV/JSON timelines, a real Prometheus, and --plot."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from autoscaler.core import parse_spec
from autoscaler.core.model import NS
from autoscaler.core.simulate import SimPoint, simulate
from tests.support.prometheus import PrometheusServer, remote_write_sync

SPEC_CPU = {
    "minReplicas": 2,
    "maxReplicas": 10,
    "metrics": [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50},
            },
        }
    ],
}
SPEC_PODS = {
    "minReplicas": 1,
    "maxReplicas": 10,
    "metrics": [
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "qps"},
                "target": {"type": "AverageValue", "averageValue": "10"},
            },
        }
    ],
}
T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autoscaler", "simulate", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def write(tmp_path: Path, name: str, content: Any) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_load_model_spreads_total_over_ready_pods_and_delays_new_pods() -> None:
    spec = parse_spec(SPEC_PODS, "spec")
    timeline = [SimPoint((T0 + 15 * i) * NS, (40.0,)) for i in range(4)]
    steps = simulate(spec, timeline, replicas=1, pod_ready_delay=30)
    assert [(s.current, s.ready, s.desired) for s in steps] == [
        (1, 1, 4),
        (4, 1, 4),
        (4, 4, 4),
        (4, 4, 4),
    ]


def test_cpu_utilization_uses_the_request() -> None:
    spec = parse_spec(SPEC_CPU, "spec")
    steps = simulate(spec, [SimPoint(T0 * NS, (1.0,))], replicas=2, request_milli=500)
    assert steps[0].desired == 4  # 0.5 cores per pod = 100% of 500m against 50%


def test_missing_value_is_a_failed_metric() -> None:
    spec = parse_spec(SPEC_PODS, "spec")
    steps = simulate(spec, [SimPoint(T0 * NS, (None,))], replicas=3)
    assert steps[0].desired == 3
    assert "no data" in steps[0].summary


def test_csv_table_and_plot(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        "hpa.yaml",
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nspec:\n"
        + "".join(f"  {line}\n" for line in json.dumps(SPEC_CPU).splitlines()),
    )
    rows = ["time,cpu"] + [f"{T0 + 15 * i},{1.0 if i < 3 else 4.0}" for i in range(8)]
    timeline = write(tmp_path, "load.csv", "\n".join(rows) + "\n")
    png = tmp_path / "out.png"
    proc = cli("--spec", spec, "--timeline", timeline, "--request", "500m", "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["time", "metric[0]", "current", "ready", "desired"]
    assert lines[1].split() == ["2026-01-01T00:00:00Z", "1", "2", "2", "4"]
    assert len(lines) == 9
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_timeline_and_json_output(tmp_path: Path) -> None:
    spec = write(tmp_path, "spec.json", SPEC_PODS)
    timeline = json.dumps(
        [{"time": "2026-01-01T00:00:00Z", "value": 40}, {"time": T0 + 15, "values": [40]}]
    )
    proc = cli("--spec", spec, "--timeline", "-", "--json", stdin=timeline)
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["desired"] for o in out] == [4, 4]
    assert out[0]["time"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("spec", "timeline", "message"),
    [
        pytest.param(
            {"maxReplicas": "ten"},
            "time,v\n0,1\n",
            "spec.maxReplicas: must be an integer",
            id="bad-spec",
        ),
        pytest.param(
            SPEC_PODS, "time,a,b\n0,1,2\n", "2 value columns for 1 spec metrics", id="columns"
        ),
        pytest.param(SPEC_PODS, "time,v\n0,lots\n", "'lots' is not a number", id="bad-value"),
        pytest.param(SPEC_PODS, "time,v\nyesterday,1\n", "invalid time 'yesterday'", id="bad-time"),
        pytest.param(SPEC_PODS, '[{"value": 1}]', "needs time", id="json-no-time"),
    ],
)
def test_bad_input_exits_2(
    tmp_path: Path, spec: dict[str, Any], timeline: str, message: str
) -> None:
    proc = cli(
        "--spec", write(tmp_path, "s.json", spec), "--timeline", write(tmp_path, "t.csv", timeline)
    )
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.prometheus
def test_prometheus_range_query_sums_series(prometheus: PrometheusServer, tmp_path: Path) -> None:
    end = int(time.time()) // 15 * 15 - 15
    start = end - 10 * 15
    samples = [(float(t), 0.0) for t in range(start - 60, end + 1, 15)]
    remote_write_sync(
        prometheus.url,
        [
            ({"__name__": "load", "shard": "a"}, [(t, 25.0) for t, _ in samples]),
            ({"__name__": "load", "shard": "b"}, [(t, 15.0) for t, _ in samples]),
        ],
    )
    spec = write(tmp_path, "spec.json", SPEC_PODS)
    proc = cli(
        "--spec",
        spec,
        "--prometheus-url",
        prometheus.url,
        "--query",
        "load",
        "--start",
        str(start),
        "--end",
        str(end),
        "--step",
        "15s",
        "--replicas",
        "1",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == 11
    assert all(o["values"] == [40.0] for o in out)
    assert [o["desired"] for o in out[:3]] == [4, 4, 4]
    assert "load" in prometheus.queries()


def test_unreachable_prometheus_exits_2(tmp_path: Path) -> None:
    from tests.support.prometheus import free_port

    spec = write(tmp_path, "spec.json", SPEC_PODS)
    proc = cli(
        "--spec",
        spec,
        "--prometheus-url",
        f"http://127.0.0.1:{free_port()}",
        "--query",
        "load",
        "--start=-5m",
        "--step",
        "60s",
    )
    assert proc.returncode == 2, proc.stderr
    assert "cannot reach Prometheus" in proc.stderr or "failed" in proc.stderr


def test_scale_to_zero_and_wake_up_over_a_timeline() -> None:
    spec = parse_spec(
        {
            "minReplicas": 0,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {"name": "queue"},
                        "target": {"type": "AverageValue", "averageValue": "1"},
                    },
                }
            ],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
        },
        "spec",
    )
    values = [2.0, 2.0, 0.0, 0.0, 0.0, 3.0, 3.0]
    timeline = [SimPoint((T0 + 15 * i) * NS, (v,)) for i, v in enumerate(values)]
    steps = simulate(spec, timeline, replicas=2, pod_ready_delay=0)
    assert [s.desired for s in steps] == [2, 2, 0, 0, 0, 3, 3]
    assert "scale 2 -> 0" in steps[2].summary
    assert "scale 0 -> 3" in steps[5].summary
