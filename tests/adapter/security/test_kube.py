"""adapter.kube against the sandbox API server: object cache, discovery, reviews, ConfigMap."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from adapter.errors import BadRequest, KubeUnavailable
from adapter.kube import KubeClient, KubeObjects
from adapter.kubeauth import KubeAuth
from adapter.kubewatch import _watch, list_and_watch
from adapter.rules.resources import STATIC_RESOLVER
from common.selectors import parse_selector
from sandbox import manifests
from tests.adapter.security.sandbox_setup import (
    ADAPTER_TOKEN,
    EVE_TOKEN,
    HPA_TOKEN,
    POLICY,
    kubeconfig_for,
)
from tests.support.sandbox import SandboxHttp

PODS = STATIC_RESOLVER.resolve("pods")
NAMESPACES = STATIC_RESOLVER.resolve("namespaces")


@pytest.fixture
async def adapter_client(sandbox_factory, tmp_path):
    sb = await sandbox_factory(policy=POLICY, simulate_kubelet=False, bookmark_interval=0.2)
    client = KubeClient(kubeconfig_for(sb, ADAPTER_TOKEN, tmp_path / "adapter.kubeconfig"))
    yield sb, client
    await client.close()


async def create_pod(http: SandboxHttp, ns: str, name: str, labels: dict[str, str]) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    status, got = await http.request("POST", f"/api/v1/namespaces/{ns}/pods", json=body)
    assert status == 201, got


async def eventually(check, timeout=5.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            result = await check()
        except AssertionError:
            if asyncio.get_running_loop().time() > deadline:
                raise
        else:
            return result
        await asyncio.sleep(0.05)


async def test_names_by_selector_follow_the_watch_and_answer_from_memory(adapter_client):
    sb, client = adapter_client
    http = SandboxHttp(sb)
    objects = KubeObjects(client)
    try:
        await create_pod(http, "default", "web-1", {"app": "web", "tier": "a"})
        await create_pod(http, "default", "web-2", {"app": "web", "tier": "b"})
        await create_pod(http, "kube-system", "web-3", {"app": "web"})
        web = parse_selector("app=web")
        assert await objects.names(PODS, namespace="default", selector=web) == ["web-1", "web-2"]
        assert await objects.names(PODS, namespace=None, selector=web) == [
            "web-1",
            "web-2",
            "web-3",
        ]
        tier_a = parse_selector("tier in (a),app")
        assert await objects.names(PODS, namespace="default", selector=tier_a) == ["web-1"]

        await create_pod(http, "default", "web-4", {"app": "web"})
        status, _ = await http.request("DELETE", "/api/v1/namespaces/default/pods/web-1")
        assert status == 200
        patch = {"metadata": {"labels": {"app": "db"}}}
        status, _ = await http.request(
            "PATCH",
            "/api/v1/namespaces/default/pods/web-2",
            json=patch,
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert status == 200

        async def updated():
            got = await objects.names(PODS, namespace="default", selector=web)
            assert got == ["web-4"]

        await eventually(updated)
        # an event that keeps the labels (an annotation) keeps the remembered answer; the
        # barrier pod, created after it on the same watch, shows the event has arrived
        first = await objects.names(PODS, namespace="default", selector=web)
        status, _ = await http.request(
            "PATCH",
            "/api/v1/namespaces/default/pods/web-4",
            json={"metadata": {"annotations": {"note": "x"}}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert status == 200
        await create_pod(http, "kube-system", "barrier", {"app": "web"})

        async def barrier_seen():
            got = await objects.names(PODS, namespace=None, selector=web)
            assert got == ["barrier", "web-3", "web-4"]

        await eventually(barrier_seen)
        assert await objects.names(PODS, namespace="default", selector=web) is first
        assert objects.cached_objects() == 4  # only pods: the one resource asked for
        await sb.stop()  # the API is gone: answers still come from memory
        assert await objects.names(PODS, namespace="default", selector=web) == ["web-4"]
    finally:
        await objects.close()
        await http.close()


async def test_never_synced_cache_with_api_down_is_kube_unavailable(tmp_path):
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
    )
    client = KubeClient(str(kubeconfig))
    objects = KubeObjects(client, sync_wait=0.5)
    try:
        with pytest.raises(KubeUnavailable):
            await objects.names(PODS, namespace="default", selector=parse_selector(""))
    finally:
        await objects.close()
        await client.close()


async def test_too_many_objects_for_one_request_is_a_400(adapter_client):
    sb, client = adapter_client
    http = SandboxHttp(sb)
    objects = KubeObjects(client, max_objects=2)
    try:
        for i in range(3):
            await create_pod(http, "default", f"p{i}", {"app": "x"})
        with pytest.raises(BadRequest, match="narrow"):
            await objects.names(PODS, namespace="default", selector=parse_selector("app=x"))
    finally:
        await objects.close()
        await http.close()


async def test_cluster_scoped_resources_ignore_the_namespace(adapter_client):
    sb, client = adapter_client
    http = SandboxHttp(sb)
    objects = KubeObjects(client)
    try:
        status, _ = await http.request(
            "POST", "/api/v1/namespaces", json={"metadata": {"name": "n1", "labels": {"zone": "a"}}}
        )
        assert status == 201
        got = await objects.names(
            NAMESPACES, namespace="default", selector=parse_selector("zone=a")
        )
        assert got == ["n1"]
    finally:
        await objects.close()
        await http.close()


async def test_an_expired_watch_version_is_gone_and_list_and_watch_relists(
    sandbox_factory, tmp_path
):
    sb = await sandbox_factory(policy=POLICY, simulate_kubelet=False, history=3)
    client = KubeClient(kubeconfig_for(sb, ADAPTER_TOKEN, tmp_path / "kc"))
    http = SandboxHttp(sb)
    try:
        for i in range(6):
            await create_pod(http, "default", f"p{i}", {})
        from adapter.kubewatch import Gone as _Gone

        with pytest.raises(_Gone):
            async for _ in _watch(client, "/api/v1/pods", [], "1", "application/json"):
                pass
        stream = list_and_watch(client, "/api/v1/pods", query=[])
        kind, body = await anext(stream)
        assert kind == "SYNC"
        assert len(body["items"]) == 6
        await stream.aclose()
    finally:
        await http.close()
        await client.close()


async def test_discovery_resolves_a_crd_installed_later(adapter_client):
    sb, client = adapter_client
    http = SandboxHttp(sb)
    objects = KubeObjects(client)
    try:
        await objects.start()
        pods = objects.resolve("pod")
        assert pods is not None
        assert pods.namespaced
        assert objects.resolve("widgets.example.com") is None
        crd = manifests.crd("example.com", "Widget")
        status, got = await http.request(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd
        )
        assert status == 201, got
        # a miss schedules one refresh (at most every 10 s) and answers from the fallback now
        objects._last_discovery -= 60  # as if the last refresh were a minute ago
        assert objects.resolve("widget", "example.com") is None
        assert objects._refreshing is not None
        await objects._refreshing
        widget = objects.resolve("widget", "example.com")
        assert widget is not None
        assert widget.api_version == "example.com/v1"
        assert widget.kind == "Widget"
    finally:
        await objects.close()
        await http.close()


async def test_token_and_access_reviews_follow_the_sandbox_policy(adapter_client):
    _, client = adapter_client
    auth = KubeAuth(authentication=client, authorization=client)
    good = await auth.review_token(HPA_TOKEN)
    assert good.authenticated
    assert good.user.name == "hpa"
    assert "system:serviceaccounts" in good.user.groups
    bad = await auth.review_token("nope")
    assert not bad.authenticated
    assert bad.error
    metric = {
        "resourceAttributes": {
            "verb": "get",
            "group": "custom.metrics.k8s.io",
            "resource": "pods",
            "subresource": "m",
            "namespace": "default",
            "name": "*",
        },
    }
    assert (await auth.review_access({"user": "hpa", "groups": [], **metric})).allowed
    assert not (await auth.review_access({"user": "eve", "groups": [], **metric})).allowed
    masters = {"user": "root", "groups": ["system:masters"], **metric}
    assert (await auth.review_access(masters)).allowed
    path = {"nonResourceAttributes": {"verb": "get", "path": "/apis"}}
    assert (await auth.review_access({"user": "hpa", **path})).allowed
    assert EVE_TOKEN


async def test_reviews_without_rbac_are_kube_unavailable(sandbox_factory, tmp_path):
    sb = await sandbox_factory(policy=POLICY, simulate_kubelet=False)
    client = KubeClient(kubeconfig_for(sb, EVE_TOKEN, tmp_path / "kc"))
    try:
        with pytest.raises(KubeUnavailable):
            await KubeAuth(authentication=client, authorization=client).review_token(HPA_TOKEN)
    finally:
        await client.close()


async def test_following_the_authentication_configmap(adapter_client):
    sb, client = adapter_client
    auth = KubeAuth(authentication=client, authorization=client)
    stream = auth.watch_configmap("kube-system", "extension-apiserver-authentication")
    try:
        first = await asyncio.wait_for(anext(stream), 5)
        assert first["requestheader-client-ca-file"] == sb.requestheader_ca_file.read_text()
        await sb.rotate_requestheader_ca()
        second = await asyncio.wait_for(anext(stream), 5)
        assert second["requestheader-client-ca-file"] != first["requestheader-client-ca-file"]
        assert second["requestheader-client-ca-file"] == sb.requestheader_ca_file.read_text()
    finally:
        with contextlib.suppress(Exception):
            await stream.aclose()
