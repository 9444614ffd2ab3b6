"""Protobuf responses for clients that ask for them first; JSON for everything else."""

import asyncio
import json
import shutil

import pytest

from sandbox import protobuf, protoencode
from sandbox.gnostic import _bytes, _string, _tag, _varint
from tests.sandbox.test_crds import crd, widget
from tests.sandbox.test_kubectl import Kubectl

PROTOBUF_FIRST = {"Accept": "application/vnd.kubernetes.protobuf, application/json"}
NS = "/api/v1/namespaces/default"


def test_a_namespace_encodes_byte_for_byte():
    doc = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "generation": 2}}
    meta = _string(1, "team") + _tag(7, 0) + _varint(2)
    type_meta = _string(1, "v1") + _string(2, "Namespace")
    # runtime.Unknown's NestedMarshalTo writes contentEncoding (3) and contentType (4) empty
    unknown = _bytes(1, type_meta) + _bytes(2, _bytes(1, meta)) + _bytes(3, b"") + _bytes(4, b"")
    want = protobuf.MAGIC + unknown
    assert protoencode.encode(doc) == want


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "x": 1}, id="field"),
        pytest.param({"apiVersion": "example.com/v1", "kind": "Widget"}, id="custom-kind"),
        pytest.param(
            {"apiVersion": "v1", "kind": "ConfigMap", "data": ["not", "a", "map"]}, id="shape"
        ),
    ],
)
def test_what_the_table_cannot_encode_whole_is_refused(doc):
    with pytest.raises(protoencode.CannotEncode):
        protoencode.encode(doc)


@pytest.mark.parametrize(
    ("accept", "want"),
    [
        pytest.param("application/vnd.kubernetes.protobuf, application/json", True, id="pb-first"),
        pytest.param("application/vnd.kubernetes.protobuf", True, id="pb-only"),
        pytest.param("application/json, application/vnd.kubernetes.protobuf", False, id="json"),
        pytest.param("", False, id="none"),
        pytest.param(
            "application/json;q=0.5, application/vnd.kubernetes.protobuf",
            True,
            id="json-weighed-down",
        ),
        pytest.param(
            "application/vnd.kubernetes.protobuf;q=0.5, application/json",
            False,
            id="pb-weighed-down",
        ),
        pytest.param("application/vnd.kubernetes.protobuf;q=0, */*", False, id="pb-refused"),
        pytest.param("application/vnd.kubernetes.protobuf, */*", True, id="pb-then-anything"),
        pytest.param("*/*;q=0.8, application/vnd.kubernetes.protobuf", True, id="pb-over-wildcard"),
        pytest.param(
            "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json",
            False,
            id="pb-table-not-written",
        ),
    ],
)
def test_who_gets_protobuf(accept, want):
    assert protoencode.wants_protobuf(accept) is want


async def test_a_stored_object_read_as_protobuf_is_the_json_one(sandbox_http):
    body = {"metadata": {"name": "c", "labels": {"a": "b"}}, "data": {"k": "v", "e": ""}}
    status, _ = await sandbox_http.request("POST", f"{NS}/configmaps", json=body)
    assert status == 201
    _, as_json = await sandbox_http.request("GET", f"{NS}/configmaps/c")
    status, raw, ctype = await _get_raw(sandbox_http, f"{NS}/configmaps/c")
    assert (status, ctype) == (200, protoencode.MEDIA_TYPE)
    assert protobuf.decode(raw) == as_json


async def test_a_list_is_encoded_with_its_list_meta(sandbox_http):
    for name in ("a", "b"):
        await sandbox_http.request("POST", f"{NS}/configmaps", json={"metadata": {"name": name}})
    status, raw, ctype = await _get_raw(sandbox_http, f"{NS}/configmaps?limit=1")
    assert (status, ctype) == (200, protoencode.MEDIA_TYPE)
    unknown = protobuf.fields(raw[len(protobuf.MAGIC) :])
    type_meta = protobuf.fields(unknown[1][0])
    assert (type_meta[1][0], type_meta[2][0]) == (b"v1", b"ConfigMapList")
    body = protobuf.fields(unknown[2][0])
    list_meta = protobuf.fields(body[1][0])
    assert list_meta[3][0]  # continue token for the next page
    assert len(body[2]) == 1


