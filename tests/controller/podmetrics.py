"""A stand-in `metrics.k8s.io/v1beta1` server (what metrics-server serves), for the controller's
Resource-metric end-to-end test: per-pod CPU usage comes from a function the test controls, the
pods from the Kubernetes API. Served over TLS with its own CA, registered as an APIService with
that CA in `caBundle`, so the aggregator verifies it as it would metrics-server."""

from __future__ import annotations

import base64
import shutil
import ssl
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from autoscaler.kube import KubeClient
from sandbox.certs import issue, make_ca
from sandbox.prometheus import free_port

GV = "/apis/metrics.k8s.io/v1beta1"
NS = "kube-system"


class PodMetricsServer:
    def __init__(self, kube: KubeClient, cpu_milli: Callable[[int], float]) -> None:
        self._kube = kube
        self.cpu_milli = cpu_milli  # running pods -> each pod's CPU usage in millicores
        self._runner: web.AppRunner | None = None
        self._dir: Path | None = None

    async def _discovery(self, _: web.Request) -> web.Response:
        return web.json_response(
            {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": "metrics.k8s.io/v1beta1",
                "resources": [
                    {
                        "name": "pods",
                        "namespaced": True,
                        "kind": "PodMetrics",
                        "verbs": ["get", "list"],
                    }
                ],
            }
        )

    async def _pods(self, request: web.Request) -> web.Response:
        ns = request.match_info["ns"]
        query = [("labelSelector", request.query.get("labelSelector", ""))]
        doc = await self._kube.request("GET", f"/api/v1/namespaces/{ns}/pods", query=query)
        pods = [
            p for p in doc.get("items", []) if (p.get("status") or {}).get("phase") == "Running"
        ]
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        items: list[dict[str, Any]] = []
        for pod in pods:
            containers = pod["spec"]["containers"]
            each = self.cpu_milli(len(pods)) / len(containers)
            items.append(
                {
                    "metadata": {
                        "name": pod["metadata"]["name"],
                        "namespace": ns,
                        "labels": pod["metadata"].get("labels", {}),
                    },
                    "timestamp": now,
                    "window": "15s",
                    "containers": [
                        {"name": c["name"], "usage": {"cpu": f"{int(each)}m", "memory": "10Mi"}}
                        for c in containers
                    ],
                }
            )
        return web.json_response(
            {
                "kind": "PodMetricsList",
                "apiVersion": "metrics.k8s.io/v1beta1",
                "metadata": {},
                "items": items,
            }
        )

    async def start(self) -> None:
        now = datetime.now(UTC)
        ca = make_ca("podmetrics-ca", now=now)
        leaf = issue(
            ca,
            "metrics-server",
            now=now,
            hosts=(f"metrics-server.{NS}.svc", "127.0.0.1"),
            server=True,
        )
        tmp = self._dir = Path(tempfile.mkdtemp(prefix="podmetrics-"))
        cert, key = leaf.write(tmp, "serving")
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        app = web.Application()
        app.router.add_get(GV, self._discovery)
        app.router.add_get(f"{GV}/namespaces/{{ns}}/pods", self._pods)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port, ssl_context=context).start()
        await self._register(port, ca.cert_pem)

    async def _register(self, port: int, ca_pem: bytes) -> None:
        svc = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "metrics-server", "namespace": NS},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]},
        }
        eps = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "metrics-server", "namespace": NS},
            "subsets": [
                {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": port}]}
            ],
        }
        await self._kube.request("POST", f"/api/v1/namespaces/{NS}/services", body=svc)
        await self._kube.request("POST", f"/api/v1/namespaces/{NS}/endpoints", body=eps)
        api = {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": "v1beta1.metrics.k8s.io"},
            "spec": {
                "group": "metrics.k8s.io",
                "version": "v1beta1",
                "service": {"name": "metrics-server", "namespace": NS, "port": 443},
                "caBundle": base64.b64encode(ca_pem).decode(),
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
            },
        }
        await self._kube.request("POST", "/apis/apiregistration.k8s.io/v1/apiservices", body=api)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
