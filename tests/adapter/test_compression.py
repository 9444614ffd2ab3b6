"""The Accept-Encoding asked of each Prometheus backend: gzip across a network, none on
loopback by default; a backend's `compression:` and the flag override it."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from adapter.backends import backend_options
from adapter.prometheus import PrometheusClient, PrometheusOptions
from adapter.prometheus_auth import accept_encoding
from adapter.rules import RuleError, load_rules

VECTOR = {
    "status": "success",
    "data": {"resultType": "vector", "result": [{"metric": {"pod": "a"}, "value": [1, "2"]}]},
}


@pytest.mark.parametrize(
    ("compression", "url", "want"),
    [
        ("auto", "http://127.0.0.1:9090", "identity"),
        ("auto", "http://127.8.9.1:9090", "identity"),
        ("auto", "https://localhost:9090", "identity"),
        ("auto", "http://[::1]:9090", "identity"),
        ("auto", "https://prometheus.monitoring.svc:9090", "gzip"),
        ("auto", "http://10.0.0.7:9090", "gzip"),
        ("gzip", "http://127.0.0.1:9090", "gzip"),
        ("none", "https://thanos.example:443", "identity"),
    ],
    ids=["v4-loopback", "v4-loopback-net", "localhost", "v6-loopback", "service-name",
         "pod-ip", "gzip-forced", "none-forced"],
)  # fmt: skip
def test_accept_encoding_by_setting_and_host(compression: str, url: str, want: str) -> None:
    assert accept_encoding(compression, url) == want


@pytest.mark.parametrize("compression", ["none", "gzip"])
async def test_the_header_is_sent_and_a_gzip_answer_is_read(aiohttp_server, compression) -> None:
    """The fake Prometheus compresses when asked, as the real one does."""
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Accept-Encoding", ""))
        response = web.Response(text=json.dumps(VECTOR), content_type="application/json")
        response.enable_compression()  # only when the request accepts gzip
        return response

    app = web.Application()
    app.router.add_get("/api/v1/query", handler)
    server = await aiohttp_server(app)
    url = str(server.make_url("")).rstrip("/")
    client = PrometheusClient(PrometheusOptions(url=url, compression=compression))
    try:
        samples = await client.query("up")
    finally:
        await client.close()
    assert [str(s.value) for s in samples] == ["2"]
    assert seen == ["gzip" if compression == "gzip" else "identity"]


def _backends(extra: str) -> str:
    return f"backends:\n  thanos: {{url: 'https://thanos:9090'{extra}}}\nrules: []\n"


def test_a_backend_sets_its_own_compression_else_the_flags() -> None:
    defaults = PrometheusOptions(url="http://127.0.0.1:9090", compression="none")
    own = load_rules(_backends(", compression: gzip")).backends["thanos"]
    inherited = load_rules(_backends("")).backends["thanos"]
    assert backend_options(own, defaults=defaults).compression == "gzip"
    assert backend_options(inherited, defaults=defaults).compression == "none"


def test_an_unknown_compression_is_a_located_error() -> None:
    with pytest.raises(RuleError, match=r"backends\.thanos\.compression: must be one of auto"):
        load_rules(_backends(", compression: zstd"))
