"""The end-to-end stack for the controller: a Kubernetes API (the sandbox, or a real cluster
given PROMSCALER_E2E_KUBECONFIG), a real Prometheus, the adapter registered through the API
server's aggregation layer (APIService), and helpers that act only through the Kubernetes API.

On a real cluster, the adapter (chart) must already serve the rules below and
PROMSCALER_E2E_PROMETHEUS_URL must be a Prometheus with the remote-write receiver that it reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import struct
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from autoscaler.app import Settings, serve
from autoscaler.controller import ControllerConfig
from autoscaler.kube import KubeClient, KubeError, NotFound, connect
from autoscaler.kube.lease import LeaseConfig
from autoscaler.reconcile import ControllerOptions
from sandbox.prometheus import PrometheusServer, free_port, remote_write
from tests.controller.resource_rules import RESOURCE_RULES

ROOT = Path(__file__).parents[2]
# Prometheus's staleness marker: a NaN with this exact bit pattern ends a series at once
STALE_NAN = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000002))[0]
CRD = ROOT / "charts/promscaler/crds/autoscalers.promscaler.dev.yaml"
AUTOSCALERS = "/apis/promscaler.dev/v1alpha1"
HPA_SYNC_PERIOD = 1.0  # seconds: the sandbox's HPA controller (a real cluster's: 15 s)
RULES = """
rules:
- seriesQuery: 'e2e_requests_per_pod{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: 'e2e_backlog{namespace!="",deployment!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      deployment: {group: apps, resource: deployment}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
externalRules:
- seriesQuery: 'e2e_queue_depth{queue!=""}'
  resources: {namespaced: false}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue)'
