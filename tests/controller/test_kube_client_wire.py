"""What the controller's API client puts on the wire, seen by a server that records it.

The client sends through kubernetes-asyncio's session but not through `call_api`, so this pins
what `call_api` used to guarantee: the bearer token (and its refresh hook), the User-Agent, the
path and query exactly as built, the JSON body, and a kubeconfig `proxy-url`."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from autoscaler.kube.client import MERGE_PATCH, KubeClient, connect

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "{server}"{extra}}}}}]
users: [{{name: u, user: {{token: first-token}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""


@pytest.fixture
async def recorder():
    """A server answering every request with a JSON echo of what it received."""
    seen: list[dict] = []

    async def echo(request: web.Request) -> web.Response:
        body = await request.read()
        record = {
            "method": request.method,
            "raw_path": request.raw_path,
            "path_qs": request.path_qs,
            "host": request.host,
            "query": list(request.query.items()),
            "headers": dict(request.headers),
            "body": json.loads(body) if body else None,
        }
        seen.append(record)
        return web.json_response({"kind": "Echo", "n": len(seen)})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", echo)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield port, seen
    await runner.cleanup()


async def _client(tmp_path, server: str, extra: str = "") -> KubeClient:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG.format(server=server, extra=extra))
    return await connect(str(path), request_timeout=5.0)


async def test_token_agent_path_query_and_body_arrive_as_built(recorder, tmp_path):
    port, seen = recorder
    client = await _client(tmp_path, f"http://127.0.0.1:{port}")
    client.set_user_agent("promscaler-autoscaler/test (replica-7)")
    try:
        answer = await client.request(
            "GET",
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/n%2Fx/pods/%2A/rps",
            query=[("labelSelector", "app in (a,b),tier!=db"), ("metricLabelSelector", "q=é")],
        )
        assert answer == {"kind": "Echo", "n": 1}
        body = {"status": {"replicas": 3, "note": "naïve ✓", "ratio": 0.25}, 7: "seven"}
        await client.request(
            "PATCH",
            "/apis/promscaler.dev/v1alpha1/namespaces/n/autoscalers/a/status",
            body=body,
            content_type=MERGE_PATCH,
        )
    finally:
        await client.close()

    get, patch = seen
    assert get["method"] == "GET"
    # percent-encoded segments are sent as built, not decoded or encoded again
    assert get["raw_path"].startswith(
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/n%2Fx/pods/%2A/rps?"
    )
    assert get["query"] == [
        ("labelSelector", "app in (a,b),tier!=db"),
        ("metricLabelSelector", "q=é"),
    ]
    for r in (get, patch):
        assert r["headers"]["Authorization"] == "Bearer first-token"
        assert r["headers"]["User-Agent"] == "promscaler-autoscaler/test (replica-7)"
        assert r["headers"]["Accept"] == "application/json"
    assert get["headers"]["Content-Type"] == "application/json"
    assert patch["method"] == "PATCH"
    assert patch["headers"]["Content-Type"] == MERGE_PATCH
    # as json.dumps would have sent it: the non-string key becomes a string
    assert patch["body"] == {
        "status": {"replicas": 3, "note": "naïve ✓", "ratio": 0.25},
        "7": "seven",
    }


async def test_the_refresh_hook_is_asked_before_every_request(recorder, tmp_path):
    # in-cluster, kubernetes-asyncio re-reads the projected token through this hook
    port, seen = recorder
    client = await _client(tmp_path, f"http://127.0.0.1:{port}")
    tokens = iter(["rotated-1", "rotated-2"])

    def refresh(configuration) -> None:  # as kubernetes-asyncio's loaders store it
        configuration.api_key["BearerToken"] = f"Bearer {next(tokens)}"

    client._api.configuration.refresh_api_key_hook = refresh
    try:
        await client.request("GET", "/api")
        await client.request("GET", "/api")
    finally:
        await client.close()
    assert [r["headers"]["Authorization"] for r in seen] == ["Bearer rotated-1", "Bearer rotated-2"]


async def test_a_kubeconfig_proxy_url_carries_the_request(recorder, tmp_path):
    # the server's name does not resolve: only the proxy can have answered
    port, seen = recorder
    client = await _client(
        tmp_path, "http://kube.invalid:6443", extra=f', proxy-url: "http://127.0.0.1:{port}"'
    )
    try:
        answer = await client.request("GET", "/apis/promscaler.dev/v1alpha1")
    finally:
        await client.close()
    assert answer["kind"] == "Echo"
    (r,) = seen
    assert r["headers"]["Host"] == "kube.invalid:6443"  # addressed to the API server
    assert r["raw_path"].endswith("/apis/promscaler.dev/v1alpha1")
    assert r["headers"]["Authorization"] == "Bearer first-token"
