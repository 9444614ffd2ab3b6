"""The aggregation layer: a TLS backend registered by APIService gets proxied requests."""

import asyncio
import base64
import gzip
import json
import ssl
from datetime import UTC, datetime

import pytest
from aiohttp import web
from cryptography import x509
from yarl import URL

from sandbox.auth import parse_policy
from sandbox.certs import issue, make_ca
from tests.support.sandbox import SandboxHttp

GROUP, VERSION = "metrics.example.com", "v1beta1"


class Backend:
    """A TLS aiohttp server that requires a client certificate from the request-header CA."""

    def __init__(self, tmp_path, requestheader_ca: bytes):
        now = datetime.now(UTC)
        self.ca = make_ca("backend-ca", now=now)
        serving = issue(self.ca, "backend", now=now, hosts=("backend.default.svc",), server=True)
        self.cert, self.key = serving.write(tmp_path, "backend")
        self.requestheader_ca = requestheader_ca
        self.seen: list[dict] = []
        self.runner = None
        self.port = 0

    async def handle(self, request):
        peer = request.transport.get_extra_info("peercert")
        cn = dict(item for rdn in peer["subject"] for item in rdn)["commonName"]
        self.seen.append(
            {
                "path": request.path_qs,
                "raw": request.raw_path,  # as it came over the wire
                "cn": cn,
                "user": request.headers.getall("X-Remote-User", []),
                "groups": request.headers.getall("X-Remote-Group", []),
                "extra": {
                    k: v
                    for k, v in request.headers.items()
                    if k.lower().startswith("x-remote-extra-")
                },
                "authorization": request.headers.get("Authorization"),
            }
        )
        if request.path == f"/apis/{GROUP}/{VERSION}":
            return web.json_response(
                {
                    "kind": "APIResourceList",
                    "apiVersion": "v1",
                    "groupVersion": f"{GROUP}/{VERSION}",
                    "resources": [],
                }
            )
        if request.path.startswith(RELAY):
            return await relay_answer(request, request.path[len(RELAY) :])
        return web.json_response({"kind": "Echo", "path": request.path_qs})

    async def start(self):
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.cert, self.key)
        ctx.load_verify_locations(cadata=self.requestheader_ca.decode())
        ctx.verify_mode = ssl.CERT_REQUIRED  # only the front proxy may call
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        # the sandbox keeps checking availability over keep-alive: do not wait for it on stop
        self.runner = web.AppRunner(app, shutdown_timeout=0.2)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0, ssl_context=ctx)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]

    async def stop(self):
        await self.runner.cleanup()


RELAY = f"/apis/{GROUP}/{VERSION}/namespaces/default/relay/"
BODY = json.dumps({"kind": "Relayed", "items": [{"n": i} for i in range(50)]}).encode()
WATCH_GO = asyncio.Event()


async def relay_answer(request: web.Request, kind: str) -> web.StreamResponse:
    """Answers of every shape the proxy relays: with a length, streamed, compressed, an error."""
    headers = {"X-Backend": "yes", "Content-Type": "application/json; charset=utf-8"}
    if kind == "whole":
        return web.Response(body=BODY, headers=headers)
    if kind == "error":
        status = {"kind": "Status", "code": 404, "reason": "NotFound"}
        return web.Response(status=404, body=json.dumps(status).encode(), headers=headers)
    if kind == "gzip":
        return web.Response(
            body=gzip.compress(BODY), headers={**headers, "Content-Encoding": "gzip"}
        )
    response = web.StreamResponse(headers=headers)  # chunked: no length known in advance
    await response.prepare(request)
    if kind == "watch":  # the second event only once the client has read the first
        await response.write(b'{"type": "ADDED"}\n')
        await WATCH_GO.wait()
        await response.write(b'{"type": "DELETED"}\n')
        await response.write_eof()
        return response
    for i in range(0, len(BODY), 100):
        await response.write(BODY[i : i + 100])
    await response.write_eof()
    return response