"""


@dataclass
class Stack:
    kubeconfig: Path
    kube: KubeClient
    prometheus: PrometheusServer | None
    prometheus_url: str
    namespace: str = "default"
    tmp: Path = Path("/tmp")
    _last: dict[tuple[tuple[str, str], ...], float] = field(default_factory=dict)

    # ---- objects through the API ---------------------------------------------------------
    async def apply_crd(self) -> None:
        crd = yaml.safe_load(CRD.read_text())
        path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        with contextlib.suppress(Exception):
            await self.kube.request("POST", path, body=crd)
        for _ in range(100):  # established: the group/version is discoverable
            with contextlib.suppress(NotFound):
                doc = await self.kube.request("GET", "/apis/promscaler.dev/v1alpha1")
                if any(r.get("name") == "autoscalers" for r in doc.get("resources", [])):
                    return
            await asyncio.sleep(0.1)
        raise AssertionError("the Autoscaler CRD never became available")

    async def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        return await self.kube.request("POST", path, body=obj)

    async def deployment(self, name: str, replicas: int, *, cpu_request: str = "") -> None:
        container: dict[str, Any] = {"name": "app", "image": "registry.k8s.io/pause:3.9"}
        if cpu_request:
            container["resources"] = {"requests": {"cpu": cpu_request}}
        body = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [container]},
                },
            },
        }
        await self.create(f"/apis/apps/v1/namespaces/{self.namespace}/deployments", body)

    async def autoscaler(self, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        body = {
            "apiVersion": "promscaler.dev/v1alpha1",
            "kind": "Autoscaler",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": spec,
        }
        return await self.create(f"{AUTOSCALERS}/namespaces/{self.namespace}/autoscalers", body)

    async def delete_autoscaler(self, name: str) -> None:
        path = f"{AUTOSCALERS}/namespaces/{self.namespace}/autoscalers/{name}"
        await self.kube.request("DELETE", path)

    async def annotate(self, name: str, annotations: dict[str, str | None]) -> None:
        """Set (or, with None, remove) annotations of an Autoscaler."""
        path = f"{AUTOSCALERS}/namespaces/{self.namespace}/autoscalers/{name}"
        body = {"metadata": {"annotations": annotations}}
        await self.kube.request(
            "PATCH", path, body=body, content_type="application/merge-patch+json"
        )

    async def get_autoscaler(self, name: str) -> dict[str, Any]:
        path = f"{AUTOSCALERS}/namespaces/{self.namespace}/autoscalers/{name}"
        return await self.kube.request("GET", path)

    async def replicas(self, name: str) -> int:
        path = f"/apis/apps/v1/namespaces/{self.namespace}/deployments/{name}/scale"
        return int((await self.kube.request("GET", path))["spec"].get("replicas", 0))

    async def scale(self, name: str, replicas: int) -> None:
        path = f"/apis/apps/v1/namespaces/{self.namespace}/deployments/{name}/scale"
        body = {"spec": {"replicas": replicas}}
        await self.kube.request(
            "PATCH", path, body=body, content_type="application/merge-patch+json"
        )

    async def pods(self, app: str) -> list[dict[str, Any]]:
        path = f"/api/v1/namespaces/{self.namespace}/pods"
        doc = await self.kube.request("GET", path, query=[("labelSelector", f"app={app}")])
        return [p for p in doc.get("items", []) if not p["metadata"].get("deletionTimestamp")]

    async def events(self, name: str) -> list[dict[str, Any]]:
        path = f"/api/v1/namespaces/{self.namespace}/events"
        doc = await self.kube.request("GET", path)
        return [
            e
            for e in doc.get("items", [])
            if e["involvedObject"].get("name") == name
            and e["involvedObject"].get("kind") == "Autoscaler"
        ]

    async def condition(self, name: str, type_: str) -> dict[str, Any]:
        status = (await self.get_autoscaler(name)).get("status") or {}
        for c in status.get("conditions") or []:
            if c["type"] == type_:
                return dict(c)
        return {}

    async def point_apiservice(self, name: str, service: str) -> None:
        """Point an APIService at another Service of the adapter's namespace (one that does not
        exist: the aggregated API is then registered but unavailable)."""
        path = f"/apis/apiregistration.k8s.io/v1/apiservices/{name}"
        body = {"spec": {"service": {"name": service}}}
        await self.kube.request(
            "PATCH", path, body=body, content_type="application/merge-patch+json"
        )

    def freeze_prometheus(self, frozen: bool) -> None:
        """SIGSTOP (a Prometheus that accepts connections and never answers) or SIGCONT."""
        assert self.prometheus is not None, "needs the stack's own Prometheus"
        self.prometheus.signal(signal.SIGSTOP if frozen else signal.SIGCONT)

    # ---- metrics into Prometheus ---------------------------------------------------------
    async def write(self, name: str, labels: dict[str, str], value: float) -> None:
        key = tuple(sorted({"__name__": name, **labels}.items()))
        now = max(time.time() - 0.5, self._last.get(key, 0) + 0.001)  # strictly increasing
        self._last[key] = now
        await remote_write(self.prometheus_url, [({"__name__": name, **labels}, [(now, value)])])

    async def queue(self, queue: str, value: float) -> None:
        await self.write("e2e_queue_depth", {"queue": queue}, value)

    async def queue_served(self, queue: str) -> bool:
        """True once the adapter serves the queue's external metric through the API server."""
        path = f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{self.namespace}/e2e_queue_depth"
        try:
            doc = await self.kube.request("GET", path, query=[("labelSelector", f"queue={queue}")])
        except KubeError:
            return False
        return bool(doc.get("items"))

    async def served(self, path: str, *, label_selector: str = "") -> bool:
        """True once the metrics API `path` answers with items through the API server: the
        adapter's discovery has seen the series (it relists every second on the sandbox)."""
        query = [("labelSelector", label_selector)] if label_selector else []
        try:
            doc = await self.kube.request("GET", path, query=query)
        except KubeError:
            return False
        return bool(doc.get("items"))

    async def queue_gone(self, queue: str) -> None:
        """End the queue's series now (a staleness marker): its metric fails until written."""
        await self.write("e2e_queue_depth", {"queue": queue}, STALE_NAN)

    # ---- the controller ------------------------------------------------------------------
    def settings(self, **controller: Any) -> Settings:
        lease = controller.pop("lease", None)
        options = controller.pop("options", ControllerOptions())
        share_pod_metrics = controller.pop("share_pod_metrics", 0.0)
        config = {"sync_period": 1.0, "zero_poll_interval": 1.0, "workers": 4, **controller}
        return Settings(
            kubeconfig=str(self.kubeconfig),
            # all namespaces on the sandbox (the failover test covers --namespace); only the
            # test's own namespace on a shared real cluster
            namespaces=() if self.prometheus is not None else (self.namespace,),
            controller=ControllerConfig(**config),
            options=options,
            leader_elect=lease is not None,
            lease=lease or LeaseConfig(),
            metrics_port=0,
            share_pod_metrics=share_pod_metrics,
        )

    @contextlib.asynccontextmanager
    async def controller(self, **controller: Any) -> AsyncIterator[None]:
        stop = asyncio.Event()
        task = asyncio.create_task(serve(self.settings(**controller), stop=stop))
        try:
            yield
        finally:
            stop.set()
            await asyncio.wait_for(task, 20)

    def controller_process(self, *args: str, log: Path) -> subprocess.Popen[bytes]:
        """`promscaler-autoscaler run` as its own process (to kill it without a goodbye)."""
        argv = [
            sys.executable,
            "-m",
            "autoscaler",
            "run",
            "--kubeconfig",
            str(self.kubeconfig),
            "--namespace",
            self.namespace,
            "--metrics-port",
            "0",
            "--log-format",
            "text",
            *args,
        ]
        with log.open("ab") as out:
            return subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )


