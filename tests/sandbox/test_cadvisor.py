"""The simulated cAdvisor: usage series in a real Prometheus, driven by load annotations."""

from __future__ import annotations

import asyncio
import time

import pytest

from sandbox import cadvisor
from tests.sandbox.test_nodes import running_pods
from tests.support.sandbox import SandboxHttp

pytestmark = pytest.mark.prometheus


def deployment(name, replicas, *, annotations=None, containers=("app",)):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": c, "image": f"img/{c}"} for c in containers]},
            },
        },
    }


def values(prometheus, promql):
    return {
        tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in prometheus.query(promql)
    }


async def eventually(check, timeout=15.0):
    deadline = time.monotonic() + timeout
    while True:
        last = check()
        if last or time.monotonic() > deadline:
            return last
        await asyncio.sleep(0.2)


@pytest.fixture
async def cluster(sandbox_factory, prometheus):
    sb = await sandbox_factory(nodes=2, prometheus_url=prometheus.url, cadvisor_interval=0.25)
    http = SandboxHttp(sb)
    yield sb, http
    await http.close()


async def test_container_series_carry_kubelet_labels_and_load(cluster, prometheus):
    _, http = cluster
    body = deployment(
        "web",
        2,
        annotations={cadvisor.CPU: "500m", cadvisor.MEMORY: "128Mi"},
        containers=("app", "proxy"),
    )
    await http.request("POST", "/apis/apps/v1/namespaces/default/deployments", json=body)
    pods = await running_pods(http, 2)
    found = await eventually(
        lambda: (
            len(values(prometheus, 'container_memory_working_set_bytes{pod!="",container!=""}'))
            == 4
        )
    )
    assert found
    memory = prometheus.query('container_memory_working_set_bytes{container="proxy"}')
    labels = memory[0]["metric"]
    pod = next(p for p in pods if p["metadata"]["name"] == labels["pod"])
    assert labels["namespace"] == "default"
    assert labels["node"] == pod["spec"]["nodeName"]
    assert labels["instance"] == f"{pod['status']['hostIP']}:10250"
    assert (labels["job"], labels["image"]) == ("kubelet", "img/proxy")
    assert float(memory[0]["value"][1]) == 64 * 2**20  # the pod's 128Mi split over 2 containers
    await asyncio.sleep(2.5)  # a few writes: rate() needs two samples in its range
    cpu = values(prometheus, 'rate(container_cpu_usage_seconds_total{container="app"}[2s])')
    assert len(cpu) == 2
    assert all(v == pytest.approx(0.25, rel=0.05) for v in cpu.values())


async def test_cpu_total_is_shared_by_running_pods_and_nodes_sum_them(cluster, prometheus):
    _, http = cluster
    body = deployment("api", 4, annotations={cadvisor.CPU_TOTAL: "2"})
    await http.request("POST", "/apis/apps/v1/namespaces/default/deployments", json=body)
    await running_pods(http, 4)
    await asyncio.sleep(2.5)
    per_pod = values(prometheus, 'rate(container_cpu_usage_seconds_total{container="app"}[2s])')
    assert len(per_pod) == 4
    assert all(v == pytest.approx(0.5, rel=0.05) for v in per_pod.values())
    nodes = prometheus.query('rate(container_cpu_usage_seconds_total{id="/"}[2s])')
    by_node = {r["metric"]["node"]: float(r["value"][1]) for r in nodes}
    # two pods per node at 0.5 cores, plus the system daemons' share
    assert by_node == pytest.approx(
        {"sandbox-node-1": 1.0 + cadvisor.SYSTEM_CPU, "sandbox-node-2": 1.0 + cadvisor.SYSTEM_CPU},
        rel=0.05,
    )


async def test_a_deleted_pod_goes_stale_at_once(cluster, prometheus):
    _, http = cluster
    await http.request(
        "POST", "/apis/apps/v1/namespaces/default/deployments", json=deployment("gone", 1)
    )
    pods = await running_pods(http, 1)
    name = pods[0]["metadata"]["name"]
    query = f'container_memory_working_set_bytes{{pod="{name}",container="app"}}'
    assert await eventually(lambda: prometheus.query(query))
    await http.request("DELETE", "/apis/apps/v1/namespaces/default/deployments/gone")
    assert await eventually(lambda: not prometheus.query(query))


async def test_prometheus_down_then_back_keeps_writing(cluster, prometheus):
    sb, http = cluster
    await http.request(
        "POST", "/apis/apps/v1/namespaces/default/deployments", json=deployment("w", 1)
    )
    await running_pods(http, 1)
    prometheus.stop()
    await asyncio.sleep(0.6)  # a couple of failed writes
    prometheus.start()
    started = time.time()
    fresh = await eventually(
        lambda: any(
            float(r["value"][0]) > started
            for r in prometheus.query('timestamp(container_memory_working_set_bytes{id="/"})')
        )
    )
    assert fresh, "the simulated cAdvisor wrote nothing after Prometheus came back"
    assert sb.cadvisor is not None
