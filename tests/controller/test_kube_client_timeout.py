"""The controller's API client bounds every request: a server that accepts and never answers
is a KubeUnavailable after the client's timeout, or after the one a call asks for."""

from __future__ import annotations

import asyncio
import time

import pytest

from autoscaler.kube.client import KubeUnavailable, NotFound, connect

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""


@pytest.fixture
async def silent_server():
    """Accepts connections, reads what it is sent, never answers."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        await reader.read(65536)
        await asyncio.sleep(3600)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    for writer in held:
        writer.close()
    server.close()


async def _elapsed(call) -> float:
    started = time.monotonic()
    with pytest.raises(KubeUnavailable):
        await call
    return time.monotonic() - started


async def test_a_silent_server_is_unavailable_after_the_timeout(silent_server, tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG.format(port=silent_server))
    client = await connect(str(path), request_timeout=0.4)
    try:
        # twice: the second request's timeout is the same (shared) object, and still bounds
        for _ in range(2):
            took = await _elapsed(client.request("GET", "/apis/promscaler.dev/v1alpha1"))
            assert 0.35 <= took < 3.0
        # a call's own timeout wins over the client's
        took = await _elapsed(client.request("GET", "/api", request_timeout=1.2))
        assert 1.1 <= took < 4.0
    finally:
        await client.close()


async def test_requests_go_over_one_kept_alive_tls_connection(sandbox, monkeypatch):
    # the sandbox's kubeconfig: its CA, a bearer token, https; no proxy anywhere (NO_PROXY
    # alone names no proxy)
    for variable in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("all_proxy", raising=False)
    monkeypatch.setenv("NO_PROXY", "example.com")
    client = await connect(str(sandbox.kubeconfig))
    try:
        assert client._origin is not None
        for _ in range(3):
            doc = await client.request("GET", "/api/v1/namespaces/default")
            assert doc["metadata"]["name"] == "default"
        with pytest.raises(NotFound):
            await client.request("GET", "/api/v1/namespaces/absent")
        created = await client.request(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            body={"metadata": {"name": "c1"}, "data": {"a": "1"}},
        )
        assert created["data"] == {"a": "1"}
        assert client._origin.connections_made == 1
    finally:
        await client.close()


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "https_proxy", "ALL_PROXY"])
async def test_a_proxy_in_the_environment_keeps_requests_on_the_library_session(
    sandbox, monkeypatch, variable
):
    monkeypatch.setenv(variable, "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the sandbox itself is reached directly
    client = await connect(str(sandbox.kubeconfig))
    try:
        assert client._origin is None
        doc = await client.request("GET", "/api/v1/namespaces/default")
        assert doc["metadata"]["name"] == "default"
    finally:
        await client.close()


async def test_a_kubeconfig_proxy_url_keeps_requests_on_the_library_session(sandbox, tmp_path):
    text = sandbox.kubeconfig.read_text()
    assert "server: " in text
    path = tmp_path / "kubeconfig"
    path.write_text(text.replace("server: ", "proxy-url: http://127.0.0.1:9\n    server: ", 1))
    client = await connect(str(path))
    try:
        assert client._origin is None
        with pytest.raises(KubeUnavailable):  # the proxy is not there: unavailable
            await client.request("GET", "/api/v1/namespaces/default", request_timeout=2)
    finally:
        await client.close()
