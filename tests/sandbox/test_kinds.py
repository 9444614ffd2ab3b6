"""The kinds users' rules touch: ingresses, PVs, PVCs, jobs, daemonsets (defaults, validation,
discovery), through the raw API."""

import pytest

WEB = {
    "selector": {"matchLabels": {"app": "w"}},
    "template": {
        "metadata": {"labels": {"app": "w"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    },
}

CREATED = [
    pytest.param(
        "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
        {
            "metadata": {"name": "ing"},
            "spec": {
                "rules": [
                    {
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "pathType": "Prefix",
                                    "backend": {"service": {"name": "web", "port": {"number": 80}}},
                                }
                            ]
                        }
                    }
                ]
            },
        },
        {"status": {"loadBalancer": {}}, "metadata": {"generation": 1}},
        id="ingress-status-and-generation",
    ),
    pytest.param(
        "/api/v1/persistentvolumes",
        {
            "metadata": {"name": "pv1"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/data"},
            },
        },
        {
            "spec": {"persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"},
        },
        id="pv-defaults-pending",
    ),
    pytest.param(
        "/api/v1/namespaces/default/persistentvolumeclaims",
        {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
        {"spec": {"volumeMode": "Filesystem"}, "status": {"phase": "Pending"}},
        id="pvc-defaults-pending",
    ),
    pytest.param(
        "/apis/batch/v1/namespaces/default/jobs",
        {
            "metadata": {"name": "once"},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}],
                    }
                }
            },
        },
        {
            "spec": {
                "completions": 1,
                "parallelism": 1,
                "backoffLimit": 6,
                "completionMode": "NonIndexed",
                "suspend": False,
            }
        },
        id="job-defaults",
    ),
    pytest.param(
        "/apis/apps/v1/namespaces/default/daemonsets",
        {"metadata": {"name": "agent"}, "spec": WEB},
        {
            "spec": {"revisionHistoryLimit": 10, "updateStrategy": {"type": "RollingUpdate"}},
            "status": {"desiredNumberScheduled": 0, "numberReady": 0},
        },
        id="daemonset-defaults",
    ),
]


def _contains(big, small):
    if isinstance(small, dict):
        return isinstance(big, dict) and all(_contains(big.get(k), v) for k, v in small.items())
    return big == small


@pytest.mark.parametrize(("path", "body", "expected"), CREATED)
async def test_created_with_defaults(sandbox_http, path, body, expected):
    status, obj = await sandbox_http.request("POST", path, json=body)
    assert status == 201, obj
    assert _contains(obj, expected), obj
    status, got = await sandbox_http.request("GET", f"{path}/{body['metadata']['name']}")
    assert status == 200
    assert got["metadata"]["uid"] == obj["metadata"]["uid"]


async def test_job_selector_is_generated_from_its_uid(sandbox_http):
    body = CREATED[3].values[1]
    _, job = await sandbox_http.request("POST", "/apis/batch/v1/namespaces/default/jobs", json=body)
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == "once"
    assert labels["controller-uid"] == uid


INVALID = [
    pytest.param(
        "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
        {
            "metadata": {"name": "bad"},
            "spec": {
                "rules": [
                    {"http": {"paths": [{"path": "/", "backend": {"service": {"name": "w"}}}]}}
                ]
            },
        },
        "spec.rules[0].http.paths[0].pathType",
        id="ingress-path-type-required",
    ),
    pytest.param(
        "/api/v1/persistentvolumes",
        {
            "metadata": {"name": "bad"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]},
        },
        "must specify a volume type",
        id="pv-without-a-source",
    ),
    pytest.param(
        "/api/v1/namespaces/default/persistentvolumeclaims",
        {"metadata": {"name": "bad"}, "spec": {"accessModes": ["ReadWriteOnce"]}},
        "spec.resources[storage]",
        id="pvc-without-storage",
    ),
    pytest.param(
        "/api/v1/namespaces/default/persistentvolumeclaims",
        {
            "metadata": {"name": "bad"},
            "spec": {"accessModes": ["Sometimes"], "resources": {"requests": {"storage": "1Gi"}}},
        },
        'Unsupported value: "Sometimes"',
        id="pvc-bad-access-mode",
    ),
    pytest.param(
        "/apis/batch/v1/namespaces/default/jobs",
        {
            "metadata": {"name": "bad"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}},
        },
        "spec.template.spec.restartPolicy",
        id="job-restart-policy",
    ),
    pytest.param(
        "/apis/apps/v1/namespaces/default/daemonsets",
        {"metadata": {"name": "bad"}, "spec": {**WEB, "selector": {"matchLabels": {"app": "x"}}}},
        "`selector` does not match template `labels`",
        id="daemonset-selector-mismatch",
    ),
]


@pytest.mark.parametrize(("path", "body", "needle"), INVALID)
async def test_invalid_is_422_naming_the_field(sandbox_http, path, body, needle):
    status, doc = await sandbox_http.request("POST", path, json=body)
    assert status == 422, doc
    assert doc["kind"] == "Status"
    assert doc["reason"] == "Invalid"
    assert needle in doc["message"], doc["message"]
    name = body["metadata"]["name"]
    status, _ = await sandbox_http.request("GET", f"{path}/{name}")
    assert status == 404  # nothing stored


async def test_daemonsets_have_no_scale_subresource(sandbox_http):
    status, _doc = await sandbox_http.request(
        "POST",
        "/apis/apps/v1/namespaces/default/daemonsets",
        json={"metadata": {"name": "a"}, "spec": WEB},
    )
    assert status == 201
    status, _ = await sandbox_http.request(
        "GET", "/apis/apps/v1/namespaces/default/daemonsets/a/scale"
    )
    assert status == 404
    _, resources = await sandbox_http.request("GET", "/apis/apps/v1")
    names = {r["name"] for r in resources["resources"]}
    assert {"daemonsets", "daemonsets/status"} <= names
    assert "daemonsets/scale" not in names
    assert "deployments/scale" in names


@pytest.mark.parametrize(
    ("path", "resource"),
    [
        ("/apis/networking.k8s.io/v1", "ingresses"),
        ("/apis/batch/v1", "jobs"),
        ("/api/v1", "persistentvolumes"),
        ("/api/v1", "persistentvolumeclaims"),
        ("/apis/autoscaling/v1", "horizontalpodautoscalers"),
        ("/apis/autoscaling/v2", "horizontalpodautoscalers"),
    ],
)
async def test_discovery_lists_the_kind(sandbox_http, path, resource):
    status, doc = await sandbox_http.request("GET", path)
    assert status == 200
    assert resource in {r["name"] for r in doc["resources"]}
