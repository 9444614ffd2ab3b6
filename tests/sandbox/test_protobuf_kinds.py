"""Every built-in kind the sandbox serves is in the protobuf message table.

The walk: objects of every kind, as users create them and as the sandbox's own controllers,
kubelet and nodes write them, are answered whole as protobuf to a client that asks for it
first, and read back equal to their JSON.
"""

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from sandbox import protobuf, protoencode, protomessages
from sandbox.resources import BUILTIN, CREATE_ONLY
from tests.sandbox.test_crds import crd, crd_with_rule

PROTOBUF_FIRST = f"{protoencode.MEDIA_TYPE}, application/json"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
HELM = shutil.which("helm") or str(Path(__file__).resolve().parents[2] / ".tools" / "helm")
NS = "default"
# kinds the table leaves out, each for its reason (sandbox/README.md says the same): none
NOT_IN_TABLE: set[tuple[str, str]] = set()

POD_TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "ports": [{"containerPort": 80}],
                "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
                "volumeMounts": [{"name": "scratch", "mountPath": "/tmp"}],
                "securityContext": {"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}},
            }
        ],
        "volumes": [{"name": "scratch", "emptyDir": {}}],
        "tolerations": [{"operator": "Exists"}],
    },
}
SELECTOR = {"matchLabels": {"app": "web"}}
OBJECTS = [
    ("/apis/apps/v1", "deployments", {"replicas": 2, "selector": SELECTOR}),
    ("/apis/apps/v1", "statefulsets", {"replicas": 1, "serviceName": "web", "selector": SELECTOR}),
    ("/apis/apps/v1", "daemonsets", {"selector": SELECTOR}),
    ("/apis/batch/v1", "jobs", {}),
]
PLAIN = [  # (path, apiVersion, kind, body)
    (
        "/api/v1/persistentvolumes",
        "v1",
        "PersistentVolume",
        {
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "local": {"path": "/d"},
            }
        },
    ),
    (
        f"/api/v1/namespaces/{NS}/persistentvolumeclaims",
        "v1",
        "PersistentVolumeClaim",
        {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
    ),
    (
        f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses",
        "networking.k8s.io/v1",
        "Ingress",
        {"spec": {"defaultBackend": {"service": {"name": "web", "port": {"name": "http"}}}}},
    ),
    (
        f"/api/v1/namespaces/{NS}/endpoints",
        "v1",
        "Endpoints",
        {"subsets": [{"addresses": [{"ip": "10.0.0.9"}], "ports": [{"port": 80}]}]},
    ),
    (
        f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices",
        "discovery.k8s.io/v1",
        "EndpointSlice",
        {
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.9"], "conditions": {"ready": False}}],
            "ports": [{"port": 80}],
        },
    ),
    (
        f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases",
        "coordination.k8s.io/v1",
        "Lease",
        {"spec": {"holderIdentity": "me", "renewTime": "2026-01-01T00:00:00.250000Z"}},
    ),
    (
        f"/apis/events.k8s.io/v1/namespaces/{NS}/events",
        "events.k8s.io/v1",
        "Event",
        {
            "eventTime": "2026-01-01T00:00:00.000001Z",
            "reportingController": "me",
            "reportingInstance": "me-1",
            "action": "Scale",
            "reason": "Scaled",
            "regarding": {"kind": "Deployment", "name": "web", "namespace": NS},
            "type": "Normal",
        },
    ),
    (
        f"/api/v1/namespaces/{NS}/services",
        "v1",
        "Service",
        {"spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}},
    ),
    (f"/api/v1/namespaces/{NS}/serviceaccounts", "v1", "ServiceAccount", {}),
    (f"/api/v1/namespaces/{NS}/configmaps", "v1", "ConfigMap", {"data": {"a": "b"}}),
    (f"/api/v1/namespaces/{NS}/secrets", "v1", "Secret", {"data": {"a": "Yg=="}}),
    (
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles",
        "rbac.authorization.k8s.io/v1",
        "Role",
        {"rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]},
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        {"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]},
    ),
    (
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings",
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        {
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "web"},
            "subjects": [{"kind": "User", "name": "alice"}],
        },
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        {
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "web",
            },
            "subjects": [
                {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}
            ],
        },
    ),
    (
        f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets",
        "policy/v1",
        "PodDisruptionBudget",
        {"spec": {"minAvailable": 1, "selector": SELECTOR}},
    ),
    (
        f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers",
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}},
    ),
]


