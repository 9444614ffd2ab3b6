"""The sandbox's ReplicaSet controller honours pod-deletion-cost through the real API path
(a client patches the annotation, then scales), and its API server refuses an invalid cost
with upstream's 422, as kube-apiserver does."""

from __future__ import annotations

import json

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException

from sandbox.replicaset_ranking import ANNOTATION
from tests.sandbox.test_workloads import eventually, ready, workload


async def five_ready(core: client.CoreV1Api) -> list[str]:
    async def check() -> list[str]:
        pods = (await core.list_namespaced_pod("default", label_selector="app=web")).items
        assert len(pods) == 5
        assert all(ready(p) for p in pods)
        return sorted(p.metadata.name for p in pods)

    return await eventually(check)


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet"])
async def test_scale_down_deletes_the_lowest_cost_pods(kube_client, kind):
    apps, core = client.AppsV1Api(kube_client), client.CoreV1Api(kube_client)
    create = getattr(
        apps, f"create_namespaced_{'deployment' if kind == 'Deployment' else 'replica_set'}"
    )
    await create("default", workload(kind, "web", 5))
    names = await five_ready(core)
    costs = dict(zip(names, ["100", "-3", "7", "0", "50"], strict=True))
    for name, cost in costs.items():
        await core.patch_namespaced_pod(
            name, "default", {"metadata": {"annotations": {ANNOTATION: cost}}}
        )
    scale = (
        "patch_namespaced_deployment_scale"
        if kind == "Deployment"
        else "patch_namespaced_replica_set_scale"
    )
    await getattr(apps, scale)("web", "default", {"spec": {"replicas": 3}})

    async def three_left() -> set[str]:
        pods = (await core.list_namespaced_pod("default", label_selector="app=web")).items
        assert len(pods) == 3
        return {p.metadata.name for p in pods}

    left = await eventually(three_left)
    assert left == {n for n, c in costs.items() if c in ("100", "7", "50")}


async def test_an_invalid_cost_is_refused_with_a_422(kube_client):
    core = client.CoreV1Api(kube_client)
    body = {
        "metadata": {"name": "p", "annotations": {ANNOTATION: "+5"}},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]},
    }
    with pytest.raises(ApiException) as e:
        await core.create_namespaced_pod("default", body)
    assert e.value.status == 422
    status = json.loads(e.value.body)
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        f'Pod "p" is invalid: metadata.annotations[{ANNOTATION}]: '
        'Invalid value: "+5": must be a 32bit integer'
    )
