"""Bad documents: one clear error naming the field; the JSON shapes of the result."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core import DocumentError, decide_document
from tests.core import builders as b


def good() -> dict[str, Any]:
    return b.document(
        metrics_spec=[b.pods_metric(1000)],
        metrics=[b.pods_items([2000, 2000])],
        current=2,
        pod_list=b.pods(2),
    )


def spec(doc: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = doc["autoscaler"]["spec"]
    return result


def _del(key: str) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        del doc[key]

    return edit


CASES = [
    pytest.param(_del("now"), "now: is required", id="missing-now"),
    pytest.param(
        lambda d: d.update(now="yesterday"), "now: invalid time 'yesterday'", id="bad-now"
    ),
    pytest.param(_del("autoscaler"), "autoscaler: is required", id="missing-autoscaler"),
    pytest.param(_del("scale"), "scale: is required", id="missing-scale"),
    pytest.param(
        lambda d: d["scale"]["spec"].pop("replicas"),
        "scale.spec.replicas: is required",
        id="missing-replicas",
    ),
    pytest.param(
        lambda d: d["scale"]["spec"].update(replicas="3"),
        "scale.spec.replicas: must be an integer",
        id="replicas-string",
    ),
    pytest.param(
        lambda d: spec(d).pop("maxReplicas"),
        "autoscaler.spec.maxReplicas: is required",
        id="missing-max",
    ),
    pytest.param(
        lambda d: spec(d).update(minReplicas=5, maxReplicas=2),
        "autoscaler.spec.maxReplicas: must be greater",
        id="max-below-min",
    ),
    pytest.param(
        lambda d: spec(d)["metrics"][0]["pods"]["target"].update(averageValue="lots"),
        "autoscaler.spec.metrics[0].pods.target.averageValue: invalid quantity 'lots'",
        id="bad-target-quantity",
    ),
    pytest.param(
        lambda d: spec(d)["metrics"][0]["pods"]["target"].update(averageValue="0"),
        "autoscaler.spec.metrics[0].pods.target.averageValue: must be positive",
        id="zero-target",
    ),
    pytest.param(
        lambda d: spec(d)["metrics"][0].pop("pods"),
        "autoscaler.spec.metrics[0].pods: is required",
        id="missing-source",
    ),
    pytest.param(
        lambda d: d["metrics"].append({"error": "x"}),
        "metrics: has 2 entries but autoscaler.spec.metrics has 1",
        id="metrics-length-mismatch",
    ),
    pytest.param(
        lambda d: d["metrics"][0].pop("items"),
        "metrics[0]: a Pods metric needs items",
        id="metric-shape",
    ),
    pytest.param(
        lambda d: d["metrics"][0]["items"][1].update(value="1.2.3"),
        "metrics[0].items[1].value: invalid quantity",
        id="bad-sample-value",
    ),
    pytest.param(
        lambda d: d["pods"][1]["status"].update(startTime="soon"),
        "pods[1].status.startTime: invalid time",
        id="bad-pod-time",
    ),
    pytest.param(
        lambda d: d["pods"][0]["spec"]["containers"][0]["resources"]["requests"].update(cpu="x"),
        "pods[0].spec.containers[0].resources.requests.cpu: invalid quantity",
        id="bad-request",
    ),
    pytest.param(
        lambda d: d.update(history={"recommendations": [{"replicas": 1}]}),
        "history.recommendations[0].timestamp: is required",
        id="history-missing-timestamp",
    ),
    pytest.param(
        lambda d: spec(d).update(behavior={"scaleUp": {"selectPolicy": "Fastest"}}),
        "autoscaler.spec.behavior.scaleUp.selectPolicy: must be Max, Min or Disabled",
        id="bad-select-policy",
    ),
    pytest.param(
        lambda d: spec(d).update(
            behavior={"scaleDown": {"policies": [{"type": "Pods", "value": 1}]}}
        ),
        "autoscaler.spec.behavior.scaleDown.policies[0].periodSeconds: is required",
        id="policy-period",
    ),
    pytest.param(
        lambda d: d["controller"].update(tolerance="high"),
        "controller.tolerance: must be a number",
        id="bad-tolerance",
    ),
    # int32 fields of the API: a larger number cannot be decoded into an HPA, a Scale or a
    # history (and must not reach the arithmetic as an unbounded Python int)
    pytest.param(
        lambda d: spec(d).update(
            behavior={
                "scaleUp": {"policies": [{"type": "Percent", "value": 10**400, "periodSeconds": 1}]}
            }
        ),
        "autoscaler.spec.behavior.scaleUp.policies[0].value: must be at most 2147483647",
        id="policy-value-beyond-int32",
    ),
    pytest.param(
        lambda d: spec(d).update(
            behavior={
                "scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 2**31}]}
            }
        ),
        "autoscaler.spec.behavior.scaleDown.policies[0].periodSeconds: must be at most",
        id="policy-period-beyond-int32",
    ),
    pytest.param(
        lambda d: spec(d).update(behavior={"scaleUp": {"stabilizationWindowSeconds": 2**31}}),
        "autoscaler.spec.behavior.scaleUp.stabilizationWindowSeconds: must be at most",
        id="window-beyond-int32",
    ),
    pytest.param(
        lambda d: spec(d).update(maxReplicas=2**31),
        "autoscaler.spec.maxReplicas: must be at most 2147483647",
        id="max-replicas-beyond-int32",
    ),
    pytest.param(
        lambda d: d["scale"]["spec"].update(replicas=2**31),
        "scale.spec.replicas: must be at most 2147483647",
        id="scale-replicas-beyond-int32",
    ),
    pytest.param(
        lambda d: d.update(
            history={"scaleUpEvents": [{"change": 2**31, "timestamp": "2026-01-01T00:00:00Z"}]}
        ),
        "history.scaleUpEvents[0].change: must be at most 2147483647",
        id="event-change-beyond-int32",
    ),
    pytest.param(
        lambda d: d.update(
            history={
                "recommendations": [{"replicas": -(2**31) - 1, "timestamp": "2026-01-01T00:00:00Z"}]
            }
        ),
        "history.recommendations[0].replicas: must be at least -2147483648",
        id="recommendation-below-int32",
    ),
]


@pytest.mark.parametrize(("edit", "message"), CASES)
def test_invalid_document_names_the_field(edit: Any, message: str) -> None:
    doc = good()
    edit(doc)
    with pytest.raises(DocumentError) as err:
        decide_document(doc)
    assert str(err.value).startswith(message), str(err.value)


@pytest.mark.parametrize("value", [None, [], "x", 3])
def test_not_an_object(value: Any) -> None:
    with pytest.raises(DocumentError, match=r"\(document\): must be a JSON object"):
        decide_document(value)


def test_quantities_as_json_numbers_are_accepted() -> None:
    doc = good()
    doc["metrics"][0]["items"][0]["value"] = 2
    doc["metrics"][0]["items"][1]["value"] = 2.0
    assert decide_document(doc)["desiredReplicas"] == 4


def test_result_shape_and_history_round_trip() -> None:
    doc = good()
    doc["now"] = "2026-01-01T00:00:00.123456789Z"
    result = decide_document(doc)
    assert set(result) >= {
        "desiredReplicas",
        "rescale",
        "status",
        "history",
        "explanation",
        "summary",
    }
    # status times are metav1.Time (seconds); history keeps nanoseconds for strict comparisons
    assert result["status"]["lastScaleTime"] == "2026-01-01T00:00:00Z"
    assert result["history"]["recommendations"][-1]["timestamp"] == "2026-01-01T00:00:00.123456789Z"
    again = copy.deepcopy(doc)
    again["history"] = result["history"]
    first = result["history"]["recommendations"]
    assert decide_document(again)["history"]["recommendations"][: len(first)] == first


def test_year_one_times_are_accepted() -> None:
    doc = good()
    doc["history"] = {"recommendations": [{"replicas": 9, "timestamp": b.ZERO}]}
    result = decide_document(doc)
    assert result["history"]["recommendations"][0] == {"replicas": 4, "timestamp": b.NOW}


@pytest.mark.parametrize(
    "pod_json",
    [
        pytest.param(b.pod("a"), id="plain"),
        pytest.param(b.pod("b", ready=None, start=None, phase="Pending"), id="bare"),
        pytest.param(
            b.pod(
                "c",
                deleting=True,
                pod_requests={"cpu": "2"},
                overhead={"cpu": "10m"},
                init_containers=[
                    {
                        "name": "s",
                        "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "50m"}},
                    }
                ],
            ),
            id="full",
        ),
        pytest.param({"metadata": {"name": "d"}}, id="metadata-only"),
    ],
)
def test_fast_and_validating_pod_parsers_agree(pod_json: dict[str, Any]) -> None:
    from autoscaler.core import fastparse
    from autoscaler.core.inputs import _parse_pod

    assert fastparse.pod(pod_json) == _parse_pod(pod_json, "pods[0]")


def test_fast_and_validating_metric_parsers_agree() -> None:
    from autoscaler.core import fastparse
    from autoscaler.core.inputs import _pod_metrics_checked, _sample_checked

    pm = b.cpu_levels([250])["podMetrics"][0]
    assert fastparse.pod_metrics(pm) == _pod_metrics_checked(pm, "m")
    for item in (b.pods_items([5])["items"][0], b.external_items([7])["items"][0]):
        assert fastparse.metric_sample(item) == _sample_checked(item, "m")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # Quantity.MilliValue() on the int64 path (negativeScaleInt64) rounds AWAY from zero
        pytest.param("1.5m", 2, id="positive-sub-milli-up"),
        pytest.param("-1.5m", -2, id="negative-sub-milli-away-from-zero"),
        pytest.param("-1500u", -2, id="negative-canonical-micro"),
        pytest.param("-1.0005", -1001, id="negative-fraction"),
        pytest.param("-1n", -1, id="negative-nano-is-minus-one-milli"),
        pytest.param("-2m", -2, id="negative-exact"),
        pytest.param("-0", 0, id="negative-zero"),
    ],
)
def test_milli_value_rounds_like_quantity_milli_value(text: str, want: int) -> None:
    from autoscaler.core.fields import milli

    assert milli(text, "x") == want


def test_negative_external_value_reported_as_milli_value() -> None:
    doc = b.document(
        metrics_spec=[b.external_metric(value=1000)],
        metrics=[{"items": [{"metricName": "queue", "timestamp": b.at(0), "value": "-1.5m"}]}],
        current=3,
        pod_list=b.pods(3),
        history={"recommendations": []},
    )
    result = decide_document(doc)
    assert result["status"]["currentMetrics"][0]["external"]["current"]["value"] == "-2m"


_TIMES = st.sampled_from(
    [
        "2026-12-02T08:00:00Z",
        "2026-12-02T08:00:15.5Z",
        "2026-12-02T09:00:00+01:00",
        "2026-12-02t08:00:00z",
        "yesterday",
        "",
        "2026-13-02T08:00:00Z",
    ]
)
_RECOMMENDATION = st.one_of(
    st.fixed_dictionaries(
        {
            "replicas": st.one_of(
                st.integers(-(2**31) - 2, 2**31 + 1),
                st.sampled_from([3.0, 2.5, True, False, "3", None, [3]]),
            ),
            "timestamp": st.one_of(_TIMES, st.sampled_from([None, 0, 1.5, ["x"]])),
        },
        optional={"extra": st.just(1)},
    ),
    st.sampled_from([None, 3, "r", [], {}, {"replicas": 1}, {"timestamp": "2026-12-02T08:00:00Z"}]),
)


def _outcome(parse: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", parse()
    except DocumentError as e:
        return "error", str(e)


@settings(max_examples=400, deadline=None)
@given(recs=st.lists(_RECOMMENDATION, max_size=6))
def test_fast_history_parse_agrees_with_the_validating_one(recs: list[Any]) -> None:
    """The history's fast path gives the validating parser's value, or hands over to it (so the
    error, when there is one, is the validating parser's)."""
    from autoscaler.core import fastparse
    from autoscaler.core.document import parse_history

    history = {"recommendations": recs}
    fast = _outcome(lambda: parse_history(history, "history"))
    with mock.patch.object(fastparse, "recommendations", side_effect=fastparse.Slow):
        slow = _outcome(lambda: parse_history(history, "history"))
    assert fast == slow


def test_the_fast_history_parse_takes_well_formed_recommendations() -> None:
    from autoscaler.core import fastparse
    from autoscaler.core.model import Recommendation

    recs = [
        {"replicas": 3, "timestamp": "2026-12-02T08:00:00Z"},
        {"replicas": 0, "timestamp": b.at(15)},
    ]
    parsed = fastparse.recommendations(recs)
    assert [r.replicas for r in parsed] == [3, 0]
    assert all(isinstance(r, Recommendation) for r in parsed)
    for odd in ({"replicas": 3.0, "timestamp": b.at(0)}, {"replicas": True, "timestamp": b.at(0)}):
        with pytest.raises(fastparse.Slow):  # the validating parser decides these
            fastparse.recommendations([odd])


@pytest.mark.parametrize(
    ("block", "field"),
    [
        pytest.param({"scaleToZero": 1}, "controller.scaleToZero", id="int-for-bool"),
        pytest.param({"tolerance": True}, "controller.tolerance", id="bool-for-number"),
        pytest.param({"downscaleStabilizationSeconds": [300]}, "downscaleStab", id="unhashable"),
    ],
)
def test_remembered_controller_options_still_reject_a_wrong_type(
    block: dict[str, Any], field: str
) -> None:
    """The options block is parsed once per distinct value; a value equal to a good one but of
    another type (1 == True in Python) is not the good one."""
    from autoscaler.core.document import parse_options

    good = {"scaleToZero": True, "tolerance": 1.0, "downscaleStabilizationSeconds": 300}
    assert parse_options(good).scale_to_zero is True
    assert parse_options(dict(good)) is parse_options(good)  # remembered
    with pytest.raises(DocumentError, match=field):
        parse_options({**good, **block})
