"""KEDA ScaledObjects to Autoscalers, table-driven from KEDA's documented examples: the
Autoscaler's spec, the adapter rules, and which fields are named as not carried over."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from autoscaler.convert import ConvertError, NotConverted, convert
from tests.convert import examples as ex

REF = {"apiVersion": "apps/v1", "kind": "Deployment"}


@dataclass(frozen=True)
class Case:
    text: str
    spec: dict[str, Any]
    rules: list[dict[str, Any]]
    # field -> changes behaviour; every note must be listed
    notes: dict[str, bool] = field(default_factory=dict)
    annotations: dict[str, str] | None = None


def external(name: str, target: dict[str, str], activation: str | None = None) -> dict[str, Any]:
    metric: dict[str, Any] = {
        "type": "External",
        "external": {"metric": {"name": name}, "target": target},
    }
    if activation is not None:
        metric["activation"] = {"threshold": activation}
    return metric


def rule(selector: str, matches: str, name: str, query: str) -> dict[str, Any]:
    return {
        "seriesQuery": selector,
        "resources": {"namespaced": False},
        "name": {"matches": matches, "as": name},
        "metricsQuery": query,
    }


HTTP = 'sum(rate(http_requests_total{deployment="my-deployment"}[2m]))'
CASES = [
    pytest.param(
        Case(
            ex.KEDA_PROMETHEUS,
            spec={
                "scaleTargetRef": {**REF, "name": "my-deployment"},
                "minReplicas": 0,  # KEDA's default minReplicaCount
                "maxReplicas": 100,
                "metrics": [
                    external(
                        "prometheus-scaledobject-http_requests_total",
                        {"type": "AverageValue", "averageValue": "100"},
                        activation="0",  # KEDA's default: active above 0
                    )
                ],
                "scaleToZero": {"cooldownSeconds": 300},
            },
            rules=[
                rule(
                    "http_requests_total",
                    "^http_requests_total$",
                    "prometheus-scaledobject-http_requests_total",
                    f"({HTTP}) or vector(0)",  # ignoreNullValues defaults to true
                )
            ],
            notes={"spec.triggers[0].metadata.serverAddress": False, "spec.cooldownPeriod": False},
        ),
        id="prometheus-page-example",
    ),
    pytest.param(
        Case(
            ex.KEDA_PROMETHEUS_ALL_FIELDS,
            spec={
                "scaleTargetRef": {**REF, "name": "orders"},
                "minReplicas": 0,
                "maxReplicas": 100,
                "metrics": [
                    external(
                        "orders-http_requests_total",
                        {"type": "AverageValue", "averageValue": "100.50"},
                        activation="5.5",
                    )
                ],
                "scaleToZero": {"cooldownSeconds": 300},
            },
            rules=[
                rule(
                    "http_requests_total",
                    "^http_requests_total$",
                    "orders-http_requests_total",
                    'sum(rate(http_requests_total{deployment="orders"}[2m]))',  # no `or vector(0)`
                )
            ],
            notes={
                "spec.triggers[0].metadata.serverAddress": False,
                "spec.triggers[0].metadata.queryParameters": True,
                "spec.triggers[0].metadata.namespace": True,
                "spec.triggers[0].metadata.customHeaders": True,
                "spec.triggers[0].metadata.unsafeSsl": False,  # "false": the adapter verifies too
                "spec.cooldownPeriod": False,
            },
        ),
        id="prometheus-trigger-every-field",
    ),
    pytest.param(
        Case(
            ex.KEDA_PROMETHEUS_AUTH,
            spec={
                "scaleTargetRef": {**REF, "name": "keda-prom-test"},
                "minReplicas": 0,
                "maxReplicas": 100,
                "metrics": [
                    external(
                        "prometheus-scaledobject-http_requests_total",
                        {"type": "AverageValue", "averageValue": "100"},
                        activation="0",
                    )
                ],
                "scaleToZero": {"cooldownSeconds": 300},
            },
            rules=[
                rule(
                    "http_requests_total",
                    "^http_requests_total$",
                    "prometheus-scaledobject-http_requests_total",
                    '(sum(rate(http_requests_total{app="keda-prom-test"}[2m]))) or vector(0)',
                )
            ],
            notes={
                "spec.triggers[0].metadata.serverAddress": False,
                "spec.triggers[0].authenticationRef": True,
                "spec.triggers[0].metadata.authModes": True,
                "spec.cooldownPeriod": False,
            },
        ),
        id="prometheus-bearer-auth",
    ),
    pytest.param(
        Case(
            ex.KEDA_SPEC_ALL_FIELDS,
            spec={
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": "worker",
                },
                "minReplicas": 0,
                "maxReplicas": 100,
                "metrics": [
                    external("worker-queue", {"type": "AverageValue", "averageValue": "10"}, "0")
                ],
                "scaleToZero": {"cooldownSeconds": 300, "initialCooldownSeconds": 120},
                "fallback": {
                    "failureThreshold": 3,
                    "recoveryThreshold": 1,  # KEDA leaves fallback on the first good read
                    "replicas": 6,
                    "behavior": "CurrentReplicasIfHigher",
                },
                "behavior": {
                    "scaleDown": {
                        "stabilizationWindowSeconds": 300,
                        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
                    }
                },
            },
            rules=[
                rule(
                    "rabbitmq_queue_messages_ready",
                    "^rabbitmq_queue_messages_ready$",
                    "worker-queue",
                    '(sum(rabbitmq_queue_messages_ready{queue="jobs"})) or vector(0)',
                )
            ],
            notes={
                "spec.scaleTargetRef.envSourceContainerName": False,
                "spec.triggers[0].metadata.serverAddress": False,
                "spec.cooldownPeriod": False,
                "spec.advanced.horizontalPodAutoscalerConfig.name": False,
                "metadata.annotations[scaledobject.keda.sh/transfer-hpa-ownership]": False,
                "spec.pollingInterval": False,
            },
        ),
        id="scaledobject-spec-every-field",
    ),
    pytest.param(
        Case(
            ex.KEDA_IDLE_AND_MODIFIERS,
            spec={
                "scaleTargetRef": {**REF, "name": "api"},
                "minReplicas": 0,  # idle 0: scale to zero, without KEDA's jump to 2
                "maxReplicas": 20,
                # KEDA scales on the formula alone: one metric, the formula's target
                "metrics": [
                    external("api-formula", {"type": "AverageValue", "averageValue": "2"}, "0")
                ],
                "scaleToZero": {"cooldownSeconds": 300},
            },
            rules=[
                rule(
                    "api_latency_seconds",
                    "^api_latency_seconds$",
                    "api-formula",
                    'vector(((scalar((max(api_latency_seconds{quantile="0.99"})) or vector(0))'
                    " + scalar((sum(api_inflight_requests)) or vector(0))) / 2.0))",
                ),
            ],
            notes={
                "spec.idleReplicaCount": True,
                "spec.triggers[0].metadata.serverAddress": False,
                "spec.triggers[1].metadata.serverAddress": False,
                "spec.cooldownPeriod": False,
                "spec.advanced.restoreToOriginalReplicaCount": True,
                "spec.advanced.scalingModifiers": False,
            },
        ),
        id="idle-replicas-and-scaling-modifiers",
    ),
    pytest.param(
        Case(
            ex.KEDA_PAUSED_WITH_CPU,
            spec={
                "scaleTargetRef": {**REF, "name": "web"},
                "minReplicas": 1,
                "maxReplicas": 10,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 60},
                        },
                    },
                    external(
                        "web-http_requests_total", {"type": "AverageValue", "averageValue": "50"}
                    ),
                ],
                "behavior": {"scaleDown": {"selectPolicy": "Disabled"}},
            },
            rules=[
                rule(
                    "http_requests_total",
                    "^http_requests_total$",
                    "web-http_requests_total",
                    '(sum(rate(http_requests_total{app="web"}[1m]))) or vector(0)',
                )
            ],
            notes={
                "spec.triggers[1].metadata.serverAddress": False,
                "spec.triggers[1].metadata.activationThreshold": False,
                "spec.cooldownPeriod": False,
                "metadata.annotations[autoscaling.keda.sh/paused-scale-in]": False,
            },
            annotations={"promscaler.dev/paused-replicas": "4"},
        ),
        id="paused-with-cpu-trigger",
    ),
    pytest.param(
        Case(
            ex.KEDA_KAFKA,
            spec={
                "scaleTargetRef": {**REF, "name": "consumer"},
                "minReplicas": 1,
                "maxReplicas": 100,
                "metrics": [
                    external(
                        "consumer-kafka_consumergroup_lag",
                        {"type": "AverageValue", "averageValue": "5"},
                    )
                ],
            },
            rules=[
                rule(
                    "kafka_consumergroup_lag",
                    "^kafka_consumergroup_lag$",
                    "consumer-kafka_consumergroup_lag",
                    '(sum(kafka_consumergroup_lag{consumergroup="my-group"})) or vector(0)',
                )
            ],
            notes={"spec.triggers[0]": True, "spec.triggers[1].metadata.serverAddress": False},
        ),
        id="kafka-trigger-not-carried",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_scaled_object_converts(case: Case):
    doc = ex.load(case.text)
    got = convert(doc)
    assert got.autoscaler["apiVersion"] == "promscaler.dev/v1alpha1"
    assert got.autoscaler["kind"] == "Autoscaler"
    meta = got.autoscaler["metadata"]
    assert (meta["name"], meta.get("namespace")) == (
        doc["metadata"]["name"],
        doc["metadata"]["namespace"],
    )
    assert meta.get("annotations") == case.annotations
    assert got.autoscaler["spec"] == case.spec
    assert list(got.external_rules) == case.rules
    assert {n.field: n.changes_behaviour for n in got.notes} == case.notes
    assert got.changes_behaviour == any(case.notes.values())


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        pytest.param(
            {"query": None}, r"spec\.triggers\[0\]\.metadata\.query: required", id="no-query"
        ),
        pytest.param(
            {"threshold": "lots"},
            r"spec\.triggers\[0\]\.metadata\.threshold: 'lots' is not a number",
            id="threshold",
        ),
        pytest.param(
            {"query": "sum(rate(x[2m]"},
            r"spec\.triggers\[0\]\.metadata\.query: not valid PromQL",
            id="bad-promql",
        ),
        pytest.param(
            {"activationThreshold": "-"},
            r"spec\.triggers\[0\]\.metadata\.activationThreshold: '-' is not a number",
            id="activation",
        ),
    ],
)
def test_bad_trigger_metadata_is_named(patch, message):
    doc = ex.load(ex.KEDA_PROMETHEUS)
    meta = doc["spec"]["triggers"][0]["metadata"]
    meta.update(patch)
    with pytest.raises(
        ConvertError, match=r"^ScaledObject default/prometheus-scaledobject: " + message
    ):
        convert(doc)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        pytest.param({"triggers": []}, r"spec\.triggers: at least one", id="no-triggers"),
        pytest.param(
            {"scaleTargetRef": {}}, r"spec\.scaleTargetRef\.name: required", id="no-target"
        ),
        pytest.param(
            {"fallback": {"failureThreshold": 3, "replicas": 2, "behavior": "sometimes"}},
            r"spec\.fallback\.behavior: 'sometimes'",
            id="fallback-behavior",
        ),
        pytest.param(
            {"fallback": {"replicas": 2}}, r"failureThreshold: required", id="fallback-threshold"
        ),
        pytest.param(
            {
                "triggers": [
                    {
                        "type": "prometheus",
                        "metricType": "Utilization",
                        "metadata": {"query": "x", "threshold": "1"},
                    }
                ]
            },
            r"spec\.triggers\[0\]\.metricType: 'Utilization'",
            id="prometheus-utilization",
        ),
    ],
)
def test_bad_spec_is_named(patch, message):
    doc = ex.load(ex.KEDA_PROMETHEUS)
    doc["spec"].update(patch)
    with pytest.raises(ConvertError, match=message):
        convert(doc)


def test_unknown_kind_is_refused():
    with pytest.raises(NotConverted, match=r"ScaledJob default/x: not converted"):
        convert({"kind": "ScaledJob", "metadata": {"name": "x"}, "spec": {}})
