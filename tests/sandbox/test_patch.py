"""Patch documents: unit tables for the three formats, then through the API."""

import json

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException

from sandbox.patch import PatchError, json_patch, merge_patch, strategic_merge


@pytest.mark.parametrize(
    ("target", "patch", "want"),
    [
        pytest.param({"a": 1, "b": 2}, {"a": None}, {"b": 2}, id="null-deletes"),
        pytest.param({"a": {"x": 1}}, {"a": {"y": 2}}, {"a": {"x": 1, "y": 2}}, id="objects-merge"),
        pytest.param({"l": [1, 2]}, {"l": [3]}, {"l": [3]}, id="lists-replace"),
        pytest.param({"a": 1}, {"a": {"b": None}}, {"a": {}}, id="scalar-to-object"),
    ],
)
def test_merge_patch(target, patch, want):
    assert merge_patch(target, patch) == want


CONTAINERS = {
    "spec": {
        "containers": [
            {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
            {"name": "b", "image": "b:1"},
        ]
    }
}


@pytest.mark.parametrize(
    ("patch", "want_containers"),
    [
        pytest.param(
            {"spec": {"containers": [{"name": "b", "image": "b:2"}]}},
            [
                {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
                {"name": "b", "image": "b:2"},
            ],
            id="merge-by-name",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "c", "image": "c:1"}]}},
            [*CONTAINERS["spec"]["containers"], {"name": "c", "image": "c:1"}],
            id="append-new-key",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}},
            [{"name": "b", "image": "b:1"}],
            id="delete-directive",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}]}]}},
            [
                {
                    "name": "a",
                    "image": "a:1",
                    "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}],
                },
                {"name": "b", "image": "b:1"},
            ],
            id="nested-env-merge",
        ),
        pytest.param(
            {"$setElementOrder/containers": [{"name": "a"}, {"name": "b"}], "spec": {}},
            CONTAINERS["spec"]["containers"],
            id="set-element-order-ignored",
        ),
    ],
)
def test_strategic_merge_containers(patch, want_containers):
    assert strategic_merge(CONTAINERS, patch)["spec"]["containers"] == want_containers


def test_strategic_merge_conditions_by_type_and_retain_keys():
    target = {
        "status": {
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "X", "status": "True"}]
        }
    }
    got = strategic_merge(target, {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert got["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "X", "status": "True"},
    ]
    strategy = {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}
    got = strategic_merge(strategy, {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}})
    assert got == {"strategy": {"type": "Recreate"}}


@pytest.mark.parametrize(
    ("ops", "want"),
    [
        pytest.param([{"op": "add", "path": "/b", "value": 2}], {"a": [1, 2], "b": 2}, id="add"),
        pytest.param([{"op": "add", "path": "/a/-", "value": 3}], {"a": [1, 2, 3]}, id="append"),
        pytest.param([{"op": "remove", "path": "/a/0"}], {"a": [2]}, id="remove-index"),
        pytest.param([{"op": "replace", "path": "/a", "value": "x"}], {"a": "x"}, id="replace"),
        pytest.param([{"op": "move", "from": "/a", "path": "/c"}], {"c": [1, 2]}, id="move"),
        pytest.param(
            [{"op": "copy", "from": "/a/1", "path": "/d"}], {"a": [1, 2], "d": 2}, id="copy"
        ),
        pytest.param([{"op": "test", "path": "/a/0", "value": 1}], {"a": [1, 2]}, id="test-ok"),
        pytest.param(
            [{"op": "add", "path": "/x~1y", "value": 1}], {"a": [1, 2], "x/y": 1}, id="escaped"
        ),
    ],
)
def test_json_patch(ops, want):
    assert json_patch({"a": [1, 2]}, ops) == want


@pytest.mark.parametrize(
    "ops",
    [
        pytest.param([{"op": "test", "path": "/a/0", "value": 9}], id="failed-test"),
        pytest.param([{"op": "remove", "path": "/nope"}], id="missing-path"),
        pytest.param([{"op": "bogus", "path": "/a"}], id="unknown-op"),
        pytest.param({"op": "add"}, id="not-a-list"),
    ],
)
def test_json_patch_errors(ops):
    with pytest.raises(PatchError):
        json_patch({"a": [1, 2]}, ops)


def _deployment():
    return {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "main", "image": "nginx:1"},
                        {"name": "side", "image": "envoy:1"},
                    ]
                },
            },
        },
    }


