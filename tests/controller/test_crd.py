"""The Autoscaler CRD accepts what the autoscaling/v2 API accepts and rejects what it rejects,
with the HPA's defaults. Checked locally (structural schema + CEL rules evaluated by cel-python)."""

from __future__ import annotations

import pytest

from tests.controller.crdcheck import load_crd, validate

REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "php-apache"}


def cpu(util=50):
    return {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": util}},
    }


def ext(target=None, selector=None):
    metric = {"name": "queue_messages_ready"}
    if selector:
        metric["selector"] = selector
    return {
        "type": "External",
        "external": {
            "metric": metric,
            "target": target or {"type": "AverageValue", "averageValue": "30"},
        },
    }


def obj(**spec):
    return {
        "apiVersion": "promscaler.dev/v1alpha1",
        "kind": "Autoscaler",
        "metadata": {"name": "php-apache", "namespace": "default"},
        "spec": {"scaleTargetRef": REF, "maxReplicas": 10, **spec},
    }


# The examples of the HPA walkthrough and the autoscaling/v2 API reference.
ACCEPTED = [
    pytest.param(obj(minReplicas=1, metrics=[cpu()]), id="walkthrough-cpu-50"),
    pytest.param(
        obj(
            minReplicas=1,
            metrics=[
                cpu(),
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "packets-per-second"},
                        "target": {"type": "AverageValue", "averageValue": "1k"},
                    },
                },
                {
                    "type": "Object",
                    "object": {
                        "metric": {"name": "requests-per-second"},
                        "describedObject": {
                            "apiVersion": "networking.k8s.io/v1",
                            "kind": "Ingress",
                            "name": "main-route",
                        },
                        "target": {"type": "Value", "value": "10k"},
                    },
                },
            ],
        ),
        id="walkthrough-multiple-metrics",
    ),
    pytest.param(
        obj(metrics=[ext(selector={"matchLabels": {"queue": "worker_tasks"}})]),
        id="external-queue-selector",
    ),
    pytest.param(
        obj(metrics=[ext({"type": "Value", "value": 30})]), id="external-integer-quantity"
    ),
    pytest.param(
        obj(
            metrics=[
                {
                    "type": "ContainerResource",
                    "containerResource": {
                        "name": "cpu",
                        "container": "application",
                        "target": {"type": "Utilization", "averageUtilization": 60},
                    },
                }
            ]
        ),
        id="container-resource",
    ),
    pytest.param(
        obj(
            metrics=[cpu()],
            behavior={
                "scaleDown": {
                    "stabilizationWindowSeconds": 300,
                    "policies": [
                        {"type": "Pods", "value": 4, "periodSeconds": 60},
                        {"type": "Percent", "value": 10, "periodSeconds": 60},
                    ],
                    "selectPolicy": "Min",
                },
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
                    "tolerance": "0.05",
                },
            },
        ),
        id="behavior-reference-example",
    ),
    pytest.param(
        obj(metrics=[cpu()], behavior={"scaleDown": {"selectPolicy": "Disabled"}}),
        id="scale-down-disabled",
    ),
    pytest.param(obj(minReplicas=0, metrics=[ext()]), id="scale-to-zero-external"),
    pytest.param(obj(minReplicas=0, metrics=[cpu(), ext()]), id="scale-to-zero-mixed"),
    pytest.param(obj(), id="all-defaults"),
]

