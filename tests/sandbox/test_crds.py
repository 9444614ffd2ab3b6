"""CustomResourceDefinitions: served at once, in discovery, with status/scale subresources."""

import asyncio
import copy
import json

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["target"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 0},
                "target": {"type": "string"},
                "mode": {"type": "string", "default": "fast", "enum": ["fast", "slow"]},
            },
        },
        "status": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}},
        },
    },
}


def crd(scope="Namespaced", *, versions=("v1",)):
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": scope,
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "shortNames": ["wd"],
            },
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": i == 0,
                    "schema": {"openAPIV3Schema": SCHEMA},
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                }
                for i, v in enumerate(versions)
            ],
        },
    }


def widget(name, **spec):
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"target": "t", **spec},
    }


async def test_crd_is_served_at_once_and_established(kube_client, sandbox_http):
    ext = client.ApiextensionsV1Api(kube_client)
    await ext.create_custom_resource_definition(crd())
    objects = client.CustomObjectsApi(kube_client)
    created = await objects.create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", widget("w1", replicas=2)
    )
    assert created["metadata"]["generation"] == 1
    assert created["spec"]["mode"] == "fast"  # schema default applied
    for _ in range(50):
        got = await ext.read_custom_resource_definition("widgets.example.com")
        conds = {c.type: c.status for c in (got.status.conditions or [])} if got.status else {}
        if conds.get("Established") == "True":
            break
        await asyncio.sleep(0.02)
    assert conds == {"Established": "True", "NamesAccepted": "True"}
    status, doc = await sandbox_http.request("GET", "/apis/example.com/v1")
    assert status == 200
    names = {r["name"]: r for r in doc["resources"]}
    assert names["widgets"]["shortNames"] == ["wd"]
    assert "widgets/scale" in names
    assert "widgets/status" in names
    _, groups = await sandbox_http.request("GET", "/apis")
    assert "example.com" in [g["name"] for g in groups["groups"]]


async def test_custom_object_status_and_scale_subresources(kube_client):
    await client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(crd())
    objects = client.CustomObjectsApi(kube_client)
    await objects.create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", widget("w", replicas=2)
    )
    await objects.patch_namespaced_custom_object_status(
        "example.com",
        "v1",
        "default",
        "widgets",
        "w",
        {"status": {"replicas": 2, "selector": "app=w"}},
        _content_type="application/merge-patch+json",
    )
    scale = await objects.get_namespaced_custom_object_scale(
        "example.com", "v1", "default", "widgets", "w"
    )
    assert scale["spec"]["replicas"] == 2
    assert scale["status"] == {"replicas": 2, "selector": "app=w"}
    await objects.patch_namespaced_custom_object_scale(
        "example.com",
        "v1",
        "default",
        "widgets",
        "w",
        {"spec": {"replicas": 5}},
        _content_type="application/merge-patch+json",
    )
    got = await objects.get_namespaced_custom_object("example.com", "v1", "default", "widgets", "w")
    assert got["spec"]["replicas"] == 5
    assert got["metadata"]["generation"] == 2
    assert got["status"]["replicas"] == 2


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        pytest.param({"replicas": "three"}, "spec.replicas", id="wrong-type"),
        pytest.param({"replicas": -1}, "spec.replicas", id="below-minimum"),
        pytest.param({"mode": "turbo"}, "spec.mode", id="not-in-enum"),
    ],
)
async def test_schema_violations_are_422(kube_client, spec, field):
    await client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(crd())
    with pytest.raises(ApiException) as err:
        await client.CustomObjectsApi(kube_client).create_namespaced_custom_object(
            "example.com", "v1", "default", "widgets", widget("bad", **spec)
        )
    assert err.value.status == 422
    assert field in err.value.body


async def test_missing_required_field_is_422(kube_client):
    await client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(crd())
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x"}, "spec": {}}
    with pytest.raises(ApiException) as err:
        await client.CustomObjectsApi(kube_client).create_namespaced_custom_object(
            "example.com", "v1", "default", "widgets", body
        )
    assert err.value.status == 422
    assert "spec.target" in err.value.body


async def test_cluster_scoped_crd_and_multiple_versions(kube_client, sandbox_http):
    await client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(
        crd("Cluster", versions=("v1", "v1beta1"))
    )
    objects = client.CustomObjectsApi(kube_client)
    await objects.create_cluster_custom_object("example.com", "v1", "widgets", widget("c"))
    beta = await objects.get_cluster_custom_object("example.com", "v1beta1", "widgets", "c")
    assert beta["apiVersion"] == "example.com/v1beta1"
    _, group = await sandbox_http.request("GET", "/apis/example.com")
    assert group["preferredVersion"]["version"] == "v1"


