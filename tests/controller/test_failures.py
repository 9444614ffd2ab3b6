"""Metric failures: each way a metric cannot be had is that metric's failure for the pass, with a
bounded reason word; an unreadable sample is a failed metric, never a failed pass."""

from __future__ import annotations

import pytest

from autoscaler.kube.client import KubeError, KubeUnavailable, NotFound
from autoscaler.kube.cluster import KubeCluster
from autoscaler.kube.failures import REASONS, check_entry, reason_of
from tests.controller.test_kube_paths import FakeKube

EXTERNAL = {
    "type": "External",
    "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1"}},
}
PATH = "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/q"


def _timeout() -> KubeUnavailable:
    try:
        raise KubeUnavailable(0, "Unavailable", "GET x: timed out") from TimeoutError()
    except KubeUnavailable as e:
        return e


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        pytest.param(
            NotFound(404, "NotFound", "the server could not find the requested resource"),
            "NotFound",
            id="apiservice-missing-or-metric-unknown-404",
        ),
        pytest.param(
            KubeError(503, "ServiceUnavailable", "service unavailable"),
            "ServiceUnavailable",
            id="apiservice-unavailable-503",
        ),
        pytest.param(KubeError(504, "Timeout", "gateway timeout"), "Timeout", id="proxy-504"),
        pytest.param(_timeout(), "Timeout", id="client-timeout"),
        pytest.param(
            KubeUnavailable(0, "Unavailable", "connection refused"),
            "Unavailable",
            id="api-server-down",
        ),
        pytest.param(KubeError(403, "Forbidden", "no"), "Forbidden", id="forbidden"),
        pytest.param(KubeError(422, "Invalid", "bad"), "BadRequest", id="other-4xx"),
        pytest.param(KubeError(500, "InternalError", "boom"), "InternalError", id="500"),
        pytest.param(ValueError("odd"), "Unknown", id="anything-else"),
    ],
)
def test_reason_of(error, reason):
    assert reason_of(error) == reason
    assert reason in REASONS


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        pytest.param({"items": [{"value": "lots"}]}, "items[0].value", id="not-a-quantity"),
        pytest.param({"items": [{"value": None}]}, "items[0].value", id="null-value"),
        pytest.param({"items": [{"value": float("nan")}]}, "nan", id="nan-number"),
        pytest.param(
            {"items": [{"value": "1", "timestamp": "yesterday"}]},
            "items[0].timestamp",
            id="bad-time",
        ),
        pytest.param(
            {"podMetrics": [{"containers": [{"name": "a", "usage": {"cpu": "x"}}]}]},
            "podMetrics[0].containers[0].usage.cpu",
            id="bad-usage",
        ),
    ],
)
def test_an_unreadable_sample_is_an_invalid_value_failure(entry, needle):
    checked = check_entry(entry)
    assert checked["reason"] == "InvalidValue"
    assert needle in checked["error"]


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(
            {"items": [{"value": "1500m", "timestamp": "2026-01-01T00:00:00Z"}]}, id="item"
        ),
        pytest.param({"items": [{"value": 3}]}, id="json-number"),
        pytest.param(
            {"podMetrics": [{"timestamp": "2026-01-01T00:00:00Z", "containers": []}]}, id="pods"
        ),
    ],
)
def test_a_readable_answer_is_passed_on_unchanged(entry):
    assert check_entry(entry) is entry


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        pytest.param(None, "NotFound", id="not-registered"),
        pytest.param(KubeError(503, "ServiceUnavailable", "down"), "ServiceUnavailable", id="503"),
        pytest.param({"items": []}, "Empty", id="empty"),
        pytest.param({"items": [{"value": "NaN"}]}, "InvalidValue", id="nan-text"),
    ],
)
async def test_fetch_metric_reports_each_failure_with_its_reason(answer, reason):
    kube = FakeKube({} if answer is None else {PATH: answer})
    entry = await KubeCluster(kube).fetch_metric("ns", EXTERNAL, pod_selector="")  # type: ignore[arg-type]
    assert entry["reason"] == reason
    assert entry["error"]
    assert [c[1] for c in kube.calls] == [PATH], "one attempt per metric per pass"


def test_remembered_texts_keep_their_kind():
    """Texts already checked are remembered per kind: a time is not a quantity, and a bad
    value stays bad however often it comes."""
    stamp = "2026-01-01T00:00:00Z"
    ok = {"items": [{"value": "250m", "timestamp": stamp}]}
    assert check_entry(ok) is ok
    assert check_entry(ok) is ok
    assert check_entry({"items": [{"value": stamp}]})["reason"] == "InvalidValue"
    assert check_entry({"items": [{"value": "1", "timestamp": "250m"}]})["reason"] == "InvalidValue"
    for _ in range(2):
        assert check_entry({"items": [{"value": "lots"}]})["reason"] == "InvalidValue"
