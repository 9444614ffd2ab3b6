"""Discovery documents, and kubernetes-asyncio's dynamic client built on them."""

import pytest
from kubernetes_asyncio.dynamic import DynamicClient


@pytest.mark.parametrize("slash", ["", "/"], ids=["bare", "trailing-slash"])
@pytest.mark.parametrize(
    ("path", "kind"),
    [
        pytest.param("/api", "APIVersions", id="api"),
        pytest.param("/api/v1", "APIResourceList", id="core-v1"),
        pytest.param("/apis", "APIGroupList", id="apis"),
        pytest.param("/apis/apps", "APIGroup", id="group"),
        pytest.param("/apis/apps/v1", "APIResourceList", id="group-version"),
    ],
)
async def test_discovery_documents(sandbox_http, path, kind, slash):
    status, body = await sandbox_http.request("GET", path + slash)
    assert status == 200
    assert body["kind"] == kind


async def test_version(sandbox_http):
    status, body = await sandbox_http.request("GET", "/version")
    assert status == 200
    assert body["major"] == "1"
    assert body["gitVersion"].startswith("v1.32")


async def test_apps_resources_have_scale_and_status_subresources(sandbox_http):
    _, body = await sandbox_http.request("GET", "/apis/apps/v1")
    by_name = {r["name"]: r for r in body["resources"]}
    assert by_name["deployments"]["shortNames"] == ["deploy"]
    assert by_name["deployments"]["namespaced"] is True
    assert set(by_name["deployments"]["verbs"]) >= {
        "create",
        "get",
        "list",
        "watch",
        "patch",
        "update",
        "delete",
    }
    scale = by_name["deployments/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    assert by_name["statefulsets/scale"]["verbs"] == ["get", "patch", "update"]
    assert "deployments/status" in by_name


async def test_core_resources_scope(sandbox_http):
    _, body = await sandbox_http.request("GET", "/api/v1")
    scope = {r["name"]: r["namespaced"] for r in body["resources"] if "/" not in r["name"]}
    assert scope["namespaces"] is False
    assert scope["pods"] is True
    assert scope["configmaps"] is True


async def test_aggregated_discovery_request_gets_legacy_json(sandbox_http):
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    status, body = await sandbox_http.request("GET", "/apis", headers={"Accept": accept})
    assert status == 200
    assert body["kind"] == "APIGroupList"


async def test_unknown_group_version_is_404(sandbox_http):
    status, body = await sandbox_http.request("GET", "/apis/nope.example.com/v1")
    assert status == 404
    assert body["kind"] == "Status"


async def test_dynamic_client_crud(kube_client):
    dyn = await DynamicClient(kube_client)
    cms = await dyn.resources.get(api_version="v1", kind="ConfigMap")
    await cms.create(
        body={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "dyn"},
            "data": {"a": "1"},
        },
        namespace="default",
    )
    got = await cms.get(name="dyn", namespace="default")
    assert got.data.a == "1"
    deployments = await dyn.resources.get(api_version="apps/v1", kind="Deployment")
    assert deployments.namespaced is True
    listed = await cms.get(namespace="default", label_selector="")
    assert "dyn" in [i.metadata.name for i in listed.items]