@pytest.mark.parametrize(
    ("content_type", "patch", "want_images"),
    [
        pytest.param(
            "application/strategic-merge-patch+json",
            {
                "spec": {
                    "template": {"spec": {"containers": [{"name": "side", "image": "envoy:2"}]}}
                }
            },
            ["nginx:1", "envoy:2"],
            id="strategic",
        ),
        pytest.param(
            "application/merge-patch+json",
            {
                "spec": {
                    "template": {"spec": {"containers": [{"name": "side", "image": "envoy:2"}]}}
                }
            },
            ["envoy:2"],
            id="merge-replaces-lists",
        ),
        pytest.param(
            "application/json-patch+json",
            [
                {
                    "op": "replace",
                    "path": "/spec/template/spec/containers/0/image",
                    "value": "nginx:2",
                }
            ],
            ["nginx:2", "envoy:1"],
            id="json-patch",
        ),
    ],
)
async def test_patch_formats_through_the_api(sandbox_http, content_type, patch, want_images):
    await sandbox_http.request(
        "POST", "/apis/apps/v1/namespaces/default/deployments", json=_deployment()
    )
    status, body = await sandbox_http.request(
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/web",
        data=json.dumps(patch),
        headers={"Content-Type": content_type},
    )
    assert status == 200, body
    assert [c["image"] for c in body["spec"]["template"]["spec"]["containers"]] == want_images
    assert body["metadata"]["generation"] == 2


async def test_patch_with_stale_resource_version_conflicts(kube_client):
    core = client.CoreV1Api(kube_client)
    cm = await core.create_namespaced_config_map(
        "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c"))
    )
    await core.patch_namespaced_config_map("c", "default", {"data": {"a": "1"}})
    stale = {"metadata": {"resourceVersion": cm.metadata.resource_version}, "data": {"a": "2"}}
    with pytest.raises(ApiException) as err:
        await core.patch_namespaced_config_map("c", "default", stale)
    assert err.value.status == 409


async def test_failed_json_patch_test_is_422_and_unknown_patch_type_415(sandbox_http):
    await sandbox_http.request(
        "POST", "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "c"}}
    )
    status, body = await sandbox_http.request(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/c",
        data=json.dumps([{"op": "test", "path": "/data", "value": 1}]),
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert status == 422
    assert body["kind"] == "Status"
    status, body = await sandbox_http.request(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/c",
        data="{}",
        headers={"Content-Type": "text/plain"},
    )
    assert status == 415
    assert body["reason"] == "UnsupportedMediaType"


async def test_apply_patch_creates_then_merges_and_needs_a_field_manager(sandbox_http):
    path = "/api/v1/namespaces/default/configmaps/applied"
    headers = {"Content-Type": "application/apply-patch+yaml"}
    doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: '1'\n"
    status, body = await sandbox_http.request("PATCH", path, data=doc, headers=headers)
    assert status == 422
    assert "fieldManager" in body["message"]
    status, body = await sandbox_http.request(
        "PATCH", path + "?fieldManager=t", data=doc, headers=headers
    )
    assert status == 201
    assert body["data"] == {"a": "1"}
    doc2 = doc.replace("a: '1'", "b: '2'")
    status, body = await sandbox_http.request(
        "PATCH", path + "?fieldManager=t", data=doc2, headers=headers
    )
    assert status == 200
    assert body["data"] == {"a": "1", "b": "2"}  # no field ownership: `a` stays (documented)
