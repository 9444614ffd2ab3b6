"""The scale subresource and the workload simulation (pods, readiness, status)."""

import asyncio

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException


def workload(kind, name, replicas, *, cpu="250m"):
    labels = {"app": name}
    spec = {
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels, "annotations": {"note": "from-template"}},
            "spec": {
                "containers": [
                    {"name": "main", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}
                ]
            },
        },
    }
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


async def eventually(check, timeout=5.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            result = await check()
            if result:
                return result
        except AssertionError:
            if asyncio.get_running_loop().time() > deadline:
                raise
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


def ready(pod):
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


CREATE = {
    "Deployment": "create_namespaced_deployment",
    "StatefulSet": "create_namespaced_stateful_set",
    "ReplicaSet": "create_namespaced_replica_set",
}
SCALE = {
    "Deployment": (
        "read_namespaced_deployment_scale",
        "replace_namespaced_deployment_scale",
        "patch_namespaced_deployment_scale",
    ),
    "StatefulSet": (
        "read_namespaced_stateful_set_scale",
        "replace_namespaced_stateful_set_scale",
        "patch_namespaced_stateful_set_scale",
    ),
    "ReplicaSet": (
        "read_namespaced_replica_set_scale",
        "replace_namespaced_replica_set_scale",
        "patch_namespaced_replica_set_scale",
    ),
}


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "ReplicaSet"])
async def test_scale_subresource_get_put_patch(kube_client, kind):
    apps = client.AppsV1Api(kube_client)
    await getattr(apps, CREATE[kind])("default", workload(kind, "w", 2))
    read, replace, patch = (getattr(apps, m) for m in SCALE[kind])
    scale = await read("w", "default")
    assert scale.kind == "Scale"
    assert scale.api_version == "autoscaling/v1"
    assert scale.spec.replicas == 2
    assert scale.status.selector == "app=w"
    scale.spec.replicas = 3
    assert (await replace("w", "default", scale)).spec.replicas == 3
    assert (await patch("w", "default", {"spec": {"replicas": 1}})).spec.replicas == 1
    obj = await apps.api_client.call_api(
        f"/apis/apps/v1/namespaces/default/{kind.lower()}s/w",
        "GET",
        response_types_map={200: "object"},
        auth_settings=["BearerToken"],
        _return_http_data_only=True,
    )
    assert obj["spec"]["replicas"] == 1
    assert obj["metadata"]["generation"] == 3


async def test_scale_put_with_stale_resource_version_conflicts(kube_client):
    apps = client.AppsV1Api(kube_client)
    await apps.create_namespaced_deployment("default", workload("Deployment", "web", 0))
    scale = await apps.read_namespaced_deployment_scale("web", "default")
    await apps.patch_namespaced_deployment("web", "default", {"metadata": {"labels": {"x": "y"}}})
    scale.spec.replicas = 4
    with pytest.raises(ApiException) as err:
        await apps.replace_namespaced_deployment_scale("web", "default", scale)
    assert err.value.status == 409


async def test_negative_scale_is_422(kube_client):
    apps = client.AppsV1Api(kube_client)
    await apps.create_namespaced_deployment("default", workload("Deployment", "web", 0))
    with pytest.raises(ApiException) as err:
        await apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": -1}})
    assert err.value.status == 422


