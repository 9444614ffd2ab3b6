"""metrics.k8s.io end to end: the sandbox's simulated cAdvisor writes usage into a real
Prometheus, the adapter serves it through the sandbox's aggregation layer, and the real kubectl
and the controller read it. Nothing in between is a stand-in."""

from __future__ import annotations

import asyncio
import re
import shutil

import pytest

from autoscaler.reconcile import ControllerOptions
from sandbox import cadvisor
from tests.controller.stack import FAST, Stack, e2e_stack, eventually, target_ref

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.prometheus,
    pytest.mark.sandbox_only(
        "the sandbox's simulated cAdvisor load (load.sandbox.promscaler.dev annotations)"
    ),
]


@pytest.fixture
async def stack(tmp_path):
    async with e2e_stack(tmp_path, resource_metrics=True) as s:
        yield s


async def load(st: Stack, name: str, **annotations: str) -> None:
    """Set load annotations on a Deployment (cpu, cpu_total, memory)."""
    keys = {"cpu": cadvisor.CPU, "cpu_total": cadvisor.CPU_TOTAL, "memory": cadvisor.MEMORY}
    body = {"metadata": {"annotations": {keys[k]: v for k, v in annotations.items()}}}
    path = f"/apis/apps/v1/namespaces/{st.namespace}/deployments/{name}"
    await st.kube.request("PATCH", path, body=body, content_type="application/merge-patch+json")


async def kubectl(st: Stack, *args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        "--kubeconfig",
        str(st.kubeconfig),
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


def rows(text: str) -> dict[str, list[str]]:
    lines = [line.split() for line in text.strip().splitlines()]
    return {cells[0]: cells[1:] for cells in lines[1:]}


def milli(text: str) -> int:
    match = re.fullmatch(r"(\d+)m", text)
    assert match, text
    return int(match.group(1))


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_top_pods_and_nodes(stack: Stack):
    st = stack
    await st.deployment("web", 2, cpu_request="100m")
    await load(st, "web", cpu="250m", memory="128Mi")

    async def top_pods():
        code, out = await kubectl(st, "top", "pods", "-n", st.namespace)
        found = rows(out) if code == 0 else {}
        # CPU is a counter's rate over 5s: it reaches the 250m once the range holds no idle
        # samples (within 1%, for the sample times' jitter)
        settled = all(abs(milli(r[0]) - 250) <= 3 and r[1] == "128Mi" for r in found.values())
        return found if len(found) == 2 and settled else None

    pods = await eventually(top_pods, timeout=40, interval=0.5, what="kubectl top pods")
    assert all(name.startswith("web-") for name in pods)

    code, out = await kubectl(st, "top", "nodes")
    assert code == 0, out
    assert out.split("\n")[0].split() == [
        "NAME",
        "CPU(cores)",
        "CPU(%)",
        "MEMORY(bytes)",
        "MEMORY(%)",
    ]
    nodes = rows(out)
    assert sorted(nodes) == ["sandbox-node-1", "sandbox-node-2"]
    for cpu, cpu_pct, memory, memory_pct in nodes.values():
        # one web pod per node (250m, 128Mi) plus the system daemons (100m, 512Mi),
        # against an allocatable 3900m and 15872Mi
        assert abs(milli(cpu) - 350) <= 4, nodes
        assert (cpu_pct, memory, memory_pct) == ("8%", "640Mi", "4%")

    code, out = await kubectl(st, "top", "pods", "--all-namespaces", "-l", "app=web")
    assert code == 0, out
    lines = [line.split() for line in out.strip().splitlines()]
    assert lines[0] == ["NAMESPACE", "NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert sorted((cells[0], cells[1]) for cells in lines[1:]) == [
        (st.namespace, name) for name in sorted(pods)
    ]

    code, out = await kubectl(st, "top", "pod", next(iter(pods)), "--containers")
    assert code == 0, out
    assert [r[0] for r in rows(out).values()] == ["app"]
    code, out = await kubectl(st, "top", "pod", "nope")
    assert code != 0
    assert 'pods "nope" not found' in out


def cpu_utilization(percent: int) -> dict:
    target = {"type": "Utilization", "averageUtilization": percent}
    return {"type": "Resource", "resource": {"name": "cpu", "target": target}}


async def replicas_are(st: Stack, name: str, want: int) -> bool:
    return await st.replicas(name) == want


async def test_cpu_utilization_scales_on_simulated_load(stack: Stack):
    st = stack
    await st.deployment("web", 1, cpu_request="100m")
    await load(st, "web", cpu_total="50m")  # 50% of the one pod's request: at target
    spec = {
        "scaleTargetRef": target_ref("web"),
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [cpu_utilization(50)],
        "behavior": FAST,
    }
    await st.autoscaler("web", spec)
    options = ControllerOptions(cpu_initialization_period=0)  # the sandbox's pods start at once
    async with st.controller(options=options):

        async def measured():
            status = (await st.get_autoscaler("web")).get("status") or {}
            current = status.get("currentMetrics") or []
            resource = (current[0] if current else {}).get("resource") or {}
            return resource.get("current", {}).get("averageUtilization")

        async def settled():
            reading = await measured()
            return reading is not None and abs(reading - 50) <= 2  # the 5s rate has caught up

        await eventually(settled, timeout=30, what="a CPU reading of 50%")
        assert await st.replicas("web") == 1
        # 200m over one pod is 200% of its request against 50%: ceil(1 x 4) = 4 pods, and then
        # each of the 4 gets 50m: at target, so it stays there
        await load(st, "web", cpu_total="200m")
        await eventually(lambda: replicas_are(st, "web", 4), timeout=30, what="4 replicas")
        await asyncio.sleep(4)
        assert await st.replicas("web") == 4
        events = [e for e in await st.events("web") if e["reason"] == "SuccessfulRescale"]
        assert events
        assert "cpu resource utilization" in events[-1]["message"]


async def test_an_autoscaler_without_metrics_defaults_to_cpu_80_percent(stack: Stack):
    st = stack
    await st.deployment("api", 1, cpu_request="100m")
    await load(st, "api", cpu_total="300m")  # 300% of one pod's request
    spec = {
        "scaleTargetRef": target_ref("api"),
        "minReplicas": 1,
        "maxReplicas": 10,
        "behavior": FAST,
    }
    await st.autoscaler("api", spec)
    async with st.controller(options=ControllerOptions(cpu_initialization_period=0)):
        # ceil(1 x 300 / 80) = 4; then 75m each is 75%, inside the 10% tolerance of 80%
        await eventually(lambda: replicas_are(st, "api", 4), timeout=30, what="4 replicas")

        async def decided() -> dict | None:  # a pass writes its status after the scale
            status = (await st.get_autoscaler("api")).get("status") or {}
            return status if status.get("desiredReplicas") == 4 else None

        status = await eventually(decided, timeout=5, what="the status of the pass")
        assert status["targets"].endswith("/80%"), status["targets"]
