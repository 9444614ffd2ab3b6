"""HorizontalPodAutoscalers: one stored autoscaling/v2 object served at v1 and v2 with upstream's
conversion (round-trip annotations), v2 defaults, validation, and `kubectl get hpa` columns."""

import asyncio
import json
import shutil

import pytest

V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
PODS = {
    "type": "Pods",
    "pods": {
        "metric": {"name": "requests_per_second"},
        "target": {"type": "AverageValue", "averageValue": "10"},
    },
}
CPU = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
}
EXTERNAL = {
    "type": "External",
    "external": {
        "metric": {"name": "queue_depth", "selector": {"matchLabels": {"queue": "jobs"}}},
        "target": {"type": "AverageValue", "averageValue": "30"},
    },
}


def hpa(name, **spec):
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {"scaleTargetRef": REF, "maxReplicas": 10, **spec},
    }


async def test_v2_defaults_on_create(sandbox_http):
    status, obj = await sandbox_http.request(
        "POST", V2, json=hpa("d", behavior={"scaleDown": {"stabilizationWindowSeconds": 60}})
    )
    assert status == 201, obj
    spec = obj["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        }
    ]
    assert spec["behavior"]["scaleUp"]["policies"] == [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ]
    assert spec["behavior"]["scaleDown"] == {
        "stabilizationWindowSeconds": 60,
        "selectPolicy": "Max",
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
    }
    assert obj["status"] == {"currentMetrics": None, "desiredReplicas": 0}


async def test_v2_object_read_as_v1_carries_the_rest_in_annotations(sandbox_http):
    body = hpa(
        "web",
        minReplicas=2,
        metrics=[PODS, CPU],
        behavior={"scaleUp": {"stabilizationWindowSeconds": 5}},
    )
    await sandbox_http.request("POST", V2, json=body)
    status, v1 = await sandbox_http.request("GET", f"{V1}/web")
    assert status == 200
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"] == {
        "scaleTargetRef": REF,
        "minReplicas": 2,
        "maxReplicas": 10,
        "targetCPUUtilizationPercentage": 60,
    }
    notes = v1["metadata"]["annotations"]
    assert json.loads(notes["autoscaling.alpha.kubernetes.io/metrics"]) == [
        {"type": "Pods", "pods": {"metricName": "requests_per_second", "targetAverageValue": "10"}}
    ]
    behavior = json.loads(notes["autoscaling.alpha.kubernetes.io/behavior"])
    assert behavior["ScaleUp"]["StabilizationWindowSeconds"] == 5
    assert behavior["ScaleDown"]["StabilizationWindowSeconds"] is None  # nil pointer -> null
    assert behavior["ScaleDown"]["Policies"] == [
        {"Type": "Percent", "Value": 100, "PeriodSeconds": 15}
    ]
    assert v1["status"] == {"currentReplicas": 0, "desiredReplicas": 0}


async def test_status_written_at_v2_shows_in_v1_annotations_and_cpu_field(sandbox_http):
    await sandbox_http.request("POST", V2, json=hpa("s", metrics=[CPU, EXTERNAL], minReplicas=0))
    _, obj = await sandbox_http.request("GET", f"{V2}/s")
    obj["status"] = {
        "currentReplicas": 3,
        "desiredReplicas": 4,
        "currentMetrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "current": {"averageUtilization": 75, "averageValue": "150m"},
                },
            },
            {
                "type": "External",
                "external": {"metric": {"name": "queue_depth"}, "current": {"averageValue": "31"}},
            },
        ],
        "conditions": [
            {
                "type": "AbleToScale",
                "status": "True",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
                "reason": "ReadyForNewScale",
                "message": "ok",
            }
        ],
    }
    status, _ = await sandbox_http.request("PUT", f"{V2}/s/status", json=obj)
    assert status == 200
    _, v1 = await sandbox_http.request("GET", f"{V1}/s")
    assert v1["status"]["currentCPUUtilizationPercentage"] == 75
    notes = v1["metadata"]["annotations"]
    current = json.loads(notes["autoscaling.alpha.kubernetes.io/current-metrics"])
    assert current[1] == {
        "type": "External",
        "external": {"metricName": "queue_depth", "currentValue": "0", "currentAverageValue": "31"},
    }
    conditions = json.loads(notes["autoscaling.alpha.kubernetes.io/conditions"])
    assert conditions[0]["reason"] == "ReadyForNewScale"