async def test_deployment_pods_follow_replicas_and_become_ready(kube_client):
    apps, core = client.AppsV1Api(kube_client), client.CoreV1Api(kube_client)
    await apps.create_namespaced_deployment("default", workload("Deployment", "web", 3))

    async def three_ready():
        pods = (await core.list_namespaced_pod("default", label_selector="app=web")).items
        assert len(pods) == 3
        assert all(ready(p) for p in pods)
        return pods

    pods = await eventually(three_ready)
    pod = pods[0]
    assert pod.metadata.name.startswith("web-")
    assert pod.metadata.owner_references[0].kind == "ReplicaSet"
    assert pod.metadata.owner_references[0].controller
    assert pod.metadata.annotations == {"note": "from-template"}
    assert pod.spec.containers[0].resources.requests == {"cpu": "250m"}
    assert pod.status.phase == "Running"
    assert pod.status.start_time is not None
    cond = next(c for c in pod.status.conditions if c.type == "Ready")
    assert cond.last_transition_time is not None
    assert {c.type for c in pod.status.conditions} >= {"Ready", "ContainersReady", "PodScheduled"}

    async def status_current():
        d = await apps.read_namespaced_deployment("web", "default")
        assert (d.status.replicas, d.status.ready_replicas, d.status.available_replicas) == (
            3,
            3,
            3,
        )
        assert d.status.observed_generation == d.metadata.generation
        return d

    await eventually(status_current)
    await apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 1}})

    async def one_left():
        pods = (await core.list_namespaced_pod("default", label_selector="app=web")).items
        d = await apps.read_namespaced_deployment("web", "default")
        assert len(pods) == 1
        assert d.status.replicas == 1
        return True

    await eventually(one_left)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("web", id="short-name"),
        pytest.param("w" * 55, id="generate-name-cut-at-58"),
    ],
)
async def test_deployment_pods_are_named_as_a_cluster_names_them(kube_client, name):
    """generateName `<replicaset>-`, cut to 58 characters, plus 5 of rand.String's alphabet;
    the ReplicaSet is `<deployment>-<pod-template-hash>`, the hash of ComputeHash's shape."""
    import re

    apps, core = client.AppsV1Api(kube_client), client.CoreV1Api(kube_client)
    await apps.create_namespaced_deployment("default", workload("Deployment", name, 2))

    async def two():
        pods = (await core.list_namespaced_pod("default", label_selector=f"app={name}")).items
        assert len(pods) == 2
        return pods

    for pod in await eventually(two):
        h = pod.metadata.labels["pod-template-hash"]
        assert re.fullmatch("[bcdf4-9]{1,10}", h), h  # SafeEncodeString of a uint32
        (owner,) = pod.metadata.owner_references
        assert (owner.kind, owner.name, owner.controller) == ("ReplicaSet", f"{name}-{h}", True)
        assert pod.metadata.generate_name == f"{name}-{h}-"
        base = pod.metadata.generate_name[:58]
        assert re.fullmatch(re.escape(base) + "[bcdfghjklmnpqrstvwxz2456789]{5}", pod.metadata.name)


async def test_pods_become_ready_only_after_the_delay(sandbox_factory):
    from tests.support.sandbox import api_client_for

    sb = await sandbox_factory(pod_ready_delay=0.6)
    async with await api_client_for(sb) as api:
        apps, core = client.AppsV1Api(api), client.CoreV1Api(api)
        await apps.create_namespaced_deployment("default", workload("Deployment", "slow", 1))

        async def running():
            pods = (await core.list_namespaced_pod("default")).items
            assert pods
            assert pods[0].status.phase == "Running"
            return pods[0]

        pod = await eventually(running)
        assert not ready(pod)
        await asyncio.sleep(0.8)
        assert ready(await core.read_namespaced_pod(pod.metadata.name, "default"))


async def test_statefulset_pods_have_ordinal_names_and_scale_down_from_the_top(kube_client):
    apps, core = client.AppsV1Api(kube_client), client.CoreV1Api(kube_client)
    await apps.create_namespaced_stateful_set("default", workload("StatefulSet", "db", 3))

    async def names(n):
        pods = (await core.list_namespaced_pod("default", label_selector="app=db")).items
        got = sorted(p.metadata.name for p in pods)
        assert len(got) == n
        return got

    assert await eventually(lambda: names(3)) == ["db-0", "db-1", "db-2"]
    pod = await core.read_namespaced_pod("db-0", "default")
    assert pod.metadata.generate_name is None  # named by the controller itself
    await apps.patch_namespaced_stateful_set_scale("db", "default", {"spec": {"replicas": 1}})
    assert await eventually(lambda: names(1)) == ["db-0"]


async def test_deleting_a_workload_deletes_its_pods(kube_client):
    apps, core = client.AppsV1Api(kube_client), client.CoreV1Api(kube_client)
    await apps.create_namespaced_replica_set("default", workload("ReplicaSet", "rs", 2))
    await eventually(lambda: _count(core, "app=rs", 2))
    await apps.delete_namespaced_replica_set("rs", "default")
    await eventually(lambda: _count(core, "app=rs", 0))


async def test_deleted_pod_is_replaced(kube_client):
    apps, core = client.AppsV1Api(kube_client), client.CoreV1Api(kube_client)
    await apps.create_namespaced_deployment("default", workload("Deployment", "web", 2))
    await eventually(lambda: _count(core, "app=web", 2))
    victim = (
        (await core.list_namespaced_pod("default", label_selector="app=web")).items[0].metadata.name
    )
    await core.delete_namespaced_pod(victim, "default")

    async def replaced():
        names = {
            p.metadata.name
            for p in (await core.list_namespaced_pod("default", label_selector="app=web")).items
        }
        assert len(names) == 2
        assert victim not in names
        return True

    await eventually(replaced)


async def _count(core, selector, n):
    assert len((await core.list_namespaced_pod("default", label_selector=selector)).items) == n
    return True
