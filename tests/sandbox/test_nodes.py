"""Node objects and pod placement, seen through the API and the real kubectl."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from tests.sandbox.test_kubectl import Kubectl
from tests.support.sandbox import SandboxHttp

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "x"}]},
        },
    },
}


async def running_pods(http: SandboxHttp, n: int) -> list[dict]:
    for _ in range(100):
        _, body = await http.request("GET", "/api/v1/namespaces/default/pods")
        pods = [p for p in body["items"] if p["status"].get("phase") == "Running"]
        if len(pods) == n:
            return pods
        await asyncio.sleep(0.05)
    raise AssertionError(f"never {n} running pods: {body}")


async def test_nodes_are_cluster_scoped_ready_and_sized(sandbox_factory):
    sb = await sandbox_factory(nodes=2)
    http = SandboxHttp(sb)
    try:
        code, body = await http.request("GET", "/api/v1/nodes")
        assert code == 200
        assert [n["metadata"]["name"] for n in body["items"]] == [
            "sandbox-node-1",
            "sandbox-node-2",
        ]
        node = body["items"][0]
        assert "namespace" not in node["metadata"]
        assert node["status"]["capacity"] == {"cpu": "4", "memory": "16Gi", "pods": "110"}
        assert node["status"]["allocatable"] == {"cpu": "3900m", "memory": "15872Mi", "pods": "110"}
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready[0]["status"] == "True"
        code, _ = await http.request("GET", "/api/v1/namespaces/default/nodes")
        assert code == 404
    finally:
        await http.close()


async def test_pods_are_spread_over_ready_nodes(sandbox_factory):
    sb = await sandbox_factory(nodes=2)
    http = SandboxHttp(sb)
    try:
        await http.request("POST", "/apis/apps/v1/namespaces/default/deployments", json=DEPLOYMENT)
        pods = await running_pods(http, 3)
        placed = sorted(p["spec"]["nodeName"] for p in pods)
        assert placed == ["sandbox-node-1", "sandbox-node-1", "sandbox-node-2"]
        ips = {p["spec"]["nodeName"]: p["status"]["hostIP"] for p in pods}
        assert ips == {"sandbox-node-1": "10.0.0.1", "sandbox-node-2": "10.0.0.2"}
        code, body = await http.request(
            "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dsandbox-node-2"
        )
        assert (code, len(body["items"])) == (200, 1)
    finally:
        await http.close()


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_get_and_describe_nodes(sandbox_factory, tmp_path):
    sb = await sandbox_factory(nodes=2)
    kubectl = Kubectl(sb, tmp_path)
    _, out, _ = await kubectl("get", "nodes")
    lines = out.split("\n")
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE"]
    assert lines[1].split()[:3] == ["sandbox-node-1", "Ready", "<none>"]
    _, out, _ = await kubectl("get", "node", "sandbox-node-2", "-o", "json")
    assert json.loads(out)["status"]["nodeInfo"]["kubeletVersion"] == "v1.32.0"
    _, out, _ = await kubectl("describe", "node", "sandbox-node-1")
    assert "Failed to get lease" not in out, out
    assert "HolderIdentity:  sandbox-node-1" in out
    assert "kubelet is posting ready status" in out
    allocatable = out.split("Allocatable:")[1].split("System Info:")[0].split()
    assert allocatable == ["cpu:", "3900m", "memory:", "15872Mi", "pods:", "110"]