async def eventually(
    check: Callable[[], Awaitable[Any]], *, timeout: float, interval: float = 0.1, what: str = ""
) -> Any:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = await check()
        if last:
            return last
        await asyncio.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or check}: last {last!r}")


# ---- building the stack ------------------------------------------------------------------
async def _register_adapter(kube: KubeClient, port: int, *, resource: bool = False) -> None:
    ns = "promscaler-system"
    with contextlib.suppress(Exception):
        await kube.request(
            "POST",
            "/api/v1/namespaces",
            body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        )
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "adapter", "namespace": ns},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]},
    }
    eps = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "adapter", "namespace": ns},
        "subsets": [
            {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": port}]}
        ],
    }
    await kube.request("POST", f"/api/v1/namespaces/{ns}/services", body=svc)
    await kube.request("POST", f"/api/v1/namespaces/{ns}/endpoints", body=eps)
    groups = [
        ("custom.metrics.k8s.io", "v1beta2"),
        ("external.metrics.k8s.io", "v1beta1"),
        ("history.promscaler.dev", "v1alpha1"),  # spec.predictive's history
    ]
    for group, version in groups + ([("metrics.k8s.io", "v1beta1")] if resource else []):
        body = {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": f"{version}.{group}"},
            "spec": {
                "group": group,
                "version": version,
                "service": {"name": "adapter", "namespace": ns, "port": 443},
                # the adapter serves a self-signed certificate in this test stack
                "insecureSkipTLSVerify": True,
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
            },
        }
        await kube.request("POST", "/apis/apiregistration.k8s.io/v1/apiservices", body=body)


def _start_adapter(
    tmp: Path,
    kubeconfig: Path,
    prometheus_url: str,
    front_ca: Path,
    extra: tuple[str, ...] = (),
    *,
    resource: bool = False,
    external_rules: tuple[dict[str, Any], ...] = (),
) -> tuple[subprocess.Popen[bytes], int]:
    rules = tmp / "rules.yaml"
    text = RULES + (RESOURCE_RULES if resource else "")
    if external_rules:  # rules a test made (`convert --rules-out`), served beside the stack's
        doc = yaml.safe_load(text)
        doc["externalRules"] = [*doc["externalRules"], *external_rules]
        text = yaml.safe_dump(doc, sort_keys=False)
    rules.write_text(text)
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "adapter",
        "--config",
        str(rules),
        "--prometheus-url",
        prometheus_url,
        "--secure-port",
        str(port),
        "--bind-address",
        "127.0.0.1",
        "--cert-dir",
        str(tmp / "adapter-certs"),
        "--lister-kubeconfig",
        str(kubeconfig),
        "--authentication-skip-lookup",
        "--requestheader-client-ca-file",
        str(front_ca),
        "--authorization-mode",
        "AlwaysAllow",
        "--batch-window",
        "500ms",  # well under the tests' 1 s sync periods, as 5 s is under 15 s
        "--metrics-relist-interval",
        "1s",
        "--metrics-max-age",
        "30m",  # a series stays known long after its last sample
        *extra,
    ]
    with (tmp / "adapter.log").open("ab") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    return proc, port


