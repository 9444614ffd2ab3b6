"""The sandbox's ReplicaSet controller honours pod-deletion-cost through the real API path
(a client patches the annotation, then scales), and its API server refuses an invalid cost
with upstream's 422, as kube-apiserver does."""

from __future__ import annotations

import copy
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


async def test_an_invalid_cost_in_a_pod_template_is_refused(kube_client):
    apps = client.AppsV1Api(kube_client)
    body = workload("Deployment", "tpl", 1)
    body["spec"]["template"]["metadata"]["annotations"] = {ANNOTATION: "008"}
    with pytest.raises(ApiException) as e:
        await apps.create_namespaced_deployment("default", body)
    assert e.value.status == 422
    assert json.loads(e.value.body)["message"] == (
        f'Deployment.apps "tpl" is invalid: spec.template.annotations[{ANNOTATION}]: '
        'Invalid value: "008": must be a 32bit integer'
    )


async def test_a_pod_already_carrying_an_invalid_cost_may_still_be_updated(sandbox, kube_client):
    """Ratcheting: a value stored before the check (here put straight into the store) does not
    block unrelated updates, as upstream lets an invalid stored cost through."""
    core = client.CoreV1Api(kube_client)
    body = {
        "metadata": {"name": "old"},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]},
    }
    await core.create_namespaced_pod("default", body)
    stored = copy.deepcopy(sandbox.store.get(("", "pods"), "default", "old"))
    stored["metadata"]["annotations"] = {ANNOTATION: "bad"}
    sandbox.store.put(("", "pods"), stored)
    patch = {"metadata": {"labels": {"a": "b"}}}
    patched = await core.patch_namespaced_pod("old", "default", patch)
    assert patched.metadata.labels == {"a": "b"}
    assert patched.metadata.annotations == {ANNOTATION: "bad"}
    with pytest.raises(ApiException) as e:  # a new pod with it is still refused
        await core.create_namespaced_pod(
            "default", {**body, "metadata": {"name": "new", "annotations": {ANNOTATION: "bad"}}}
        )
    assert e.value.status == 422
