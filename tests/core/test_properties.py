"""Properties over generated steps (hypothesis): bounds, the invalid-metric rule, fixed points."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autoscaler.core import decide_document
from tests.core import builders as b

policy = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["Pods", "Percent"]),
        "value": st.integers(1, 300),
        "periodSeconds": st.integers(1, 600),
    }
)
rules = st.fixed_dictionaries(
    {},
    optional={
        "stabilizationWindowSeconds": st.integers(0, 600),
        "selectPolicy": st.sampled_from(["Max", "Min", "Disabled"]),
        "policies": st.lists(policy, max_size=3),
    },
)
behaviors = st.none() | st.fixed_dictionaries({}, optional={"scaleUp": rules, "scaleDown": rules})
offsets = st.integers(-900, 0)
history = st.fixed_dictionaries(
    {
        "recommendations": st.lists(st.tuples(st.integers(0, 60), offsets), max_size=4).map(
            lambda xs: [{"replicas": r, "timestamp": b.at(t)} for r, t in xs]
        ),
        "scaleUpEvents": st.lists(st.tuples(st.integers(1, 20), offsets), max_size=3).map(
            lambda xs: [{"change": c, "timestamp": b.at(t), "outdated": False} for c, t in xs]
        ),
        "scaleDownEvents": st.lists(st.tuples(st.integers(1, 20), offsets), max_size=3).map(
            lambda xs: [{"change": c, "timestamp": b.at(t), "outdated": False} for c, t in xs]
        ),
    }
)


@st.composite
def steps(draw: st.DrawFn, *, with_error: bool = False) -> dict[str, Any]:
    min_r = draw(st.integers(1, 5))
    max_r = draw(st.integers(min_r, 30))
    current = draw(st.integers(min_r, max_r))
    kind = draw(st.sampled_from(["pods", "cpu", "external", "external-avg", "object"]))
    if kind == "pods":
        spec, data = (
            b.pods_metric(1000),
            b.pods_items(draw(st.lists(st.integers(0, 9000), min_size=current, max_size=current))),
        )
    elif kind == "cpu":
        spec, data = (
            b.cpu_utilization(draw(st.integers(10, 200))),
            b.cpu_levels(draw(st.lists(st.integers(0, 4000), min_size=1, max_size=current))),
        )
    elif kind == "external":
        spec, data = b.external_metric(value=1000), b.external_items([draw(st.integers(0, 90000))])
    elif kind == "external-avg":
        spec, data = (
            b.external_metric(average=1000),
            b.external_items([draw(st.integers(0, 90000))]),
        )
    else:
        spec, data = b.object_metric(value=1000), b.object_item(draw(st.integers(0, 90000)))
    metrics_spec, metrics = [spec], [data]
    if with_error:
        metrics_spec.append(b.pods_metric(1000))
        metrics.append({"error": "unavailable"})
    return b.document(
        metrics_spec=metrics_spec,
        metrics=metrics,
        current=current,
        pod_list=b.pods(current),
        min_replicas=min_r,
        max_replicas=max_r,
        behavior=draw(behaviors),
        history=draw(history),
        status={"desiredReplicas": current},
    )


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(steps())
def test_result_within_min_and_max(doc: dict[str, Any]) -> None:
    spec = doc["autoscaler"]["spec"]
    result = decide_document(doc)
    assert spec["minReplicas"] <= result["desiredReplicas"] <= spec["maxReplicas"]
    assert result["rescale"] == (result["desiredReplicas"] != doc["scale"]["spec"]["replicas"])


@FAST
@given(steps(with_error=True))
def test_never_scales_down_with_an_invalid_metric(doc: dict[str, Any]) -> None:
    result = decide_document(doc)
    assert result["desiredReplicas"] >= doc["scale"]["spec"]["replicas"]


@FAST
@given(steps())
def test_a_step_without_rescale_is_a_fixed_point(doc: dict[str, Any]) -> None:
    first = decide_document(doc)
    if first["rescale"]:
        return
    again = dict(
        doc,
        autoscaler={"spec": doc["autoscaler"]["spec"], "status": first["status"]},
        history=first["history"],
    )
    second = decide_document(again)
    assert second["desiredReplicas"] == first["desiredReplicas"]
    assert second["rescale"] is False
    assert second["status"]["conditions"] == first["status"]["conditions"]


@FAST
@given(steps())
def test_input_document_is_not_mutated(doc: dict[str, Any]) -> None:
    import copy

    before = copy.deepcopy(doc)
    decide_document(doc)
    assert doc == before