@contextlib.asynccontextmanager
async def e2e_stack(
    tmp: Path,
    *,
    adapter_args: tuple[str, ...] = (),
    resource_metrics: bool = False,
    adapter_prometheus: Callable[[str], str] | None = None,
    external_rules: tuple[dict[str, Any], ...] = (),
    backfill_window: str = "",
) -> AsyncIterator[Stack]:
    """The stack; `adapter_args` are extra flags for the sandbox's adapter (ignored on a real
    cluster, whose adapter the chart runs); `resource_metrics` (sandbox only) adds two nodes, the
    simulated cAdvisor writing into the Prometheus, and the adapter serving metrics.k8s.io from
    RESOURCE_RULES; `adapter_prometheus(url)`: the URL the adapter reads instead of the sandbox
    stack's Prometheus at `url` (a fault proxy in front of it); metrics are still written to
    `url`; `external_rules` (sandbox only) are served besides RULES' own; `backfill_window`
    (sandbox only, a Prometheus duration): remote write accepts samples this old."""
    external = os.environ.get("PROMSCALER_E2E_KUBECONFIG")
    if external:
        url = os.environ.get("PROMSCALER_E2E_PROMETHEUS_URL", "")
        if not url:
            raise RuntimeError(
                "PROMSCALER_E2E_PROMETHEUS_URL is required with PROMSCALER_E2E_KUBECONFIG"
            )
        kube = await connect(external)
        ns = f"e2e-{os.getpid()}-{int(time.time())}"
        await kube.request(
            "POST",
            "/api/v1/namespaces",
            body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        )
        stack = Stack(Path(external), kube, None, url, namespace=ns, tmp=tmp)
        try:
            await stack.apply_crd()
            yield stack
        finally:
            with contextlib.suppress(Exception):
                await kube.request("DELETE", f"/api/v1/namespaces/{ns}")
            await kube.close()
        return
    from sandbox.hpa_controller import HpaControllerConfig
    from sandbox.server import Sandbox, SandboxConfig

    (tmp / "prometheus").mkdir(exist_ok=True)
    prom = PrometheusServer(tmp / "prometheus", out_of_order_window=backfill_window)
    prom.start()
    adapter = None
    try:
        # kube-controller-manager's HPA controller, as a real cluster has it (1 s syncs)
        hpa = HpaControllerConfig(sync_period=HPA_SYNC_PERIOD)
        usage = {"nodes": 2, "prometheus_url": prom.url} if resource_metrics else {}
        config = SandboxConfig(
            pod_ready_delay=0.2, availability_interval=0.5, hpa_controller=hpa, **usage
        )
        async with Sandbox(config) as sb:
            kube = await connect(str(sb.kubeconfig))
            try:
                read_from = adapter_prometheus(prom.url) if adapter_prometheus else prom.url
                adapter, port = _start_adapter(
                    tmp,
                    sb.kubeconfig,
                    read_from,
                    sb.pki.requestheader_ca_file,
                    adapter_args,
                    resource=resource_metrics,
                    external_rules=external_rules,
                )
                await _register_adapter(kube, port, resource=resource_metrics)
                stack = Stack(sb.kubeconfig, kube, prom, prom.url, tmp=tmp)
                await stack.apply_crd()
                yield stack
            finally:
                await kube.close()
    finally:
        if adapter is not None:
            adapter.terminate()
            try:
                adapter.wait(10)
            except subprocess.TimeoutExpired:
                adapter.kill()
                adapter.wait()
        prom.close()


def external_metric(
    queue: str, *, average: str | None = "10", value: str | None = None
) -> dict[str, Any]:
    target = (
        {"type": "AverageValue", "averageValue": average}
        if value is None
        else {"type": "Value", "value": value}
    )
    return {
        "type": "External",
        "external": {
            "metric": {"name": "e2e_queue_depth", "selector": {"matchLabels": {"queue": queue}}},
            "target": target,
        },
    }


def target_ref(name: str) -> dict[str, str]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}


FAST = {  # short windows so a test sees both directions in seconds
    "scaleUp": {
        "stabilizationWindowSeconds": 0,
        "policies": [{"type": "Pods", "value": 10, "periodSeconds": 1}],
    },
    "scaleDown": {
        "stabilizationWindowSeconds": 3,
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}],
    },
}