UNTABLED = {  # a PodSpec field the message table does not describe
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "x"}], "setHostnameAsFQDN": True},
}


CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"


@pytest.mark.parametrize(
    ("create", "path", "want_status"),
    [
        pytest.param((), f"{NS}/configmaps/missing", 404, id="status-stays-json"),
        pytest.param(((CRDS, crd()), (WIDGETS, widget("w"))), WIDGETS, 200, id="custom-resources"),
        pytest.param(((f"{NS}/pods", UNTABLED),), f"{NS}/pods/p", 200, id="field-outside"),
    ],
)
async def test_json_whenever_protobuf_cannot_say_it(sandbox_http, create, path, want_status):
    for at, body in create:
        for _ in range(50):  # a custom resource is served a moment after its CRD is stored
            status, _ = await sandbox_http.request("POST", at, json=body)
            if status != 404:
                break
            await asyncio.sleep(0.02)
        assert status == 201
    status, raw, ctype = await _get_raw(sandbox_http, path)
    assert (status, ctype) == (want_status, "application/json")
    assert json.loads(raw)["kind"]


async def _get_raw(sandbox_http, path):
    headers = {**PROTOBUF_FIRST, "Authorization": f"Bearer {sandbox_http.token}"}
    async with sandbox_http.session.get(sandbox_http.sb.url + path, headers=headers) as resp:
        return resp.status, await resp.read(), resp.content_type


async def test_a_rolled_out_deployment_round_trips(sandbox_http):
    # intstr, times and conditions make the trip
    path = "/apis/apps/v1/namespaces/default/deployments"
    pods = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    spec = {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": pods}
    status, _ = await sandbox_http.request(
        "POST", path, json={"metadata": {"name": "web"}, "spec": spec}
    )
    assert status == 201
    for _ in range(100):  # the workload simulation writes the status conditions
        _, as_json = await sandbox_http.request("GET", f"{path}/web")
        if as_json["status"].get("availableReplicas"):
            break
        await asyncio.sleep(0.05)
    assert as_json["status"]["conditions"]
    assert as_json["spec"]["strategy"]["rollingUpdate"] == {
        "maxSurge": "25%",
        "maxUnavailable": "25%",
    }
    status, raw, ctype = await _get_raw(sandbox_http, f"{path}/web")
    assert (status, ctype) == (200, protoencode.MEDIA_TYPE)
    assert protobuf.decode(raw) == as_json


def _without_go_zeros(value):
    # kubectl prints a typed object with Go's zero values (`creationTimestamp: null`,
    # `resources: {}`), as it does for a real cluster's answer; JSON from the server omits them
    if isinstance(value, dict):
        kept = {k: _without_go_zeros(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, {})}
    if isinstance(value, list):
        return [_without_go_zeros(v) for v in value]
    return value


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.parametrize(
    ("create", "get"),
    [
        pytest.param("create deployment web --image=nginx", "deployment web", id="deployment"),
        pytest.param("create job j --image=busybox", "job j", id="job"),
        pytest.param("create role r --verb=get --resource=pods", "role r", id="role"),
        pytest.param("create ingress i --rule=h/p=s:80", "ingress i", id="ingress"),
    ],
)
async def test_kubectl_decodes_the_protobuf_answer(sandbox, tmp_path, create, get):
    kubectl = Kubectl(sandbox, tmp_path)
    _, out, err = await kubectl(*create.split(), "-o", "json", "-v=8")
    answer = err.split("201 Created", 1)[1]  # -v=8 logs the response's headers after its status
    assert answer.split("Content-Type: ", 1)[1].startswith(protoencode.MEDIA_TYPE)
    _, stored, _ = await kubectl("get", *get.split(), "-o", "json")
    created, stored = json.loads(out), json.loads(stored)
    assert created["metadata"]["uid"] == stored["metadata"]["uid"]
    for field in ("spec", "rules"):
        assert _without_go_zeros(created.get(field)) == _without_go_zeros(stored.get(field))