def _path(rt):
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else "/api/v1"
    return f"{base}/{rt.plural}"


def _listable():
    return [rt for rt in BUILTIN if rt.verbs != CREATE_ONLY]


def test_every_builtin_kind_is_in_the_table():
    missing = {
        (rt.api_version, rt.kind)
        for rt in _listable()
        if protomessages.message_for(rt.api_version, rt.kind) is None
    }
    assert missing == NOT_IN_TABLE


def _without_zeros(value):
    # protobuf has no absent-versus-zero for Go's non-pointer fields: compare what is set
    if isinstance(value, dict):
        kept = {k: _without_zeros(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, "", 0, False, {}, [])}
    if isinstance(value, list):
        return [_without_zeros(v) for v in value]
    return value


async def _create_everything(http):
    for base, plural, spec in OBJECTS:
        body = {"metadata": {"name": "web"}, "spec": {**spec, "template": POD_TEMPLATE}}
        if plural == "jobs":
            template = {**POD_TEMPLATE, "spec": {**POD_TEMPLATE["spec"], "restartPolicy": "Never"}}
            body = {"metadata": {"name": "web"}, "spec": {"template": template}}
        status, doc = await http.request("POST", f"{base}/namespaces/{NS}/{plural}", json=body)
        assert status == 201, doc
    status, created = await http.request("POST", CRDS, json=crd())
    assert status == 201, created
    for path, _, _, doc in PLAIN:
        status, created = await http.request(
            "POST", path, json={"metadata": {"name": "web"}, **doc}
        )
        assert status == 201, created
    for _ in range(100):  # the workload simulation and the kubelet write the statuses
        _, pods = await http.request("GET", f"/api/v1/namespaces/{NS}/pods")
        ready = [p for p in pods["items"] if p["status"].get("containerStatuses")]
        if len(ready) >= 3:  # two of the deployment, one of the statefulset
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the pods never got their status")


async def _get_raw(http, path):
    headers = {"Accept": PROTOBUF_FIRST, "Authorization": f"Bearer {http.token}"}
    async with http.session.get(http.sb.url + path, headers=headers) as resp:
        return resp.content_type, await resp.read()


async def test_what_the_sandbox_stores_is_answered_whole_as_protobuf(sandbox_factory):
    from tests.support.sandbox import SandboxHttp

    sb = await sandbox_factory(pod_ready_delay=0.05)
    http = SandboxHttp(sb)
    try:
        await _create_everything(http)
        seen = {}
        for rt in _listable():
            ctype, raw, as_json = await _both(http, _path(rt))
            seen[rt.kind] = len(as_json["items"])
            if (rt.api_version, rt.kind) in NOT_IN_TABLE:
                assert ctype == "application/json"
                continue
            assert ctype == protoencode.MEDIA_TYPE, (rt.kind, raw[:300])
            for item, decoded in zip(as_json["items"], _items(raw, rt), strict=True):
                item = {k: v for k, v in item.items() if k not in ("apiVersion", "kind")}
                assert _without_zeros(decoded) == _without_zeros(item), json.dumps(item)
    finally:
        await http.close()
    # every kind but the review requests had objects to say
    assert sorted(k for k, n in seen.items() if not n) == []


async def _both(http, path):
    """The list as protobuf and as JSON, at one resourceVersion (the kubelet keeps writing)."""
    for _ in range(50):
        _, as_json = await http.request("GET", path)
        ctype, raw = await _get_raw(http, path)
        if ctype != protoencode.MEDIA_TYPE:
            return ctype, raw, as_json
        list_meta = protobuf.fields(protobuf.fields(protobuf.fields(raw[4:])[2][0])[1][0])
        if list_meta[2] == [as_json["metadata"]["resourceVersion"].encode()]:
            return ctype, raw, as_json
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} never held still")


