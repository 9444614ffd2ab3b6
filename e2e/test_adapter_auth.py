"""End to end: kubectl -> sandbox (authn, authz, aggregation proxy) -> adapter -> Prometheus.

The adapter runs in-process with the real PrometheusProvider over the `prometheus` fixture,
the real KubeObjects lister and the real delegating guard, all talking to the sandbox as the
adapter's own service account (RBAC as the chart grants it). The sandbox's policy decides who
gets metrics; the adapter asks it (TokenReview, SubjectAccessReview) and trusts the
aggregator's front-proxy certificate only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from adapter.auth.limits import LimitedAppRunner, Limits, limits_middleware
from adapter.auth.options import AuthOptions, build_guard, client_cas_provider
from adapter.kube import KubeClient, KubeObjects
from adapter.kubeauth import KubeAuth
from adapter.provider.engine import SingleBackend
from adapter.provider.history import RangeHistory
from adapter.server.app import build_app
from adapter.server.tls import ServingTLS, TLSOptions
from sandbox import Sandbox
from sandbox.certs import issue
from tests.adapter.security.harness import free_port
from tests.adapter.security.sandbox_setup import (
    ADAPTER_TOKEN,
    EVE_TOKEN,
    HPA_TOKEN,
    POLICY,
    kubeconfig_for,
)
from tests.adapter.stack import make_stack, series
from tests.support.prometheus import remote_write
from tests.support.sandbox import SandboxHttp

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kubectl,
    pytest.mark.prometheus,
    pytest.mark.sandbox_only(
        "its own token policy, client and request-header CAs it issues and rotates, and the"
        " adapter started in-process against it"
    ),
]

CM = "/apis/custom.metrics.k8s.io/v1beta2"
EM = "/apis/external.metrics.k8s.io/v1beta1"
PODS = f"{CM}/namespaces/default/pods/*/gauge_value?labelSelector=app%3Dweb"
QUEUE = f"{EM}/namespaces/default/queue_depth"


@dataclass
class Stack:
    sandbox: Sandbox
    adapter_url: str
    guard: object
    tmp: Path


async def kubectl(sb: Sandbox, token: str, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        f"--kubeconfig={sb.kubeconfig}",
        f"--token={token}",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode or 0, out.decode(), err.decode()


async def register(http: SandboxHttp, port: int) -> None:
    """Service + Endpoints -> 127.0.0.1:port, and one APIService per group/version."""
    calls = [
        ("/api/v1/namespaces", {"metadata": {"name": "monitoring"}}),
        (
            "/api/v1/namespaces/monitoring/services",
            {
                "metadata": {"name": "promscaler-adapter", "namespace": "monitoring"},
                "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]},
            },
        ),
        (
            "/api/v1/namespaces/monitoring/endpoints",
            {
                "metadata": {"name": "promscaler-adapter", "namespace": "monitoring"},
                "subsets": [
                    {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": port}]}
                ],
            },
        ),
    ]
    for group, version in (
        ("custom.metrics.k8s.io", "v1beta2"),
        ("external.metrics.k8s.io", "v1beta1"),
    ):
        calls.append(
            (
                "/apis/apiregistration.k8s.io/v1/apiservices",
                {
                    "metadata": {"name": f"{version}.{group}"},
                    "spec": {
                        "group": group,
                        "version": version,
                        "groupPriorityMinimum": 100,
                        "versionPriority": 100,
                        "insecureSkipTLSVerify": True,
                        "service": {
                            "name": "promscaler-adapter",
                            "namespace": "monitoring",
                            "port": 443,
                        },
                    },
                },
            )
        )
    for path, body in calls:
        status, got = await http.request("POST", path, json=body)
        assert status == 201, (path, got)


async def create_pods(http: SandboxHttp) -> None:
    for name in ("web-1", "web-2"):
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }
        status, got = await http.request("POST", "/api/v1/namespaces/default/pods", json=body)
        assert status == 201, got


@pytest.fixture
async def stack(sandbox_factory, prometheus, tmp_path) -> AsyncIterator[Stack]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    sb = await sandbox_factory(policy=POLICY, availability_interval=0.5)
    http = SandboxHttp(sb)
    kubeconfig = kubeconfig_for(sb, ADAPTER_TOKEN, tmp_path / "adapter.kubeconfig")
    await create_pods(http)
    await remote_write(
        prometheus.url,
        [
            series("gauge_value", {"namespace": "default", "pod": "web-1"}, [1.5]),
            series("gauge_value", {"namespace": "default", "pod": "web-2"}, [2]),
            series("queue_depth", {"queue": "orders"}, [42]),
        ],
    )
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(http.close)
        lister_client = KubeClient(kubeconfig)
        auth_client = KubeClient(kubeconfig)
        stack.push_async_callback(lister_client.close)
        stack.push_async_callback(auth_client.close)
        objects = KubeObjects(lister_client)
        stack.push_async_callback(objects.close)
        provider_stack = await make_stack(prometheus.url, lister=objects)
        stack.push_async_callback(provider_stack.close)
        await provider_stack.discover()
        options = AuthOptions(
            authentication_kubeconfig=kubeconfig, authorization_kubeconfig=kubeconfig
        )
        guard = build_guard(
            options, kube=KubeAuth(authentication=auth_client, authorization=auth_client)
        )
        await guard.start()  # reads the ConfigMap before TLS asks for client certificates
        stack.push_async_callback(guard.close)
        tls = ServingTLS(
            TLSOptions(cert_dir=str(tmp_path / "serving")), client_cas=client_cas_provider(guard)
        )
        history = RangeHistory(
            backends=SingleBackend(provider_stack.client),
            discovery=provider_stack.discovery,
            pods=objects,
        )
        app = build_app(
            provider_stack.provider, guard=guard, registry=provider_stack.registry, history=history
        )
        app.middlewares.insert(0, limits_middleware(Limits()))
        runner = LimitedAppRunner(app, access_log=None)
        await runner.setup()
        stack.push_async_callback(runner.cleanup)
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port, ssl_context=tls.context).start()
        await register(http, port)
        yield Stack(sb, f"https://127.0.0.1:{port}", guard, tmp_path)


async def eventually_kubectl(sb, token, *args, want=0, timeout=10.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        code, out, err = await kubectl(sb, token, *args)
        if code == want or asyncio.get_running_loop().time() > deadline:
            return code, out, err
        await asyncio.sleep(0.3)


async def test_allowed_user_gets_metrics_through_the_aggregator(stack):
    code, out, err = await eventually_kubectl(stack.sandbox, HPA_TOKEN, "get", "--raw", PODS)
    assert code == 0, err
    body = json.loads(out)
    assert body["kind"] == "MetricValueList"
    values = {i["describedObject"]["name"]: i["value"] for i in body["items"]}
    assert values == {"web-1": "1500m", "web-2": "2"}
    code, out, err = await kubectl(stack.sandbox, HPA_TOKEN, "get", "--raw", QUEUE)
    assert code == 0, err
    assert [i["value"] for i in json.loads(out)["items"]] == ["42"]


async def test_denied_user_gets_403_and_bad_token_401(stack):
    await eventually_kubectl(stack.sandbox, HPA_TOKEN, "get", "--raw", PODS)
    code, _, err = await kubectl(stack.sandbox, EVE_TOKEN, "get", "--raw", PODS)
    assert code != 0
    assert "Forbidden" in err or "forbidden" in err
    code, _, err = await kubectl(stack.sandbox, "not-a-token", "get", "--raw", PODS)
    assert code != 0
    assert "Unauthorized" in err


def ssl_ctx(cert: tuple[Path, Path] | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if cert:
        ctx.load_cert_chain(str(cert[0]), str(cert[1]))
    return ctx


async def direct(stack: Stack, path: str, *, token=None, headers=None, cert=None):
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    async with (
        aiohttp.ClientSession() as s,
        s.get(stack.adapter_url + path, headers=hdrs, ssl=ssl_ctx(cert)) as resp,
    ):
        return resp.status, await resp.text()


async def test_the_adapter_asks_the_cluster_when_called_directly(stack):
    status, body = await direct(stack, PODS, token=HPA_TOKEN)
    assert status == 200, body
    status, body = await direct(stack, PODS, token=EVE_TOKEN)
    assert status == 403, body
    assert 'User "eve" cannot get resource "pods/gauge_value"' in json.loads(body)["message"]
    status, body = await direct(stack, PODS, token="not-a-token")
    assert status == 401, body


async def test_a_pods_history_is_authorized_as_pods_in_the_history_group(stack):
    end = int(time.time()) + 60  # a step after the samples (written two seconds ago)
    path = (
        "/apis/history.promscaler.dev/v1alpha1/namespaces/default/pods/*/gauge_value"
        f"?labelSelector=app%3Dweb&start={end - 600}&end={end}"
    )
    status, body = await direct(stack, path, token=HPA_TOKEN)
    assert status == 200, body
    assert 3.5 in json.loads(body)["values"]  # web-1 and web-2 (bare pods: their own names)
    status, body = await direct(stack, path, token=EVE_TOKEN)
    assert status == 403, body
    message = json.loads(body)["message"]
    assert 'User "eve" cannot get resource "pods/gauge_value"' in message
    assert '"history.promscaler.dev"' in message


async def test_spoofed_identity_headers_are_not_trusted(stack):
    sb = stack.sandbox
    spoof = {"X-Remote-User": "hpa", "X-Remote-Group": "system:masters"}
    status, _ = await direct(stack, PODS, headers=spoof)  # no certificate: anonymous
    assert status == 403
    eve_cert = sb.issue_client_cert("eve")  # the client CA: user eve, headers ignored
    status, body = await direct(stack, PODS, headers=spoof, cert=eve_cert)
    assert status == 403, body
    assert '"eve"' in json.loads(body)["message"]
    assert sb.pki is not None
    odd = issue(sb.pki.requestheader_ca, "not-the-aggregator", now=sb.config.clock(), client=True)
    status, _ = await direct(stack, PODS, headers=spoof, cert=odd.write(stack.tmp, "odd"))
    assert status == 401  # the front-proxy CA, but a CN outside requestheader-allowed-names
    proxy = (sb.pki.front_proxy_cert, sb.pki.front_proxy_key)
    status, body = await direct(stack, PODS, headers={"X-Remote-User": "hpa"}, cert=proxy)
    assert status == 200, body  # the real front-proxy certificate: headers trusted


async def test_rotating_the_request_header_ca_needs_no_restart(stack):
    sb = stack.sandbox
    code, _, err = await eventually_kubectl(sb, HPA_TOKEN, "get", "--raw", PODS)
    assert code == 0, err
    assert sb.pki is not None
    old = (Path(str(sb.pki.front_proxy_cert) + ".old"), Path(str(sb.pki.front_proxy_key) + ".old"))
    old[0].write_bytes(Path(sb.pki.front_proxy_cert).read_bytes())
    old[1].write_bytes(Path(sb.pki.front_proxy_key).read_bytes())
    await sb.rotate_requestheader_ca()
    code, out, err = await eventually_kubectl(sb, HPA_TOKEN, "get", "--raw", PODS, timeout=10)
    assert code == 0, err
    assert len(json.loads(out)["items"]) == 2
    try:
        status, _ = await direct(stack, PODS, headers={"X-Remote-User": "hpa"}, cert=old)
    except aiohttp.ClientError:
        status = 0  # the handshake refuses a certificate of the retired CA
    assert status in (0, 401)