POLICY = parse_policy(
    {
        "users": [
            {
                "name": "alice",
                "token": "alice-token",
                "groups": ["devs"],
                "extra": {"scopes": ["read"]},
            },
            {"name": "eve", "token": "eve-token"},
        ],
        "rules": [
            {
                "groups": ["devs"],
                "verbs": ["get", "list", "watch"],
                "apiGroups": [GROUP],
                "resources": ["*"],
            },
            {
                "groups": ["system:authenticated"],
                "verbs": ["get"],
                "nonResourceURLs": ["/apis", "/apis/*"],
            },
        ],
    }
)


async def register(http, backend, *, ca=True, endpoints=True):
    svc = {
        "metadata": {"name": "backend"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": backend.port}]},
    }
    assert (await http.request("POST", "/api/v1/namespaces/default/services", json=svc))[0] == 201
    if endpoints:
        ep = {
            "metadata": {"name": "backend"},
            "subsets": [
                {
                    "addresses": [{"ip": "127.0.0.1"}],
                    "ports": [{"name": "https", "port": backend.port}],
                }
            ],
        }
        assert (await http.request("POST", "/api/v1/namespaces/default/endpoints", json=ep))[
            0
        ] == 201
    spec = {
        "group": GROUP,
        "version": VERSION,
        "service": {"namespace": "default", "name": "backend", "port": 443},
        "groupPriorityMinimum": 100,
        "versionPriority": 100,
    }
    if ca:
        spec["caBundle"] = base64.b64encode(backend.ca.cert_pem).decode()
    else:
        spec["insecureSkipTLSVerify"] = True
    body = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"{VERSION}.{GROUP}"},
        "spec": spec,
    }
    status, created = await http.request(
        "POST", "/apis/apiregistration.k8s.io/v1/apiservices", json=body
    )
    assert status == 201, created


async def available(http, want="True", timeout=5.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        _, obj = await http.request(
            "GET", f"/apis/apiregistration.k8s.io/v1/apiservices/{VERSION}.{GROUP}"
        )
        cond = next(
            (
                c
                for c in (obj.get("status") or {}).get("conditions") or []
                if c["type"] == "Available"
            ),
            None,
        )
        if cond and cond["status"] == want:
            return cond
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"APIService condition {cond}")
        await asyncio.sleep(0.05)


@pytest.fixture
async def setup(sandbox_factory, tmp_path):
    sb = await sandbox_factory(policy=POLICY, availability_interval=0.2)
    backend = Backend(tmp_path, sb.requestheader_ca_file.read_bytes())
    await backend.start()
    admin = SandboxHttp(sb)
    alice = SandboxHttp(sb, token="alice-token")
    yield sb, backend, admin, alice
    await admin.close()
    await alice.close()
    await sb.stop()  # first, so that no availability check races the backend's shutdown
    await backend.stop()


@pytest.mark.parametrize("ca", [True, False], ids=["ca-bundle", "insecure-skip-verify"])
async def test_proxied_request_carries_front_proxy_cert_and_identity(setup, ca):
    _sb, backend, admin, alice = setup
    await register(admin, backend, ca=ca)
    await available(admin)
    status, body = await alice.request(
        "GET",
        f"/apis/{GROUP}/{VERSION}/namespaces/default/pods/*/rps?labelSelector=app%3Dweb",
        headers={"X-Remote-User": "mallory", "X-Remote-Group": "system:masters"},
    )
    assert status == 200, body
    assert body == {  # the wildcard escaped, as Go writes a path (see the test below)
        "kind": "Echo",
        "path": f"/apis/{GROUP}/{VERSION}/namespaces/default/pods/%2A/rps?labelSelector=app%3Dweb",
    }
    seen = backend.seen[-1]
    assert seen["cn"] == "front-proxy-client"
    assert seen["user"] == ["alice"]  # the caller's spoofed header was dropped
    assert seen["groups"] == ["devs", "system:authenticated"]
    assert seen["extra"] == {"X-Remote-Extra-scopes": "read"}
    assert seen["authorization"] is None  # the caller's token never reaches the backend


