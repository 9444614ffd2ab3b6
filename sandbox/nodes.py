"""Nodes: the `Node` objects a kubelet registers, and where the scheduler puts a pod.

The sandbox starts `SandboxConfig.nodes` nodes named `sandbox-node-1`...: cluster-scoped, with
`status.capacity` / `status.allocatable` (cpu, memory, pods), a Ready condition, InternalIP and
Hostname addresses and `nodeInfo`, as `kubectl get/describe/top nodes` read them. A new pod
goes to the Ready node with the fewest pods (ties by name), written to `spec.nodeName` before
the kubelet starts it: a stand-in for kube-scheduler's binding, without resources or affinity.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common.kubetime import format_time
from sandbox import errors
from sandbox.operations import Api
from sandbox.resources import Registry, ResourceType
from sandbox.store import Obj

NODES = ("", "nodes")
PODS = ("", "pods")
KUBELET_VERSION = "v1.32.0"  # the version the sandbox's discovery reports


@dataclass(frozen=True)
class NodeShape:
    """What each sandbox node offers (Quantity strings)."""

    cpu: str = "4"  # cores: enough for a demo of a few pods at a few hundred millicores
    memory: str = "16Gi"
    pods: str = "110"  # the kubelet's default --max-pods
    # capacity minus kube-reserved (100m, 512Mi), as a real node's allocatable
    allocatable_cpu: str = "3900m"
    allocatable_memory: str = "15872Mi"


def node_name(index: int) -> str:
    return f"sandbox-node-{index}"


def node_ip(index: int) -> str:
    return f"10.0.0.{index}"


def node_object(index: int, shape: NodeShape) -> Obj:
    """The Node as its kubelet registers it (status is written separately, as the kubelet)."""
    name = node_name(index)
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "sandbox",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"podCIDR": f"10.244.{index}.0/24", "podCIDRs": [f"10.244.{index}.0/24"]},
    }


def node_status(index: int, shape: NodeShape, *, ts: str) -> Obj:
    capacity = {"cpu": shape.cpu, "memory": shape.memory, "pods": shape.pods}
    allocatable = {
        "cpu": shape.allocatable_cpu,
        "memory": shape.allocatable_memory,
        "pods": shape.pods,
    }
    ready = {
        "type": "Ready",
        "status": "True",
        "lastHeartbeatTime": ts,
        "lastTransitionTime": ts,
        "reason": "KubeletReady",
        "message": "kubelet is posting ready status",
    }
    return {
        "capacity": capacity,
        "allocatable": allocatable,
        "conditions": [ready],
        "addresses": [
            {"type": "InternalIP", "address": node_ip(index)},
            {"type": "Hostname", "address": node_name(index)},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64",
            "operatingSystem": "linux",
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION,
            "containerRuntimeVersion": "sandbox://1.0",
            "osImage": "promscaler sandbox",
            "kernelVersion": "",
            "machineID": "",
            "systemUUID": "",
            "bootID": "",
        },
    }


def node_lease(node: Obj, *, renew: str) -> Obj:
    """The kubelet's heartbeat Lease in kube-node-lease, owned by its Node."""
    name = node["metadata"]["name"]
    owner = {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": "kube-node-lease", "ownerReferences": [owner]},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renew},
    }


def register_nodes(api: Api, registry: Registry, count: int, shape: NodeShape) -> None:
    """Create `count` Ready nodes and their Leases (what each kubelet does when it starts;
    the Lease is not renewed afterwards: nothing in the sandbox watches node heartbeats)."""
    rt = _rt(registry)
    leases = registry.lookup("coordination.k8s.io", "v1", "leases")
    assert leases is not None
    now = api.clock()
    ts = format_time(now)
    renew = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # a MicroTime, as the kubelet writes it
    for index in range(1, count + 1):
        node = api.create(rt, "", node_object(index, shape))
        api.update(
            rt,
            "",
            node["metadata"]["name"],
            {**node, "status": node_status(index, shape, ts=ts)},
            subresource="status",
        )
        api.create(leases, "kube-node-lease", node_lease(node, renew=renew))


def is_ready(node: Obj) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def host_ip(node: Obj) -> str:
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return str(address.get("address", ""))
    return ""


def choose_node(nodes: list[Obj], pods: Callable[[], list[Obj]]) -> Obj | None:
    """The Ready, schedulable node with the fewest pods; ties go to the first name. `pods` is
    only called when there is a choice to make: listing every pod on each bind made creating
    n pods cost O(n^2) on the default single node."""
    usable = [n for n in nodes if is_ready(n) and not (n.get("spec") or {}).get("unschedulable")]
    if len(usable) <= 1:
        return usable[0] if usable else None
    load: dict[str, int] = {}
    for pod in pods():
        bound = (pod.get("spec") or {}).get("nodeName")
        if bound:
            load[bound] = load.get(bound, 0) + 1
    return min(usable, key=lambda n: (load.get(n["metadata"]["name"], 0), n["metadata"]["name"]))


def bind(api: Api, registry: Registry, pod: Obj) -> tuple[Obj, str]:
    """`pod` with `spec.nodeName` set (kept when already set) and its node's IP ("" when the
    sandbox has no usable node: the pod then runs nowhere in particular, as before nodes)."""
    nodes = api.store.list(NODES, "")
    by_name = {n["metadata"]["name"]: n for n in nodes}
    spec: dict[str, Any] = pod.get("spec") or {}
    bound = spec.get("nodeName")
    if bound:
        return pod, host_ip(by_name[bound]) if bound in by_name else ""
    node = choose_node(nodes, lambda: api.store.list(PODS))
    if node is None:
        return pod, ""
    meta = pod["metadata"]
    body = {**pod, "spec": {**spec, "nodeName": node["metadata"]["name"]}}
    pods_rt = registry.lookup("", "v1", "pods")
    assert pods_rt is not None
    with contextlib.suppress(errors.ApiError):
        pod, _ = api.update(pods_rt, meta["namespace"], meta["name"], body)
    return pod, host_ip(node)


def _rt(registry: Registry) -> ResourceType:
    rt = registry.lookup("", "v1", "nodes")
    assert rt is not None, "nodes are a built-in resource"
    return rt