async def test_v1_object_round_trips_through_v2(sandbox_http):
    body = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "old",
            "annotations": {
                "team": "a",
                "autoscaling.alpha.kubernetes.io/metrics": json.dumps(
                    [
                        {
                            "type": "External",
                            "external": {"metricName": "queue_depth", "targetValue": "5"},
                        }
                    ]
                ),
            },
        },
        "spec": {"scaleTargetRef": REF, "maxReplicas": 4, "targetCPUUtilizationPercentage": 50},
    }
    status, created = await sandbox_http.request("POST", V1, json=body)
    assert status == 201, created
    assert created["metadata"]["annotations"]["team"] == "a"
    _, v2 = await sandbox_http.request("GET", f"{V2}/old")
    assert v2["metadata"]["annotations"] == {"team": "a"}  # round-trip annotations are dropped
    assert v2["spec"]["metrics"] == [
        {
            "type": "External",
            "external": {
                "metric": {"name": "queue_depth"},
                "target": {"type": "Value", "value": "5"},
            },
        },
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50},
            },
        },
    ]
    # an update through v1 keeps the v2-only metric carried by the annotation
    _, v1 = await sandbox_http.request("GET", f"{V1}/old")
    v1["spec"]["maxReplicas"] = 6
    status, _ = await sandbox_http.request("PUT", f"{V1}/old", json=v1)
    assert status == 200
    _, v2 = await sandbox_http.request("GET", f"{V2}/old")
    assert v2["spec"]["maxReplicas"] == 6
    assert v2["spec"]["metrics"][0]["type"] == "External"


BAD = [
    pytest.param({"maxReplicas": 0}, "spec.maxReplicas", "must be greater than 0", id="max-zero"),
    pytest.param(
        {"minReplicas": 5, "maxReplicas": 2},
        "spec.maxReplicas",
        "`minReplicas`",
        id="min-above-max",
    ),
    pytest.param(
        {"minReplicas": 0, "metrics": [PODS]},
        "spec.metrics",
        "Object or External metric",
        id="zero-needs-object-or-external",
    ),
    pytest.param(
        {"metrics": [{"type": "Bogus"}]},
        "spec.metrics[0].type",
        'Unsupported value: "Bogus"',
        id="metric-type",
    ),
    pytest.param(
        {"metrics": [{"type": "Pods"}]},
        "spec.metrics[0].pods",
        "must populate",
        id="metric-source-missing",
    ),
    pytest.param(
        {
            "metrics": [
                {
                    **PODS,
                    "pods": {
                        **PODS["pods"],
                        "target": {"type": "AverageValue", "averageValue": "ten"},
                    },
                }
            ]
        },
        "spec.metrics[0].pods.target.averageValue",
        "quantity",
        id="bad-quantity",
    ),
]


@pytest.mark.parametrize(("spec", "field", "needle"), BAD)
async def test_invalid_hpa_is_422(sandbox_http, spec, field, needle):
    status, doc = await sandbox_http.request("POST", V2, json=hpa("bad", **spec))
    assert status == 422, doc
    causes = [(c["field"], c["message"]) for c in doc["details"]["causes"]]
    assert any(f == field and needle in m for f, m in causes), causes