def _items(raw, rt):
    unknown = protobuf.fields(raw[len(protobuf.MAGIC) :])
    top = protomessages.message_for(rt.api_version, rt.kind)
    body = protobuf.fields(unknown[2][0])
    return [
        protomessages.decode_message(top, protobuf.fields(item), protobuf.fields)
        for item in body.get(2, [])
    ]


@pytest.mark.parametrize(
    ("path", "api_version", "kind", "doc"), PLAIN, ids=[kind for _, _, kind, _ in PLAIN]
)
async def test_a_protobuf_body_is_stored_as_its_json_twin(
    sandbox_http, path, api_version, kind, doc
):
    body = protoencode.encode(
        {"apiVersion": api_version, "kind": kind, "metadata": {"name": "pb"}, **doc}
    )
    headers = {"Content-Type": protoencode.MEDIA_TYPE}
    status, from_pb = await sandbox_http.request("POST", path, data=body, headers=headers)
    assert status == 201, from_pb
    status, from_json = await sandbox_http.request(
        "POST", path, json={"metadata": {"name": "js"}, **doc}
    )
    assert status == 201, from_json
    for stored in (from_pb, from_json):
        del stored["metadata"]
        for allocated in ("clusterIP", "clusterIPs"):  # a Service's own, allocated on create
            stored.get("spec", {}).pop(allocated, None)
    assert from_pb == from_json


@pytest.mark.skipif(not os.access(HELM, os.X_OK), reason="helm is not installed")
def test_every_object_of_the_chart_encodes_whole():
    # the project's own manifests, as helm renders them: what a typed client would send
    chart = Path(__file__).resolve().parents[2] / "charts" / "promscaler"
    rendered = subprocess.run(
        [HELM, "template", "t", str(chart), "--include-crds"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    kinds = {(d["apiVersion"], d["kind"]) for d in docs}
    assert ("apps/v1", "Deployment") in kinds
    for doc in docs:
        if (doc["apiVersion"], doc["kind"]) in NOT_IN_TABLE:
            continue
        decoded = protobuf.decode(protoencode.encode(doc))
        assert _without_zeros(decoded) == _without_zeros(doc), doc["metadata"]["name"]


RICH_SCHEMA = {  # every JSON shape JSONSchemaProps' special messages take
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "ratio": {"type": "number", "minimum": -1.5, "maximum": 2, "multipleOf": 0.5},
                "ports": {
                    "type": "array",
                    "maxItems": 3,
                    "items": {"type": "integer", "format": "int32"},
                    "x-kubernetes-list-type": "set",
                },
                "name": {"type": "string", "maxLength": 0, "default": "", "pattern": "^a"},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}]},
                "flag": {"type": "boolean", "default": False, "nullable": True},
            },
        },
    },
}


def _crd_with_schema(schema):
    out = crd()
    for version in out["spec"]["versions"]:
        version["schema"] = {"openAPIV3Schema": schema}
    return out


@pytest.mark.parametrize(
    "definition",
    [
        pytest.param(crd(versions=("v1", "v2")), id="defaults-enums-minimums-subresources"),
        pytest.param(crd_with_rule("self.replicas <= 5", "too many"), id="cel-rule"),
        pytest.param(_crd_with_schema(RICH_SCHEMA), id="or-types-doubles-json"),
    ],
)
async def test_a_crd_sent_as_protobuf_is_stored_as_sent(sandbox_http, definition):
    headers = {"Content-Type": protoencode.MEDIA_TYPE}
    body = protoencode.encode(definition)
    status, stored = await sandbox_http.request("POST", CRDS, data=body, headers=headers)
    assert status == 201, stored
    schema = definition["spec"]["versions"][0]["schema"]
    assert stored["spec"]["versions"][0]["schema"] == schema
