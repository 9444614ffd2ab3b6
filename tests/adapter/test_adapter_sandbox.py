"""Wildcard look-ups through the real object cache (`adapter.kube.KubeObjects`) against the
sandbox API server, values from a real Prometheus."""

from __future__ import annotations

import asyncio

import pytest
from kubernetes_asyncio import client as kclient

from adapter.kube import KubeClient, KubeObjects
from adapter.server.app import build_app
from tests.adapter.stack import make_stack, series
from tests.support.prometheus import remote_write
from tests.support.sandbox import api_client_for

pytestmark = [pytest.mark.prometheus, pytest.mark.e2e]
CM = "/apis/custom.metrics.k8s.io/v1beta1"


def pod(name: str, labels: dict[str, str]) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {"containers": [{"name": "app", "image": "example/app:1"}]},
    }


async def test_wildcard_names_come_from_the_cluster(sandbox, prometheus, aiohttp_client):
    api = await api_client_for(sandbox)
    core = kclient.CoreV1Api(api)
    try:
        for name, labels in [
            ("web-1", {"app": "web"}),
            ("web-2", {"app": "web"}),
            ("db-1", {"app": "db"}),
        ]:
            await core.create_namespaced_pod("default", pod(name, labels))
    finally:
        await api.close()
    await remote_write(
        prometheus.url,
        [
            series("gauge_value", {"namespace": "default", "pod": p}, [v])
            for p, v in [("web-1", 1), ("web-2", 2), ("db-1", 3), ("gone-1", 4)]
        ],
    )
    kube = KubeClient(str(sandbox.kubeconfig))
    objects = KubeObjects(kube)
    await objects.start()
    stack = await make_stack(prometheus.url, lister=objects)
    try:
        await stack.discover()
        http = await aiohttp_client(build_app(stack.provider))

        async def names(selector: str) -> dict[str, str]:
            resp = await http.get(
                f"{CM}/namespaces/default/pods/*/gauge_value?labelSelector={selector}"
            )
            assert resp.status == 200, await resp.text()
            body = await resp.json()
            return {i["describedObject"]["name"]: i["value"] for i in body["items"]}

        assert await names("app%3Dweb") == {"web-1": "1", "web-2": "2"}
        assert await names("app+in+(web,db)") == {"web-1": "1", "web-2": "2", "db-1": "3"}
        assert await names("app%3Dnone") == {}
        # gone-1 has a series but no pod: never listed
        assert "gone-1" not in await names("")

        # a new pod shows up through the watch, no restart
        api = await api_client_for(sandbox)
        try:
            await kclient.CoreV1Api(api).create_namespaced_pod(
                "default", pod("gone-1", {"app": "web"})
            )
        finally:
            await api.close()
        for _ in range(50):
            if "gone-1" in await names("app%3Dweb"):
                break
            await asyncio.sleep(0.1)
        assert await names("app%3Dweb") == {"web-1": "1", "web-2": "2", "gone-1": "4"}
    finally:
        await stack.close()
        await objects.close()
        await kube.close()
