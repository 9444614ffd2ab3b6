"""The controller pass: branches, conditions, the invalid-metric rule, selectors and scale to
zero (hpa-algorithm.md §1, §8, §11, §12)."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core import decide_document
from tests.core import builders as b

EXT = b.external_metric(value=1000)


def ext_doc(current: int, value: int, **kw: Any) -> dict[str, Any]:
    """External Value target 1 (1000m): proposes ceil(value/1000 * ready pods), or ceil(value/1000)
    from zero."""
    kw.setdefault("pod_list", b.pods(current))
    kw.setdefault("history", {"recommendations": []})
    return b.document(
        metrics_spec=[EXT], metrics=[b.external_items([value])], current=current, **kw
    )


def cond_list(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["type"], c["status"], c["reason"]) for c in result["status"]["conditions"]]


STZ_TRUE = {
    "conditions": [
        {
            "type": "ScaledToZero",
            "status": "True",
            "reason": "ScaledToZero",
            "message": "m",
            "lastTransitionTime": b.at(-600),
        }
    ]
}


def test_upstream_scale_up_conditions_in_order() -> None:
    doc = b.document(
        metrics_spec=[b.cpu_utilization(30)],
        metrics=[b.cpu_levels([300, 500, 700])],
        current=3,
        pod_list=b.pods(3),
        min_replicas=2,
        max_replicas=6,
        history={"recommendations": []},
    )
    result = decide_document(doc)
    assert result["desiredReplicas"] == 5
    assert result["rescale"] is True
    assert cond_list(result) == [
        ("AbleToScale", "True", "SucceededRescale"),
        ("ScalingActive", "True", "ValidMetricFound"),
        ("ScalingLimited", "False", "DesiredWithinRange"),
        ("ScaledToZero", "False", "NotScaledToZero"),
    ]
    assert result["status"]["lastScaleTime"] == b.NOW
    assert result["status"]["currentReplicas"] == 3
    assert (
        result["rescaleReason"] == "cpu resource utilization (percentage of request) above target"
    )


def test_no_rescale_keeps_last_scale_time_and_reports_ready_for_new_scale() -> None:
    status = {"currentReplicas": 3, "desiredReplicas": 3, "lastScaleTime": b.at(-1000)}
    result = decide_document(ext_doc(3, 1000, status=status))
    assert (result["desiredReplicas"], result["rescale"]) == (3, False)
    assert result["status"]["lastScaleTime"] == b.at(-1000)
    assert cond_list(result) == [
        ("AbleToScale", "True", "ReadyForNewScale"),
        ("ScalingActive", "True", "ValidMetricFound"),
        ("ScalingLimited", "False", "DesiredWithinRange"),
    ]


def test_conditions_update_in_place_and_keep_transition_time_unless_status_changes() -> None:
    status = {
        "conditions": [
            {
                "type": "ScalingLimited",
                "status": "False",
                "reason": "DesiredWithinRange",
                "message": "x",
                "lastTransitionTime": b.at(-100),
            },
            {
                "type": "AbleToScale",
                "status": "True",
                "reason": "ReadyForNewScale",
                "message": "x",
                "lastTransitionTime": b.at(-200),
            },
            {
                "type": "Custom",
                "status": "True",
                "reason": "Mine",
                "message": "kept",
                "lastTransitionTime": b.at(-300),
            },
        ]
    }
    result = decide_document(ext_doc(3, 30000, status=status, max_replicas=5))
    got = {c["type"]: c for c in result["status"]["conditions"]}
    assert [c["type"] for c in result["status"]["conditions"]] == [
        "ScalingLimited",
        "AbleToScale",
        "Custom",
        "ScalingActive",
        "ScaledToZero",
    ]
    assert got["ScalingLimited"]["status"] == "True"
    assert got["ScalingLimited"]["lastTransitionTime"] == b.NOW  # status changed
    assert got["AbleToScale"]["lastTransitionTime"] == b.at(-200)  # status stayed True
    assert got["Custom"]["message"] == "kept"


@pytest.mark.parametrize(
    ("current", "min_r", "max_r", "want", "reason"),
    [
        pytest.param(
            10, 1, 8, 8, "Current number of replicas above Spec.MaxReplicas", id="above-max"
        ),
        pytest.param(
            1, 3, 8, 3, "Current number of replicas below Spec.MinReplicas", id="below-min"
        ),
    ],
)
def test_min_max_clamps_skip_metrics_and_normalization(
    current: int, min_r: int, max_r: int, want: int, reason: str
) -> None:
    doc = ext_doc(current, 1000, min_replicas=min_r, max_replicas=max_r, history={})
    doc["metrics"] = [{"error": "unreachable"}]  # metrics are not even looked at
    result = decide_document(doc)
    assert (result["desiredReplicas"], result["rescale"], result["rescaleReason"]) == (
        want,
        True,
        reason,
    )
    types = [c[0] for c in cond_list(result)]
    assert "ScalingLimited" not in types
    assert "ScalingActive" not in types
    assert result["history"]["recommendations"] == [{"replicas": current, "timestamp": b.NOW}]


def test_zero_replicas_without_scaled_to_zero_disables_autoscaling() -> None:
    result = decide_document(ext_doc(0, 50000, min_replicas=1))
    assert (result["desiredReplicas"], result["rescale"]) == (0, False)
    assert cond_list(result) == [
        ("AbleToScale", "True", "SucceededGetScale"),
        ("ScalingActive", "False", "ScalingDisabled"),
    ]


def test_scale_to_zero_then_wake_up() -> None:
    down = decide_document(ext_doc(3, 0, min_replicas=0))
    assert (down["desiredReplicas"], down["rescale"]) == (0, True)
    assert ("ScaledToZero", "True", "ScaledToZero") in cond_list(down)
    # the next step at zero reads its own condition and wakes from the metric alone (no pods)
    up = decide_document(
        ext_doc(
            0,
            3000,
            min_replicas=0,
            status=down["status"],
            history=down["history"],
            pod_list=[],
            now=15,
        )
    )
    assert (up["desiredReplicas"], up["rescale"]) == (3, True)
    assert ("ScaledToZero", "False", "NotScaledToZero") in cond_list(up)


def test_from_zero_without_behavior_is_capped_by_the_scale_up_minimum() -> None:
    result = decide_document(ext_doc(0, 9000, min_replicas=0, status=STZ_TRUE, pod_list=[]))
    assert result["desiredReplicas"] == 4
    assert b.conditions(result)["ScalingLimited"] == ("True", "ScaleUpLimit")


def test_zero_with_condition_but_no_object_or_external_metric_stays_disabled() -> None:
    doc = b.document(
        metrics_spec=[b.pods_metric(1000)],
        metrics=[b.pods_items([5000])],
        current=0,
        min_replicas=0,
        status=STZ_TRUE,
    )
    result = decide_document(doc)
    assert (result["desiredReplicas"], result["rescale"]) == (0, False)
    assert b.conditions(result)["ScalingActive"] == ("False", "ScalingDisabled")


def test_gate_off_removes_scaled_to_zero_and_disables() -> None:
    controller = {**b.UPSTREAM_CONTROLLER, "scaleToZero": False}
    result = decide_document(
        ext_doc(0, 3000, min_replicas=0, status=STZ_TRUE, controller=controller)
    )
    assert "ScaledToZero" not in b.conditions(result)
    assert b.conditions(result)["ScalingActive"] == ("False", "ScalingDisabled")
    rescaled = decide_document(ext_doc(3, 9000, status=STZ_TRUE, controller=controller))
    assert rescaled["rescale"] is True
    assert "ScaledToZero" not in b.conditions(rescaled)


def test_wake_with_raised_min_is_raised_after_normalization() -> None:
    result = decide_document(
        ext_doc(0, 1000, min_replicas=2, status=STZ_TRUE, behavior={}, pod_list=[])
    )
    assert result["desiredReplicas"] == 2
    assert b.conditions(result)["ScalingLimited"] == ("False", "DesiredWithinRange")


def test_invalid_metric_blocks_scale_down() -> None:
    doc = ext_doc(5, 200, status={"desiredReplicas": 4})  # external alone would say 1
    doc["autoscaler"]["spec"]["metrics"].append(b.pods_metric(1000))
    doc["metrics"].append({"error": "adapter unavailable"})
    result = decide_document(doc)
    assert (result["desiredReplicas"], result["rescale"]) == (
        4,
        False,
    )  # the previous desired stays
    assert b.conditions(result)["ScalingActive"] == ("False", "FailedGetPodsMetric")
    assert result["status"]["currentMetrics"][1] == {"type": ""}
    assert result["computeError"].startswith(
        "invalid metrics (1 invalid out of 2), first error is:"
    )


def test_invalid_metric_still_allows_scale_up() -> None:
    doc = ext_doc(5, 9000)
    doc["autoscaler"]["spec"]["metrics"].insert(0, b.pods_metric(1000))
    doc["metrics"].insert(0, {"error": "adapter unavailable"})
    result = decide_document(doc)
    assert (result["desiredReplicas"], result["rescale"]) == (10, True)
    assert b.conditions(result)["ScalingActive"] == ("True", "ValidMetricFound")
    assert "computeError" in result


def test_highest_proposal_wins() -> None:
    doc = b.document(
        metrics_spec=[b.pods_metric(1000), EXT, b.object_metric(value=1000)],
        metrics=[b.pods_items([2000] * 4), b.external_items([1000]), b.object_item(1500)],
        current=4,
        pod_list=b.pods(4),
        history={"recommendations": []},
    )
    result = decide_document(doc)
    assert result["desiredReplicas"] == 8
    active = [c["message"] for c in result["status"]["conditions"] if c["type"] == "ScalingActive"]
    assert active == [
        "the HPA was able to successfully calculate a replica count from pods metric qps"
    ]


@pytest.mark.parametrize(
    ("metric", "data", "reason"),
    [
        pytest.param(
            b.cpu_utilization(50), {"error": "boom"}, "FailedGetResourceMetric", id="resource"
        ),
        pytest.param(
            b.container_utilization(50),
            {"error": "boom"},
            "FailedGetContainerResourceMetric",
            id="container",
        ),
        pytest.param(b.pods_metric(1000), {"error": "boom"}, "FailedGetPodsMetric", id="pods"),
        pytest.param(
            b.object_metric(value=1000), {"error": "boom"}, "FailedGetObjectMetric", id="object"
        ),
        pytest.param(EXT, {"error": "boom"}, "FailedGetExternalMetric", id="external"),
        pytest.param(EXT, {"items": []}, "FailedGetExternalMetric", id="external-empty"),
        pytest.param(
            b.cpu_utilization(50),
            {"podMetrics": []},
            "FailedGetResourceMetric",
            id="resource-empty",
        ),
        pytest.param(
            {"type": "Bogus"}, {"error": "x"}, "InvalidMetricSourceType", id="unknown-type"
        ),
    ],
)
def test_failed_metric_reasons(metric: dict[str, Any], data: dict[str, Any], reason: str) -> None:
    doc = b.document(metrics_spec=[metric], metrics=[data], current=3, pod_list=b.pods(3))
    result = decide_document(doc)
    assert b.conditions(result)["ScalingActive"] == ("False", reason)
    assert result["rescale"] is False
    message = next(
        c["message"] for c in result["status"]["conditions"] if c["type"] == "ScalingActive"
    )
    assert message.startswith("the HPA was unable to compute the replica count: ")


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param("", "the HPA target's scale is missing a selector", id="missing"),
        pytest.param("app in (", "couldn't convert selector", id="unparsable"),
    ],
)
def test_invalid_selector(selector: str, message: str) -> None:
    result = decide_document(ext_doc(3, 9000, selector=selector))
    assert b.conditions(result)["ScalingActive"] == ("False", "InvalidSelector")
    assert result["rescale"] is False
    assert message in next(
        c["message"] for c in result["status"]["conditions"] if c["type"] == "ScalingActive"
    )


def test_no_metrics_means_cpu_80_percent() -> None:
    doc = b.document(
        metrics_spec=[],
        metrics=[b.cpu_levels([1600, 1600])],
        current=2,
        pod_list=b.pods(2),
        history={"recommendations": []},
    )
    assert decide_document(doc)["desiredReplicas"] == 4


def test_explanation_and_summary_name_the_limits() -> None:
    result = decide_document(ext_doc(2, 50000, max_replicas=100))
    text = "\n".join(result["explanation"])
    assert "scale-up limit" in text
    assert result["summary"] == f"scale 2 -> 4: {result['rescaleReason']}"


def test_rescale_failed_keeps_previous_desired_and_drops_the_event() -> None:
    from autoscaler.core import parse_document, rescale_failed
    from autoscaler.core.decide import decide

    doc = ext_doc(3, 9000, behavior={}, status={"desiredReplicas": 3, "lastScaleTime": b.at(-99)})
    step = parse_document(doc)
    decision = decide(
        step.spec,
        step.status,
        step.scale,
        step.pods,
        step.metrics,
        step.history,
        now=step.now,
        options=step.options,
    )
    assert decision.rescale
    assert decision.history.scale_up_events
    status, history = rescale_failed(decision, message="conflict")
    able = next(c for c in status.conditions if c.type == "AbleToScale")
    assert (able.status, able.reason) == ("False", "FailedUpdateScale")
    assert able.message.endswith("unable to update the target scale: conflict")
    assert (status.desired_replicas, status.last_scale_time) == (3, step.status.last_scale_time)
    assert "ScaledToZero" not in [c.type for c in status.conditions]
    assert history.scale_up_events == ()
    assert history.recommendations == decision.history.recommendations


@pytest.mark.parametrize(
    ("value", "want_reason"),
    [
        # the metrics propose 0 == current: no reason yet, so the raise gives the min-clamp text
        pytest.param(0, "Current number of replicas below Spec.MinReplicas", id="metric-zero"),
        # the metrics propose 1 > 0: that reason stays, the raise does not overwrite it
        pytest.param(
            1000,
            "external metric queue(&LabelSelector{MatchLabels:map[string]string{q: jobs,},"
            "MatchExpressions:[]LabelSelectorRequirement{},}) above target",
            id="metric-above-target-kept",
        ),
    ],
)
def test_wake_raise_to_min_names_a_reason_only_when_none_was_set(
    value: int, want_reason: str
) -> None:
    result = decide_document(
        ext_doc(0, value, min_replicas=3, status=STZ_TRUE, behavior={}, pod_list=[])
    )
    assert (result["desiredReplicas"], result["rescale"]) == (3, True)
    assert result.get("rescaleReason") == want_reason
    assert result["summary"] == f"scale 0 -> 3: {want_reason}"


@pytest.mark.parametrize(
    ("behavior", "history"),
    [
        # the metric says 9 > 3, but a disabled scale-up policy keeps 3
        pytest.param({"scaleUp": {"selectPolicy": "Disabled"}}, {"recommendations": []}, id="up"),
        # the metric says 1 < 3, but a recent recommendation of 3 holds it (no behavior)
        pytest.param(
            None,
            {"recommendations": [{"replicas": 3, "timestamp": b.at(-10)}]},
            id="down-stabilized",
        ),
    ],
)
def test_no_rescale_reason_when_normalization_keeps_current(
    behavior: dict[str, Any] | None, history: dict[str, Any]
) -> None:
    value = 9000 if behavior else 300
    result = decide_document(ext_doc(3, value, behavior=behavior, history=history))
    assert (result["desiredReplicas"], result["rescale"]) == (3, False)
    assert "rescaleReason" not in result  # decision-document.md: only when rescaling


def test_rescale_by_stabilization_alone_has_no_reason() -> None:
    # the metric says 3 == current; a recommendation of 5 ten seconds ago raises it (no behavior)
    history = {"recommendations": [{"replicas": 5, "timestamp": b.at(-10)}]}
    result = decide_document(ext_doc(3, 1000, history=history))
    assert (result["desiredReplicas"], result["rescale"]) == (5, True)
    assert "rescaleReason" not in result  # upstream's rescaleReason stays ""
    assert result["summary"] == "scale 3 -> 5"
