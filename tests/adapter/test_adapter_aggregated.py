"""The adapter registered as an APIService behind the sandbox's kube-aggregator, asked by the
real kubectl: discovery, custom and external metrics, and an error, through the proxy."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest
from aiohttp import web

from adapter.server.app import build_app
from adapter.server.tls import ServingTLS, TLSOptions
from tests.adapter.fakes import FakeLister
from tests.adapter.stack import make_stack, series
from tests.support.prometheus import free_port, remote_write

pytestmark = [pytest.mark.prometheus, pytest.mark.kubectl, pytest.mark.e2e]
CM1 = "/apis/custom.metrics.k8s.io/v1beta1"


async def kubectl(kubeconfig, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        f"--kubeconfig={kubeconfig}",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate((stdin or "").encode()), timeout=60)
    return proc.returncode, out.decode(), err.decode()


def manifests(port: int) -> str:
    objects = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "promscaler-adapter", "namespace": "default"},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]},
        },
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "promscaler-adapter", "namespace": "default"},
            "subsets": [
                {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": port}]}
            ],
        },
    ]
    for group, version in (
        ("custom.metrics.k8s.io", "v1beta1"),
        ("custom.metrics.k8s.io", "v1beta2"),
        ("external.metrics.k8s.io", "v1beta1"),
    ):
        objects.append(
            {
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {"name": f"{version}.{group}"},
                "spec": {
                    "group": group,
                    "version": version,
                    "insecureSkipTLSVerify": True,
                    "groupPriorityMinimum": 100,
                    "versionPriority": 100,
                    "service": {"name": "promscaler-adapter", "namespace": "default", "port": 443},
                },
            }
        )
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})


async def test_kubectl_through_the_aggregator(sandbox_factory, prometheus, tmp_path):
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    sandbox = await sandbox_factory(availability_interval=0.2)
    await remote_write(
        prometheus.url,
        [
            series("gauge_value", {"namespace": "default", "pod": "web-1"}, [0.25]),
            series("queue_depth", {"queue": "orders"}, [12]),
        ],
    )
    stack = await make_stack(
        prometheus.url, lister=FakeLister({("pods", "default"): {"web-1": {"app": "web"}}})
    )
    await stack.discover()
    tls = ServingTLS(TLSOptions(cert_dir=str(tmp_path / "certs")))
    runner = web.AppRunner(build_app(stack.provider), access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=tls.context).start()
    config = str(sandbox.kubeconfig)
    try:
        code, _, err = await kubectl(
            config, "apply", "--validate=false", "-f", "-", stdin=manifests(port)
        )
        assert code == 0, err
        code, out, err = await kubectl(
            config,
            "wait",
            "--for=condition=Available",
            "--timeout=20s",
            "apiservice/v1beta1.custom.metrics.k8s.io",
            "apiservice/v1beta2.custom.metrics.k8s.io",
            "apiservice/v1beta1.external.metrics.k8s.io",
        )
        assert code == 0, err + out

        code, out, err = await kubectl(
            config,
            "get",
            "--raw",
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/gauge_value"
            "?labelSelector=app%3Dweb",
        )
        assert code == 0, err
        (item,) = json.loads(out)["items"]
        assert item["value"] == "250m"
        assert item["metric"] == {"name": "gauge_value", "selector": None}

        code, out, err = await kubectl(
            config, "get", "--raw", "/apis/external.metrics.k8s.io/v1beta1/namespaces/a/queue_depth"
        )
        assert code == 0, err
        assert [(i["metricLabels"], i["value"]) for i in json.loads(out)["items"]] == [
            ({"queue": "orders"}, "12")
        ]

        # (kubectl api-resources hides names with a "/", as it does for prometheus-adapter)
        code, out, err = await kubectl(
            config, "get", "--raw", "/apis/custom.metrics.k8s.io/v1beta1"
        )
        assert code == 0, err
        assert {r["name"] for r in json.loads(out)["resources"]} == {
            "pods/gauge_value",
            "namespaces/gauge_value",
        }

        code, out, err = await kubectl(
            config,
            "get",
            "--raw",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/web-1/nope",
        )
        assert code != 0
        assert "could not find the metric nope for pods" in err
    finally:
        await runner.cleanup()
        await stack.close()