async def test_strategic_merge_on_custom_resource_is_415(kube_client, sandbox_http):
    await client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(crd())
    await client.CustomObjectsApi(kube_client).create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", widget("w")
    )
    status, body = await sandbox_http.request(
        "PATCH",
        "/apis/example.com/v1/namespaces/default/widgets/w",
        data="{}",
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert status == 415
    assert body["reason"] == "UnsupportedMediaType"


async def test_deleting_the_crd_stops_serving_and_deletes_objects(kube_client, sandbox_http):
    ext = client.ApiextensionsV1Api(kube_client)
    await ext.create_custom_resource_definition(crd())
    await client.CustomObjectsApi(kube_client).create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", widget("w")
    )
    await ext.delete_custom_resource_definition("widgets.example.com")
    await asyncio.sleep(0.05)
    status, _ = await sandbox_http.request("GET", "/apis/example.com/v1/namespaces/default/widgets")
    assert status == 404
    await ext.create_custom_resource_definition(crd())
    status, body = await sandbox_http.request(
        "GET", "/apis/example.com/v1/namespaces/default/widgets"
    )
    assert status == 200
    assert body["items"] == []


async def test_invalid_crd_is_422(kube_client):
    bad = crd()
    bad["metadata"]["name"] = "wrong.example.com"
    with pytest.raises(ApiException) as err:
        await client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(bad)
    assert err.value.status == 422


def crd_with_rule(rule: str, message: str):
    out = crd()
    schema = {**SCHEMA, "properties": dict(SCHEMA["properties"])}
    schema["properties"]["spec"] = {
        **SCHEMA["properties"]["spec"],
        "x-kubernetes-validations": [{"rule": rule, "message": message}],
    }
    for version in out["spec"]["versions"]:
        version["schema"] = {"openAPIV3Schema": schema}
    return out


@pytest.mark.parametrize(
    ("spec", "allowed"),
    [
        pytest.param({"replicas": 0, "mode": "slow"}, True, id="zero-when-slow"),
        pytest.param({"replicas": 0, "mode": "fast"}, False, id="zero-when-fast-breaks-rule"),
        pytest.param({"replicas": 3}, True, id="rule-sees-defaulted-mode"),
    ],
)
async def test_cel_validation_rules_are_enforced(kube_client, spec, allowed):
    rule = "self.replicas != 0 || self.mode == 'slow'"
    await client.ApiextensionsV1Api(kube_client).create_custom_resource_definition(
        crd_with_rule(rule, "replicas 0 needs slow mode")
    )
    objects = client.CustomObjectsApi(kube_client)
    create = objects.create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", widget("w", **spec)
    )
    if allowed:
        await create
        return
    with pytest.raises(ApiException) as err:
        await create
    assert err.value.status == 422
    status = json.loads(err.value.body)
    assert status["reason"] == "Invalid"
    assert 'spec: Invalid value: "object": replicas 0 needs slow mode' in status["message"]
    assert status["details"]["causes"][0]["field"] == "spec"


# ---- validation ratcheting (KEP-4008) ------------------------------------------------------


async def test_a_tightened_schema_ratchets_unchanged_values_but_not_required(
    kube_client, sandbox_http
):
    ext = client.ApiextensionsV1Api(kube_client)
    await ext.create_custom_resource_definition(crd())
    objects = client.CustomObjectsApi(kube_client)
    await objects.create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", widget("w1", replicas=10)
    )
    # the schema tightens: replicas at most 5 (w1 holds 10), and a new required field
    tight = copy.deepcopy(crd())  # crd() shares SCHEMA with every other test: never edit it
    spec_schema = tight["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["properties"] = {**spec_schema["properties"], "owner": {"type": "string"}}
    spec_schema["properties"]["replicas"] = {"type": "integer", "minimum": 0, "maximum": 5}
    stored = await ext.read_custom_resource_definition("widgets.example.com")
    tight["metadata"]["resourceVersion"] = stored.metadata.resource_version
    await ext.replace_custom_resource_definition("widgets.example.com", tight)

    async def patch(body, *, status=False, code=200):
        path = "/apis/example.com/v1/namespaces/default/widgets/w1" + ("/status" if status else "")
        got, answer = await sandbox_http.request(
            "PATCH",
            path,
            data=json.dumps(body),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert got == code, answer
        return answer

    # unchanged, the invalid value stays writable: a status write, and a spec write elsewhere
    await patch({"status": {"replicas": 3}}, status=True)
    await patch({"spec": {"target": "u"}})
    # changed, it is validated: to another invalid value, refused; to a valid one, accepted
    refused = await patch({"spec": {"replicas": 9}}, code=422)
    assert [c["field"] for c in refused["details"]["causes"]] == ["spec.replicas"]
    await patch({"spec": {"replicas": 4}})
    # `required` is never ratcheted: once the schema requires `owner`, every write needs it
    spec_schema["required"] = ["target", "owner"]
    stored = await ext.read_custom_resource_definition("widgets.example.com")
    tight["metadata"]["resourceVersion"] = stored.metadata.resource_version
    await ext.replace_custom_resource_definition("widgets.example.com", tight)
    refused = await patch({"status": {"replicas": 1}}, status=True, code=422)
    assert [c["field"] for c in refused["details"]["causes"]] == ["spec.owner"]
    await patch({"spec": {"owner": "me"}})
