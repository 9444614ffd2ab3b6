"""Native HPAs to Autoscalers: v2 carries over field for field, v1's CPU target becomes the v2
Resource metric, and what cannot be read is named."""

from __future__ import annotations

import pytest

from autoscaler.convert import ConvertError, convert
from tests.convert import examples as ex


def cpu(percent: int) -> dict:
    return {
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": percent},
        },
    }


def test_v2_spec_carries_over_unchanged_without_status_or_server_annotations():
    doc = ex.load(ex.HPA_V2)
    got = convert(doc)
    assert got.autoscaler == {
        "apiVersion": "promscaler.dev/v1alpha1",
        "kind": "Autoscaler",
        "metadata": {"name": "php-apache", "namespace": "default"},
        "spec": doc["spec"],
    }
    assert got.external_rules == ()
    assert got.notes == ()


def test_v2beta2_is_read_as_v2():
    doc = ex.load(ex.HPA_V2)
    doc["apiVersion"] = "autoscaling/v2beta2"
    assert convert(doc).autoscaler["spec"] == doc["spec"]


@pytest.mark.parametrize(
    ("patch", "metric"),
    [
        pytest.param({}, cpu(50), id="cpu-target"),
        # the HPA controller's default when a v1 HPA names no target
        pytest.param({"targetCPUUtilizationPercentage": None}, cpu(80), id="default-80"),
    ],
)
def test_v1_cpu_target_becomes_a_resource_metric(patch, metric):
    doc = ex.load(ex.HPA_V1)
    for key, value in patch.items():
        if value is None:
            del doc["spec"][key]
    got = convert(doc)
    assert got.autoscaler["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "php-apache"},
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [metric],
    }
    assert not got.changes_behaviour


def test_v1_alpha_metrics_annotation_is_named_as_changing_behaviour():
    doc = ex.load(ex.HPA_V1)
    doc["metadata"]["annotations"] = {"autoscaling.alpha.kubernetes.io/metrics": "[]", "team": "a"}
    got = convert(doc)
    assert got.autoscaler["metadata"]["annotations"] == {"team": "a"}
    (note,) = got.notes
    assert note.field == "metadata.annotations[autoscaling.alpha.kubernetes.io/metrics]"
    assert note.changes_behaviour
    assert "hpa.v2.autoscaling" in note.message


def test_unknown_spec_field_is_named():
    doc = ex.load(ex.HPA_V2)
    doc["spec"]["targetCPUUtilizationPercentage"] = 50  # a v1 field on a v2 object
    (note,) = convert(doc).notes
    assert (note.field, note.changes_behaviour) == ("spec.targetCPUUtilizationPercentage", True)


@pytest.mark.parametrize(
    ("api", "spec", "message"),
    [
        pytest.param(
            "autoscaling/v2beta1", {}, r"apiVersion 'autoscaling/v2beta1' is not", id="v2beta1"
        ),
        pytest.param("autoscaling/v2", None, r"spec: expected an object", id="no-spec"),
    ],
)
def test_unreadable_hpas_are_refused(api, spec, message):
    doc = ex.load(ex.HPA_V2)
    doc["apiVersion"] = api
    doc["spec"] = spec
    with pytest.raises(
        ConvertError, match=r"HorizontalPodAutoscaler default/php-apache: " + message
    ):
        convert(doc)
