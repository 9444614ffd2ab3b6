"""Several Prometheus backends: two real servers, one rule on each, and one stopped or killed;
headers, credentials and query parameters as they arrive on the wire."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import ssl
import statistics
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from aiohttp import web

from adapter.backends import BackendPool
from adapter.errors import ConfigError
from adapter.prometheus import PrometheusOptions
from adapter.provider.rules_engine import load_engine
from adapter.rules.resources import STATIC_RESOLVER
from adapter.server.app import build_app
from sandbox.certs import issue, make_ca
from tests.adapter.stack import Adapter, series
from tests.support.prometheus import PrometheusServer, free_port, remote_write

CM = "/apis/custom.metrics.k8s.io/v1beta2"
RULE = """
- seriesQuery: '{name}{{namespace!="",pod!=""}}'
  resources: {{overrides: {{namespace: {{resource: namespace}}, pod: {{resource: pod}}}}}}
  metricsQuery: 'sum(<<.Series>>{{<<.LabelMatchers>>}}) by (<<.GroupBy>>)'{extra}"""


def rules(b_url: str, *, extra_b: str = "") -> str:
    return (
        f"backends:\n  b: {{url: '{b_url}'{extra_b}}}\nrules:"
        + RULE.format(name="gauge_a", extra="")
        + RULE.format(name="gauge_b", extra="\n  backend: b")
    )


@pytest.fixture
def second_prometheus(tmp_path) -> Iterator[PrometheusServer]:
    workdir = tmp_path / "prometheus-b"
    workdir.mkdir()
    server = PrometheusServer(workdir)
    server.start()
    try:
        yield server
    finally:
        if server.pid is not None:
            os.kill(server.pid, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
        server.close()


async def _timed(client, path: str, want: int) -> float:
    started = time.perf_counter()
    resp = await client.get(path)
    assert resp.status == want, await resp.text()
    await resp.read()
    return time.perf_counter() - started


@pytest.mark.prometheus
async def test_a_stopped_or_killed_backend_affects_only_its_own_rules(
    aiohttp_client, prometheus, second_prometheus
):
    await remote_write(
        prometheus.url, [series("gauge_a", {"namespace": "default", "pod": "web-1"}, [3])]
    )
    await remote_write(
        second_prometheus.url, [series("gauge_b", {"namespace": "default", "pod": "web-1"}, [4])]
    )
    # b's hang costs `hang` seconds per call; a request to a that waited on b would take about
    # that long, so the bounds below sit at half of it: far above a slow machine's hiccup.
    hang = 2.0
    adapter = Adapter(prometheus.url, rules(second_prometheus.url), timeout=hang)
    await adapter.discover()
    client = await aiohttp_client(build_app(adapter.provider, registry=adapter.registry))
    a_path, b_path = (
        f"{CM}/namespaces/default/pods/web-1/gauge_a",
        f"{CM}/namespaces/default/pods/web-1/gauge_b",
    )
    body = await (await client.get(b_path)).json()
    assert body["items"][0]["value"] == "4"  # served from the second server
    before = [await _timed(client, a_path, 200) for _ in range(15)]

    second_prometheus.signal(signal.SIGSTOP)  # hung: accepts connections, never answers
    hung_b = asyncio.ensure_future(_timed(client, b_path, 503))  # in flight while we measure a
    during = [await _timed(client, a_path, 200) for _ in range(15)]
    assert not hung_b.done()  # a's 15 answers all came while b's call was still hanging
    assert hang * 0.95 <= await hung_b < hang * 1.5  # its own timeout, then 503
    relist = asyncio.ensure_future(adapter.discover())  # b's relist times out meanwhile
    during += [await _timed(client, a_path, 200) for _ in range(15)]
    await relist
    listed = {r["name"] for r in (await (await client.get(CM)).json())["resources"]}
    assert {"pods/gauge_a", "pods/gauge_b"} <= listed  # b keeps its last good list
    assert adapter.metric("promscaler_adapter_discovery_stale_series_queries", 'backend="b"') == 1
    assert (
        adapter.metric("promscaler_adapter_discovery_stale_series_queries", 'backend="default"')
        == 0
    )
    assert (await client.get("/readyz")).status == 200

    os.kill(second_prometheus.pid, signal.SIGKILL)  # gone: connections refused
    assert await _timed(client, b_path, 503) < hang / 2  # refused at once, no timeout
    during += [await _timed(client, a_path, 200) for _ in range(15)]
    # no added latency: a's requests never waited on b
    assert max(during) < hang / 2, during
    assert statistics.median(during) < statistics.median(before) + 0.05, (before, during)
    assert (
        adapter.metric(
            "promscaler_adapter_prometheus_errors_total",
            'backend="b",endpoint="query",kind="timeout"',
        )
        == 1
    )
    assert (
        adapter.metric(
            "promscaler_adapter_prometheus_errors_total",
            'backend="default",endpoint="query",kind="timeout"',
        )
        == 0
    )
    await adapter.pool.close()


@pytest.fixture
async def recorder(aiohttp_server):
    """A stand-in backend that records each request and answers like Prometheus."""
    seen: list[dict[str, object]] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(
            {"path": request.path, "query": dict(request.query), "headers": dict(request.headers)}
        )
        if request.path.endswith("/series"):
            data: object = [{"__name__": "gauge_b", "namespace": "default", "pod": "web-1"}]
        else:
            data = {
                "resultType": "vector",
                "result": [{"metric": {"pod": "web-1"}, "value": [time.time(), "9"]}],
            }
        return web.json_response({"status": "success", "data": data})

    app = web.Application()
    app.router.add_get("/prefix/api/v1/{endpoint}", handler)
    server = await aiohttp_server(app)
    server.seen = seen
    return server


async def test_headers_credentials_and_query_parameters_arrive_on_the_wire(
    aiohttp_client, recorder, tmp_path, caplog
):
    password = tmp_path / "password"
    password.write_text("pa55-word\n")
    extra = (
        ", headers: {X-Scope-OrgID: team-a}"
        ", queryParameters: {dedup: 'true', partial_response: 'false'}"
        f", basicAuth: {{username: adapter, passwordFile: '{password}'}}"
    )
    url = str(recorder.make_url("/prefix"))
    adapter = Adapter("http://127.0.0.1:9", rules(url, extra_b=extra))
    await adapter.discover()
    client = await aiohttp_client(build_app(adapter.provider, registry=adapter.registry))
    resp = await client.get(f"{CM}/namespaces/default/pods/web-1/gauge_b")
    assert (await resp.json())["items"][0]["value"] == "9"
    series_call, query_call = recorder.seen
    assert series_call["path"] == "/prefix/api/v1/series"
    for call in (series_call, query_call):
        assert call["headers"]["X-Scope-OrgID"] == "team-a"
        assert (
            call["headers"]["Authorization"]
            == "Basic " + base64.b64encode(b"adapter:pa55-word").decode()
        )
        assert call["query"]["dedup"] == "true"
        assert call["query"]["partial_response"] == "false"
    assert "gauge_b{" in query_call["query"]["query"]
    # the default backend (nothing listens on port 9) failed its relist; b was not affected
    assert adapter.metric("promscaler_adapter_discovery_failures_total", 'backend="default"') == 1
    assert "pa55-word" not in caplog.text
    await adapter.pool.close()


@pytest.mark.parametrize(
    ("setting", "want"),
    [
        pytest.param(
            "bearerTokenFile: '{dir}/missing'",
            "cfg: backends.b.bearerTokenFile: cannot read {dir}/missing: No such file or directory",
            id="token-file",
        ),
        pytest.param(
            "basicAuth: {{username: u, passwordFile: '{dir}/missing'}}",
            "cfg: backends.b.basicAuth: cannot read {dir}/missing: No such file or directory",
            id="password-file",
        ),
        pytest.param(
            "tls: {{caFile: '{dir}/missing-ca.pem'}}",
            "cfg: backends.b.tls: prometheus TLS settings: [Errno 2] No such file or directory",
            id="ca-file",
        ),
    ],
)
async def test_an_unreadable_backend_file_is_a_located_error(tmp_path, setting, want):
    extra = ", " + setting.format(dir=tmp_path)
    text = rules("http://127.0.0.1:9", extra_b=extra)
    engine = load_engine(text, source="cfg", resolver=STATIC_RESOLVER)
    pool = BackendPool(PrometheusOptions(url="http://127.0.0.1:9"), registry=None)
    with pytest.raises(ConfigError) as caught:
        pool.apply(engine.config.backends)
    assert str(caught.value) == want.format(dir=tmp_path)
    assert pool.names == ("default",)  # nothing changed
    await pool.close()


@pytest.fixture
async def tls_backend(tmp_path):
    """An HTTPS stand-in that requires a client certificate from its CA (mutual TLS)."""
    now = datetime.now(UTC)
    ca = make_ca("backend-ca", now=now)
    server_cert, server_key = issue(
        ca, "backend", now=now, hosts=("127.0.0.1",), server=True
    ).write(tmp_path, "server")
    client_cert, client_key = issue(ca, "adapter", now=now, client=True).write(tmp_path, "client")
    (tmp_path / "ca.crt").write_bytes(ca.cert_pem)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(tmp_path / "ca.crt"))
    ctx.load_cert_chain(server_cert, server_key)
    ctx.verify_mode = ssl.CERT_REQUIRED

    async def handler(request: web.Request) -> web.Response:
        if request.path.endswith("/series"):
            data: object = [{"__name__": "gauge_b", "namespace": "default", "pod": "web-1"}]
        else:
            value = [time.time(), "5"]
            data = {
                "resultType": "vector",
                "result": [{"metric": {"pod": "web-1"}, "value": value}],
            }
        return web.json_response({"status": "success", "data": data})

    app = web.Application()
    app.router.add_get("/api/v1/{endpoint}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=ctx).start()
    files = {"ca": tmp_path / "ca.crt", "cert": client_cert, "key": client_key}
    yield f"https://127.0.0.1:{port}", files
    await runner.cleanup()


@pytest.mark.parametrize("with_ca", [True, False], ids=["verified", "unknown-ca"])
async def test_a_tls_backend_with_a_client_certificate(aiohttp_client, tls_backend, with_ca):
    url, files = tls_backend
    ca = f"caFile: '{files['ca']}', " if with_ca else ""
    extra = f", tls: {{{ca}certFile: '{files['cert']}', keyFile: '{files['key']}'}}"
    adapter = Adapter("http://127.0.0.1:9", rules(url, extra_b=extra))
    await adapter.discover()
    client = await aiohttp_client(build_app(adapter.provider, registry=adapter.registry))
    resp = await client.get(f"{CM}/namespaces/default/pods/web-1/gauge_b")
    if with_ca:
        assert (await resp.json())["items"][0]["value"] == "5"
    else:  # the system CAs do not know it: discovery found nothing, so the metric is unknown
        assert resp.status == 404
        failed = 'backend="b",endpoint="series",kind="unavailable"'
        assert adapter.metric("promscaler_adapter_prometheus_errors_total", failed) == 1
    await adapter.pool.close()