REJECTED = [
    pytest.param(
        obj(minReplicas=5, maxReplicas=3, metrics=[cpu()]),
        "maxReplicas must be greater",
        id="max-below-min",
    ),
    pytest.param(obj(maxReplicas=0), "maxReplicas", id="max-zero"),
    pytest.param(
        obj(minReplicas=0, metrics=[cpu()]),
        "minReplicas may be 0 only",
        id="zero-without-object-or-external",
    ),
    pytest.param(obj(minReplicas=-1, metrics=[ext()]), "minReplicas", id="negative-min"),
    pytest.param(
        obj(metrics=[{"type": "External"}]),
        "external must be set when type is External",
        id="type-without-source",
    ),
    pytest.param(
        obj(metrics=[{**cpu(), "type": "Pods"}]),
        "must be set when type is",
        id="source-of-another-type",
    ),
    pytest.param(obj(metrics=[{"type": "Bogus"}]), "type", id="unknown-type"),
    pytest.param(
        obj(
            metrics=[
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}
            ]
        ),
        "averageUtilization is required",
        id="utilization-without-value",
    ),
    pytest.param(
        obj(
            metrics=[
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {
                            "type": "Utilization",
                            "averageUtilization": 50,
                            "averageValue": "100m",
                        },
                    },
                }
            ]
        ),
        "may not set both",
        id="resource-both-targets",
    ),
    pytest.param(
        obj(
            metrics=[
                {
                    "type": "Pods",
                    "pods": {"metric": {"name": "x"}, "target": {"type": "Value", "value": "1"}},
                }
            ]
        ),
        "averageValue",
        id="pods-needs-average-value",
    ),
    pytest.param(
        obj(metrics=[ext({"type": "Value", "value": "ten"})]), "does not match", id="bad-quantity"
    ),
    pytest.param(obj(metrics=[cpu(0)]), "averageUtilization", id="zero-utilization"),
    pytest.param(
        obj(
            behavior={"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 15}]}}
        ),
        "value",
        id="policy-value-zero",
    ),
    pytest.param(
        obj(
            behavior={
                "scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 1801}]}
            }
        ),
        "periodSeconds",
        id="period-over-1800",
    ),
    pytest.param(
        obj(behavior={"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 0}]}}),
        "periodSeconds",
        id="period-zero",
    ),
    pytest.param(
        obj(behavior={"scaleDown": {"stabilizationWindowSeconds": 3601}}),
        "stabilizationWindowSeconds",
        id="window-over-3600",
    ),
    pytest.param(
        obj(behavior={"scaleDown": {"selectPolicy": "Sometimes"}}),
        "selectPolicy",
        id="bad-select-policy",
    ),
    pytest.param(
        obj(behavior={"scaleDown": {"policies": []}}), "at least one policy", id="empty-policies"
    ),
    pytest.param(
        obj(behavior={"scaleDown": {"tolerance": "-0.1"}}), "tolerance", id="negative-tolerance"
    ),
    pytest.param(obj(scaleTargetRef={"kind": "Deployment"}), "name", id="target-without-name"),
    pytest.param({**obj(), "spec": {"scaleTargetRef": REF}}, "maxReplicas", id="no-max-replicas"),
]


@pytest.mark.parametrize("autoscaler", ACCEPTED)
def test_accepts_upstream_examples(autoscaler):
    _, errors = validate(autoscaler)
    assert errors == []


@pytest.mark.parametrize(("autoscaler", "says"), REJECTED)
def test_rejects_what_the_hpa_api_rejects(autoscaler, says):
    _, errors = validate(autoscaler)
    assert errors, "accepted an invalid spec"
    assert any(says in e for e in errors), errors


def test_defaults_match_the_hpa():
    defaulted, errors = validate(obj(behavior={"scaleDown": {}}))
    assert errors == []
    spec = defaulted["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == [cpu(80)]
    up, down = spec["behavior"]["scaleUp"], spec["behavior"]["scaleDown"]
    assert up == {
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15},
        ],
    }
    # the scale-down window stays unset: the controller's --controller-downscale-stabilization
    assert down == {
        "selectPolicy": "Max",
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
    }


def test_crd_names_columns_and_subresources():
    crd = load_crd()
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "autoscalers.promscaler.dev"
    assert (spec["group"], spec["scope"]) == ("promscaler.dev", "Namespaced")
    assert spec["names"]["kind"] == "Autoscaler"
    assert spec["names"]["plural"] == "autoscalers"
    assert spec["names"]["shortNames"] == ["pas"]
    (version,) = spec["versions"]
    assert version["name"] == "v1alpha1"
    assert version["subresources"] == {"status": {}}
    columns = [c["name"] for c in version["additionalPrinterColumns"]]
    assert columns == [
        "Reference",
        "Targets",
        "MinPods",
        "MaxPods",
        "Replicas",
        "Active",
        "Paused",
        "Fallback",
        "Age",
    ]
    status = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    assert {"observedGeneration", "history", "targets", "conditions", "currentMetrics"} <= set(
        status
    )