async def test_the_backend_gets_the_path_and_query_as_kube_aggregator_rewrites_them(setup):
    """kube-aggregator forwards the decoded path and the parsed query re-encoded by Go: the
    wildcard as %2A, parameters sorted by name, escapes in upper case, spaces as '+'."""
    _sb, backend, admin, alice = setup
    await register(admin, backend, ca=True)
    await available(admin)
    raw = (
        f"/apis/{GROUP}/{VERSION}/namespaces/default/pods/*/rps"
        "?metricLabelSelector=q%3D1&labelSelector=app%3dweb%2cenv+in+(a,b)"
    )
    forwarded = (
        f"/apis/{GROUP}/{VERSION}/namespaces/default/pods/%2A/rps"
        "?labelSelector=app%3Dweb%2Cenv+in+%28a%2Cb%29&metricLabelSelector=q%3D1"
    )
    url = URL(alice.sb.url + raw, encoded=True)  # sent as written, not re-quoted
    headers = {"Authorization": f"Bearer {alice.token}"}
    async with alice.session.get(url, headers=headers) as resp:
        assert resp.status == 200, await resp.text()
    assert backend.seen[-1]["raw"] == forwarded


async def test_the_sandbox_authorizes_before_proxying(setup):
    sb, backend, admin, _ = setup
    await register(admin, backend)
    await available(admin)
    for token, want in (("", 401), ("eve-token", 403)):
        caller = SandboxHttp(sb, token=token)
        try:
            status, _ = await caller.request(
                "GET", f"/apis/{GROUP}/{VERSION}/namespaces/default/pods/*/rps"
            )
        finally:
            await caller.close()
        assert status == want
    paths = [s["path"] for s in backend.seen]
    assert all(p == f"/apis/{GROUP}/{VERSION}" for p in paths)  # only availability checks


async def test_group_is_listed_once_available(setup):
    _, backend, admin, alice = setup
    await register(admin, backend)
    await available(admin)
    _, groups = await alice.request("GET", "/apis")
    assert GROUP in [g["name"] for g in groups["groups"]]
    status, group = await alice.request("GET", f"/apis/{GROUP}")
    assert status == 200
    assert group["preferredVersion"]["version"] == VERSION


async def test_unavailable_reasons(setup):
    _, backend, admin, _ = setup
    await register(admin, backend, endpoints=False)
    cond = await available(admin, want="False")
    assert cond["reason"] == "EndpointsNotFound"
    await admin.request("DELETE", "/api/v1/namespaces/default/services/backend")
    for _ in range(100):
        cond = await available(admin, want="False")
        if cond["reason"] == "ServiceNotFound":
            break
        await asyncio.sleep(0.05)
    assert cond["reason"] == "ServiceNotFound"
    status, body = await admin.request("GET", f"/apis/{GROUP}/{VERSION}/anything")
    assert status == 503
    assert body["reason"] == "ServiceUnavailable"


async def test_backend_failing_discovery_is_failed_discovery_check(setup):
    _, backend, admin, _ = setup
    backend.ca = make_ca("some-other-ca", now=datetime.now(UTC))  # the caBundle will not verify
    await register(admin, backend)
    cond = await available(admin, want="False")
    assert cond["reason"] == "FailedDiscoveryCheck"


async def test_extension_apiserver_authentication_configmap(setup):
    sb, _, admin, _ = setup
    _, cm = await admin.request(
        "GET", "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
    )
    data = cm["data"]
    assert data["requestheader-client-ca-file"] == sb.requestheader_ca_file.read_text()
    assert data["client-ca-file"] == sb.client_ca_file.read_text()
    assert json.loads(data["requestheader-allowed-names"]) == ["front-proxy-client"]
    assert json.loads(data["requestheader-username-headers"]) == ["X-Remote-User"]
    assert json.loads(data["requestheader-group-headers"]) == ["X-Remote-Group"]
    assert json.loads(data["requestheader-extra-headers-prefix"]) == ["X-Remote-Extra-"]