async def test_scale_to_zero_with_an_external_metric_is_valid(sandbox_http):
    status, obj = await sandbox_http.request(
        "POST", V2, json=hpa("z", minReplicas=0, metrics=[EXTERNAL])
    )
    assert status == 201
    assert obj["spec"]["minReplicas"] == 0


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_get_hpa_columns(sandbox, sandbox_http):
    await sandbox_http.request(
        "POST", V2, json=hpa("web", minReplicas=2, metrics=[PODS, CPU, EXTERNAL])
    )
    await sandbox_http.request("POST", V2, json=hpa("fresh"))
    _, obj = await sandbox_http.request("GET", f"{V2}/web")
    obj["status"] = {
        "currentReplicas": 3,
        "desiredReplicas": 3,
        "currentMetrics": [
            {
                "type": "Pods",
                "pods": {
                    "metric": {"name": "requests_per_second"},
                    "current": {"averageValue": "12500m"},
                },
            },
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "current": {"averageUtilization": 41, "averageValue": "41m"},
                },
            },
        ],
    }
    await sandbox_http.request("PUT", f"{V2}/web/status", json=obj)
    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        "--kubeconfig",
        str(sandbox.kubeconfig),
        "get",
        "hpa",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err
    lines = [line.split(None) for line in out.decode().splitlines()]
    assert lines[0] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    text = out.decode()
    assert "Deployment/web   12500m/10, cpu: 41%/60% + 1 more...   2         10        3" in text
    fresh = next(line for line in lines if line[0] == "fresh")
    assert fresh[1:7] == ["Deployment/web", "cpu:", "<unknown>/80%", "1", "10", "0"]


async def test_behavior_survives_an_update_through_v1(sandbox_http):
    behavior = {
        "scaleUp": {"stabilizationWindowSeconds": 5, "tolerance": "50m"},
        "scaleDown": {
            "selectPolicy": "Min",
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 30}],
        },
    }
    await sandbox_http.request("POST", V2, json=hpa("b", metrics=[EXTERNAL], behavior=behavior))
    _, before = await sandbox_http.request("GET", f"{V2}/b")
    _, v1 = await sandbox_http.request("GET", f"{V1}/b")
    v1["metadata"]["labels"] = {"touched": "yes"}
    status, _ = await sandbox_http.request("PUT", f"{V1}/b", json=v1)
    assert status == 200
    _, after = await sandbox_http.request("GET", f"{V2}/b")
    assert after["metadata"]["labels"] == {"touched": "yes"}
    assert after["spec"]["behavior"] == before["spec"]["behavior"]
    assert after["spec"]["behavior"]["scaleUp"]["tolerance"] == "50m"
    assert after["spec"]["metrics"] == before["spec"]["metrics"]


async def test_a_broken_round_trip_annotation_is_a_400_and_changes_nothing(sandbox_http):
    await sandbox_http.request("POST", V2, json=hpa("keep", metrics=[EXTERNAL], minReplicas=0))
    _, v1 = await sandbox_http.request("GET", f"{V1}/keep")
    v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"] = "[{not json"
    status, doc = await sandbox_http.request("PUT", f"{V1}/keep", json=v1)
    assert status == 400
    assert doc["kind"] == "Status"
    _, v2 = await sandbox_http.request("GET", f"{V2}/keep")
    assert v2["spec"]["metrics"] == [EXTERNAL]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_get_hpa_at_v1_shows_the_same_columns(sandbox, sandbox_http):
    await sandbox_http.request("POST", V2, json=hpa("web", minReplicas=2, metrics=[PODS, CPU]))
    rows = {}
    for resource in ("hpa.v2.autoscaling", "hpa.v1.autoscaling"):
        proc = await asyncio.create_subprocess_exec(
            "kubectl",
            "--kubeconfig",
            str(sandbox.kubeconfig),
            "get",
            resource,
            "web",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
        assert proc.returncode == 0, err
        rows[resource] = out.decode().splitlines()[1].split()[:-1]  # all but AGE
    assert rows["hpa.v1.autoscaling"] == rows["hpa.v2.autoscaling"]
    assert rows["hpa.v2.autoscaling"][:2] == ["web", "Deployment/web"]
