"""groupPods, requests and sample conversion: every rule of hpa-algorithm.md §2-§4 and its
time boundaries (strict comparisons at nanosecond precision)."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core import decide_document, parse_pod
from autoscaler.core.model import NS, ContainerUsage, PodMetrics
from autoscaler.core.pods import CalculationError, calculate_requests, group_pods, pod_usage
from tests.core import builders as b

INIT = 120 * NS  # upstream test CPU initialization period
DELAY = 10 * NS  # upstream test readiness delay
WINDOW = 60 * NS


def group(
    pod_json: dict[str, Any],
    *,
    resource: str = "cpu",
    sample_ts: float = 0,
    has_sample: bool = True,
) -> str:
    pod = parse_pod(pod_json, "pod")
    samples = {pod.name: (100, b.NOW_NS + round(sample_ts * NS), WINDOW)} if has_sample else {}
    g = group_pods(
        [pod],
        samples,
        resource,
        now=b.NOW_NS,
        cpu_initialization_period=INIT,
        initial_readiness_delay=DELAY,
    )
    if g.ready_count:
        return "ready"
    if g.unready:
        return "unready"
    if g.missing:
        return "missing"
    return "ignored"


@pytest.mark.parametrize(
    ("pod_json", "kw", "want"),
    [
        pytest.param(b.pod("p"), {}, "ready", id="running-ready"),
        pytest.param(
            b.pod("p", deleting=True, phase="Pending"),
            {},
            "ignored",
            id="deleting-pending-is-ignored-not-unready",
        ),
        pytest.param(b.pod("p", phase="Failed"), {}, "ignored", id="failed"),
        pytest.param(b.pod("p", phase="Succeeded"), {}, "ignored", id="succeeded"),
        pytest.param(b.pod("p", phase="Pending"), {}, "unready", id="pending-with-sample"),
        pytest.param(
            b.pod("p", phase="Pending"), {"resource": ""}, "unready", id="pending-non-cpu"
        ),
        pytest.param(b.pod("p"), {"has_sample": False}, "missing", id="no-sample"),
        pytest.param(b.pod("p", phase="Unknown"), {}, "ready", id="unknown-phase-like-running"),
        pytest.param(b.pod("p", ready=None), {}, "unready", id="cpu-no-ready-condition"),
        pytest.param(
            b.pod("p", ready=None), {"resource": "memory"}, "ready", id="memory-no-ready-condition"
        ),
        pytest.param(b.pod("p", start=None), {}, "unready", id="cpu-no-start-time"),
        pytest.param(b.pod("p", ready="False"), {}, "unready", id="cpu-never-ready-since-start"),
        pytest.param(
            b.pod("p", ready="False"),
            {"resource": "memory"},
            "ready",
            id="memory-ignores-readiness",
        ),
        pytest.param(b.pod("p", ready="Unknown"), {}, "ready", id="cpu-unknown-is-not-false"),
        # after the init period, unready only when (start + delay) is After LTT
        pytest.param(
            b.pod("p", ready="False", start=-600, ltt=-590),
            {},
            "ready",
            id="became-unready-exactly-at-delay",
        ),
        pytest.param(
            b.pod("p", ready="False", start=-600, ltt=-590.000000001),
            {},
            "unready",
            id="unready-1ns-inside-delay",
        ),
        # inside the init period: a sample counts only when taken at least a window after readiness
        pytest.param(
            b.pod("p", start=-60, ltt=-60),
            {"sample_ts": 0},
            "ready",
            id="hot-sample-exactly-window-after-ready",
        ),
        pytest.param(
            b.pod("p", start=-60, ltt=-59.999999999),
            {"sample_ts": 0},
            "unready",
            id="hot-sample-1ns-early",
        ),
        pytest.param(
            b.pod("p", start=-60, ltt=-90, ready="False"), {}, "unready", id="hot-not-ready"
        ),
        pytest.param(
            b.pod("p", start=-120, ltt=-30),
            {"sample_ts": 0},
            "ready",
            id="init-period-end-is-not-inside",
        ),
        pytest.param(
            b.pod("p", start=-119.999999999, ltt=-30),
            {"sample_ts": 0},
            "unready",
            id="init-period-1ns-inside",
        ),
    ],
)
def test_group_pods(pod_json: dict[str, Any], kw: dict[str, Any], want: str) -> None:
    assert group(pod_json, **kw) == want


def _pm(pod: str, containers: dict[str, dict[str, int]]) -> PodMetrics:
    return PodMetrics(pod, 0, WINDOW, tuple(ContainerUsage(n, u) for n, u in containers.items()))


@pytest.mark.parametrize(
    ("containers", "container", "want"),
    [
        pytest.param({"a": {"cpu": 100}, "b": {"cpu": 50}}, None, 150, id="pod-sums-containers"),
        pytest.param(
            {"a": {"cpu": 100}, "b": {"memory": 50}},
            None,
            None,
            id="container-lacks-resource-no-value",
        ),
        pytest.param({}, None, None, id="no-containers-no-value"),
        pytest.param({"a": {"cpu": 100}, "b": {"cpu": 50}}, "b", 50, id="named-container"),
        pytest.param({"a": {"cpu": 100}}, "b", None, id="named-container-absent"),
        pytest.param(
            {"a": {"cpu": 100}, "b": {"memory": 5}}, "a", 100, id="other-container-lacking-is-fine"
        ),
    ],
)
def test_pod_usage(
    containers: dict[str, dict[str, int]], container: str | None, want: int | None
) -> None:
    got = pod_usage([_pm("p", containers)], "cpu", container)
    assert (got["p"][0] if "p" in got else None) == want


def test_empty_resource_metrics_is_an_error() -> None:
    with pytest.raises(CalculationError, match="no metrics returned from resource metrics API"):
        pod_usage([], "cpu", None)


def _c(name: str, cpu: str | None, *, always: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "resources": {"requests": {"cpu": cpu} if cpu else {}}}
    if always:
        c["restartPolicy"] = "Always"
    return c


@pytest.mark.parametrize(
    ("pod_kw", "container", "pod_level", "want"),
    [
        pytest.param(
            {"containers": [_c("a", "100m"), _c("b", "200m")]},
            None,
            True,
            300,
            id="sum-of-containers",
        ),
        pytest.param(
            {
                "containers": [_c("a", "100m")],
                "init_containers": [_c("i", "1"), _c("s", "50m", always=True)],
            },
            None,
            True,
            150,
            id="sidecars-count-plain-init-skipped",
        ),
        pytest.param(
            {"containers": [_c("a", "100m"), _c("b", "200m")]}, "b", True, 200, id="named-container"
        ),
        pytest.param(
            {
                "containers": [_c("a", "100m")],
                "pod_requests": {"cpu": "2"},
                "overhead": {"cpu": "10m"},
            },
            None,
            True,
            2010,
            id="pod-level-plus-overhead",
        ),
        pytest.param(
            {"containers": [_c("a", "100m")], "pod_requests": {"cpu": "2"}},
            None,
            False,
            100,
            id="pod-level-gate-off",
        ),
        pytest.param(
            {"containers": [_c("a", "100m")], "pod_requests": {"cpu": "2"}},
            "a",
            True,
            100,
            id="pod-level-not-for-a-named-container",
        ),
        pytest.param(
            {
                "containers": [_c("a", "100m")],
                "pod_requests": {"memory": "1Gi"},
                "init_containers": [_c("i", "1")],
            },
            None,
            True,
            1000,
            id="pod-level-without-the-resource-uses-sidecar-aware-aggregate",
        ),
    ],
)
def test_requests(
    pod_kw: dict[str, Any], container: str | None, pod_level: bool, want: int
) -> None:
    pod = parse_pod(b.pod("p", cpu=None, **pod_kw), "pod")
    assert calculate_requests([pod], container, "cpu", pod_level=pod_level) == {"p": want}


@pytest.mark.parametrize(
    ("pod_kw", "container", "message"),
    [
        pytest.param(
            {"containers": [_c("a", "100m"), _c("b", None)]},
            None,
            "missing request for cpu in container b of Pod p",
            id="missing-request",
        ),
        pytest.param(
            {"containers": [_c("a", "100m")]},
            "x",
            "container x not found in Pod p",
            id="container-not-found",
        ),
        pytest.param(
            {"containers": [_c("a", None)], "pod_requests": {"memory": "1Gi"}},
            None,
            "missing pod-level request for cpu in Pod p",
            id="missing-pod-level",
        ),
    ],
)
def test_request_errors(pod_kw: dict[str, Any], container: str | None, message: str) -> None:
    pod = parse_pod(b.pod("p", cpu=None, **pod_kw), "pod")
    with pytest.raises(CalculationError, match=message):
        calculate_requests([pod], container, "cpu", pod_level=True)


def test_missing_request_on_an_ignored_pod_invalidates_the_metric() -> None:
    pods = [b.pod("p0"), b.pod("p1", phase="Failed", cpu=None, requests={"memory": "1Gi"})]
    doc = b.document(
        metrics_spec=[b.cpu_utilization(50)],
        metrics=[b.cpu_levels([500])],
        current=2,
        pod_list=pods,
    )
    result = decide_document(doc)
    assert b.conditions(result)["ScalingActive"] == ("False", "FailedGetResourceMetric")
    assert "missing request for cpu in container app of Pod p1" in result["computeError"]
    assert result["rescale"] is False