async def test_rotating_the_requestheader_ca(setup, tmp_path):
    sb, backend, admin, alice = setup
    old_ca = sb.requestheader_ca_file.read_bytes()
    await sb.rotate_requestheader_ca()
    new_ca = sb.requestheader_ca_file.read_bytes()
    assert new_ca != old_ca
    _, cm = await admin.request(
        "GET", "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
    )
    assert cm["data"]["requestheader-client-ca-file"] == new_ca.decode()
    front = x509.load_pem_x509_certificate(sb.pki.front_proxy_cert.read_bytes())
    front.verify_directly_issued_by(x509.load_pem_x509_certificate(new_ca))
    # a backend still trusting the old CA refuses the new front-proxy certificate
    await register(admin, backend)
    status, _ = await alice.request("GET", f"/apis/{GROUP}/{VERSION}/x")
    assert status == 503
    # one that reloaded the CA accepts it
    fresh = Backend(tmp_path, new_ca)
    await fresh.start()
    try:
        backend.port = fresh.port
        ep = {
            "subsets": [
                {
                    "addresses": [{"ip": "127.0.0.1"}],
                    "ports": [{"name": "https", "port": fresh.port}],
                }
            ]
        }
        await admin.request(
            "PATCH",
            "/api/v1/namespaces/default/endpoints/backend",
            data=json.dumps(ep),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        patch = {"spec": {"caBundle": base64.b64encode(fresh.ca.cert_pem).decode()}}
        await admin.request(
            "PATCH",
            f"/apis/apiregistration.k8s.io/v1/apiservices/{VERSION}.{GROUP}",
            data=json.dumps(patch),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        status, _ = await alice.request("GET", f"/apis/{GROUP}/{VERSION}/x")
        assert status == 200
        assert fresh.seen[-1]["cn"] == "front-proxy-client"
    finally:
        await fresh.stop()


async def test_backend_found_through_endpointslices(setup):
    _, backend, admin, alice = setup
    await register(admin, backend, endpoints=False)
    slice_ = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "backend-abc", "labels": {"kubernetes.io/service-name": "backend"}},
        "addressType": "IPv4",
        "endpoints": [
            {"addresses": ["127.0.0.2"], "conditions": {"ready": False}},
            {"addresses": ["127.0.0.1"], "conditions": {"ready": True}},
        ],
        "ports": [{"name": "https", "port": backend.port, "protocol": "TCP"}],
    }
    status, _ = await admin.request(
        "POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", json=slice_
    )
    assert status == 201
    await available(admin)
    status, body = await alice.request("GET", f"/apis/{GROUP}/{VERSION}/namespaces/default/things")
    assert status == 200
    assert body["kind"] == "Echo"


@pytest.mark.parametrize(
    ("kind", "status", "body"),
    [
        pytest.param("whole", 200, BODY, id="known-length-in-one-write"),
        pytest.param("stream", 200, BODY, id="chunked-streamed"),
        pytest.param("gzip", 200, BODY, id="compressed-arrives-plain"),
        pytest.param(
            "error", 404, b'{"kind": "Status", "code": 404, "reason": "NotFound"}', id="error"
        ),
    ],
)
async def test_answers_are_relayed_as_the_backend_sent_them(setup, kind, status, body):
    _sb, backend, admin, alice = setup
    await register(admin, backend)
    await available(admin)
    headers = {"Authorization": "Bearer alice-token"}
    async with alice.session.get(alice.sb.url + RELAY + kind, headers=headers) as resp:
        got = await resp.read()
        assert (resp.status, got) == (status, body)
        assert resp.headers["X-Backend"] == "yes"
        assert resp.headers["Content-Type"] == "application/json; charset=utf-8"
        assert resp.headers.getall("Content-Type") == ["application/json; charset=utf-8"]
        assert "Content-Encoding" not in resp.headers


async def test_a_watch_is_relayed_as_it_comes(setup):
    # a watch is streamed through, event by event: the backend sends its second event only
    # after the client has read the first through the proxy
    _sb, backend, admin, alice = setup
    await register(admin, backend)
    await available(admin)
    WATCH_GO.clear()
    headers = {"Authorization": "Bearer alice-token"}
    url = alice.sb.url + RELAY + "watch?watch=true"
    async with asyncio.timeout(10), alice.session.get(url, headers=headers) as resp:
        assert resp.status == 200
        assert await resp.content.readline() == b'{"type": "ADDED"}\n'
        WATCH_GO.set()
        assert await resp.content.readline() == b'{"type": "DELETED"}\n'


async def test_a_backend_that_stops_answering_is_a_503(setup):
    _sb, backend, admin, alice = setup
    await register(admin, backend)
    await available(admin)
    await backend.stop()  # the APIService still says Available until the next check
    status, body = await alice.request("GET", f"/apis/{GROUP}/{VERSION}/namespaces/default/x")
    assert status == 503
    assert "error trying to reach service" in body["message"], body
