"""What a failed metric reports, and how a resource's current value is written.

Expected texts come from upstream horizontal.go / replica_calculator.go (master): the wraps of
computeReplicasForMetric (the ContainerResource wrap names the container, the External wrap the
metric), the inner wraps of computeStatusFor{Object,External}Metric, the ready-pods prefix of
getUsageRatioReplicaCount, and buildQuantity (memory is written BinarySI, upstream PR #132351).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.core import builders as b
from tests.core.test_calculators import P3, Case, run

NO_PODS = "no pods returned by selector while calculating replica count"
UNABLE = "the HPA was unable to compute the replica count: "


@dataclass(frozen=True)
class Failure:
    case: Case
    error: str  # what computeReplicasForMetric returns for the metric
    condition: str  # the ScalingActive message after UNABLE


def _invalid_resource(kind: str, extra: dict[str, Any]) -> dict[str, Any]:
    key = "resource" if kind == "Resource" else "containerResource"
    return {"type": kind, key: {"name": "cpu", "target": {"type": "Utilization"}, **extra}}


INVALID_RESOURCE = (
    "invalid resource metric source: neither an average utilization target nor an average value"
    " (usage) target was set"
)

FAILURES = [
    pytest.param(
        Failure(
            Case(3, 0, b.container_utilization(50, container="side"), b.cpu_levels([100] * 3), P3),
            "failed to get side container metric value: failed to get cpu utilization: did not "
            "receive metrics for targeted pods (pods might be unready)",
            "failed to get cpu utilization: did not receive metrics for targeted pods (pods might "
            "be unready)",
        ),
        id="container-resource-wrap-names-the-container",
    ),
    pytest.param(
        Failure(
            Case(3, 0, _invalid_resource("Resource", {}), b.cpu_levels([100] * 3), P3),
            f"failed to get cpu resource metric value: {INVALID_RESOURCE}",
            INVALID_RESOURCE,
        ),
        id="resource-without-target-value",
    ),
    pytest.param(
        Failure(
            Case(
                3,
                0,
                _invalid_resource("ContainerResource", {"container": "app"}),
                b.cpu_levels([100] * 3),
                P3,
            ),
            f"failed to get app container metric value: {INVALID_RESOURCE}",
            INVALID_RESOURCE,
        ),
        id="container-resource-without-target-value",
    ),
    pytest.param(
        Failure(
            Case(3, 0, b.object_metric(value=1000), b.object_item(2000), []),
            f"failed to get object metric value: unable to calculate ready pods: {NO_PODS}",
            f"unable to calculate ready pods: {NO_PODS}",
        ),
        id="object-value-without-pods",
    ),
    pytest.param(
        Failure(
            Case(3, 0, b.external_metric(value=1000), b.external_items([2000]), []),
            "failed to get queue external metric value: failed to get external metric queue: "
            f"unable to calculate ready pods: {NO_PODS}",
            f"unable to calculate ready pods: {NO_PODS}",
        ),
        id="external-value-without-pods",
    ),
    pytest.param(
        Failure(
            Case(
                3,
                0,
                {
                    "type": "External",
                    "external": {"metric": {"name": "queue"}, "target": {"type": "Value"}},
                },
                b.external_items([1]),
                P3,
            ),
            "failed to get queue external metric value: invalid external metric source: neither "
            "a value target nor an average value target was set",
            "invalid external metric source: neither a value target nor an average value target "
            "was set",
        ),
        id="external-without-target-value",
    ),
]


@pytest.mark.parametrize("failure", FAILURES)
def test_failure_texts(failure: Failure) -> None:
    result = run(failure.case)
    assert result["computeError"].endswith(f"first error is: {failure.error}")
    active = [c for c in result["status"]["conditions"] if c["type"] == "ScalingActive"]
    assert active[0]["message"] == UNABLE + failure.condition


def _memory_pods(request: str) -> list[dict[str, Any]]:
    return b.pods(2, cpu=None, requests={"memory": request})


def _memory_usage(per_pod: str) -> dict[str, Any]:
    return b.pod_metrics({"p0": per_pod, "p1": per_pod}, resource="memory")


MEMORY = [
    # 1Mi each of a 2Mi request: 50% of a 50% target, within tolerance; the raw average is
    # 1048576 bytes, written BinarySI
    pytest.param(
        Case(
            2,
            2,
            b.cpu_utilization(50, resource="memory"),
            _memory_usage("1Mi"),
            _memory_pods("2Mi"),
            want_current={"averageUtilization": 50, "averageValue": "1Mi"},
        ),
        id="memory-utilization-average-in-binary-si",
    ),
    pytest.param(
        Case(
            2,
            2,
            b.cpu_average(2048000000, resource="memory"),
            _memory_usage("2000Ki"),
            _memory_pods("4Mi"),
            want_current={"averageValue": "2000Ki"},
        ),
        id="memory-average-value-in-binary-si",
    ),
    # below 1024 (or not a whole number of bytes) BinarySI falls back to DecimalSI
    pytest.param(
        Case(
            2,
            2,
            b.cpu_average(1000000, resource="memory"),
            _memory_usage("1k"),
            _memory_pods("4Mi"),
            want_current={"averageValue": "1k"},
        ),
        id="memory-below-1024-bytes-decimal",
    ),
    pytest.param(
        Case(
            2,
            2,
            b.cpu_average(1500500, resource="memory"),
            _memory_usage("1500500m"),
            _memory_pods("4Mi"),
            want_current={"averageValue": "1500500m"},
        ),
        id="memory-fractional-bytes-decimal",
    ),
    pytest.param(
        Case(
            2,
            2,
            b.cpu_average(1536000, resource="memory"),
            _memory_usage("1536"),
            _memory_pods("4Mi"),
            want_current={"averageValue": "1536"},
        ),
        id="memory-not-a-power-of-1024-plain",
    ),
    # cpu stays DecimalSI: 1024 cores is "1024", never "1Ki"
    pytest.param(
        Case(
            2,
            2,
            b.cpu_average(1024000),
            b.cpu_levels([1024000, 1024000]),
            b.pods(2),
            want_current={"averageValue": "1024"},
        ),
        id="cpu-stays-decimal",
    ),
]


@pytest.mark.parametrize("case", MEMORY)
def test_resource_current_value(case: Case) -> None:
    result = run(case)
    assert result["desiredReplicas"] == case.want
    status = result["status"]["currentMetrics"][0]["resource"]["current"]
    assert status == case.want_current


def _external(selector: dict[str, Any] | None, target: dict[str, Any]) -> dict[str, Any]:
    metric: dict[str, Any] = {"name": "queue"}
    if selector is not None:
        metric["selector"] = selector
    return {"type": "External", "external": {"metric": metric, "target": target}}


def _object_average(selector: dict[str, Any] | None) -> dict[str, Any]:
    spec = b.object_metric(average=1000)
    if selector is not None:
        spec["object"]["metric"]["selector"] = selector
    return spec


VALUE = {"type": "Value", "value": "1"}
FOUND = "the HPA was able to successfully calculate a replica count from "
NO_EXPRESSIONS = "MatchExpressions:[]LabelSelectorRequirement{},}"

# metricNameProposal, as the ValidMetricFound message shows it: a selector is printed with the
# generated (gogo) String() of *metav1.LabelSelector, "nil" for none; Object AverageValue is
# named "external metric ..." upstream (a copy of the External text)
NAMES = [
    pytest.param(
        _external({"matchLabels": {"q": "jobs", "a": "b"}}, VALUE),
        b.external_items([1000]),
        "external metric queue(&LabelSelector{MatchLabels:map[string]string{a: b,q: jobs,},"
        + NO_EXPRESSIONS
        + ")",
        id="external-match-labels",
    ),
    pytest.param(
        _external(
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]}]}, VALUE
        ),
        b.external_items([1000]),
        "external metric queue(&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:"
        "[]LabelSelectorRequirement{LabelSelectorRequirement{Key:env,Operator:In,Values:[a b],},"
        "},})",
        id="external-match-expressions",
    ),
    pytest.param(
        _external({}, VALUE),
        b.external_items([1000]),
        "external metric queue(&LabelSelector{MatchLabels:map[string]string{},"
        + NO_EXPRESSIONS
        + ")",
        id="external-empty-selector-is-not-nil",
    ),
    pytest.param(
        _external(None, VALUE),
        b.external_items([1000]),
        "external metric queue(nil)",
        id="external-nil",
    ),
    pytest.param(
        _object_average(None), b.object_item(3000), "external metric rps(nil)", id="object-average"
    ),
    pytest.param(
        b.object_metric(value=1000), b.object_item(1000), "Ingress metric rps", id="object-value"
    ),
    # GetRawResourceReplicas' name is "<resource> resource" for ContainerResource too; only the
    # utilization name says "container resource"
    pytest.param(
        {
            "type": "ContainerResource",
            "containerResource": {
                "name": "cpu",
                "container": "app",
                "target": {"type": "AverageValue", "averageValue": "1"},
            },
        },
        b.cpu_levels([1000, 1000, 1000]),
        "cpu resource",
        id="container-resource-average-value",
    ),
    pytest.param(
        b.container_utilization(100),
        b.cpu_levels([1000, 1000, 1000]),
        "cpu container resource utilization (percentage of request)",
        id="container-resource-utilization",
    ),
]


@pytest.mark.parametrize(("metric", "data", "name"), NAMES)
def test_metric_name_in_valid_metric_found(
    metric: dict[str, Any], data: dict[str, Any], name: str
) -> None:
    result = run(Case(3, 3, metric, data, P3))
    active = [c for c in result["status"]["conditions"] if c["type"] == "ScalingActive"]
    assert active[0]["message"] == FOUND + name
