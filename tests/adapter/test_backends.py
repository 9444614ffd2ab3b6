"""Several Prometheus backends: two real servers, one rule on each, and one stopped or killed;
headers, credentials and query parameters as they arrive on the wire."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import statistics
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest

from adapter.backends import BackendPool
from adapter.errors import ConfigError
from adapter.prometheus import PrometheusOptions
from adapter.provider.cache import ResultCache
from adapter.provider.discovery import Discovery, DiscoveryOptions
from adapter.provider.prometheus_provider import PrometheusProvider
from adapter.provider.rules_engine import load_engine
from adapter.rules.resources import STATIC_RESOLVER
from adapter.server.app import build_app
from tests.adapter.fakes import FakeLister
from tests.adapter.stack import series
from tests.support.prometheus import PrometheusServer, remote_write

CM = "/apis/custom.metrics.k8s.io/v1beta2"
PODS = {("pods", "default"): {"web-1": {"app": "web"}}}
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


class Adapter:
    """The in-process adapter over a BackendPool: the wiring of `adapter.__main__`."""

    def __init__(
        self, default_url: str, text: str, *, timeout: float = 1.0, max_age: float = 3600
    ) -> None:
        self.registry = CollectorRegistry()
        self.engine = load_engine(text, source="test", resolver=STATIC_RESOLVER)
        self.pool = BackendPool(
            PrometheusOptions(url=default_url, timeout=timeout), registry=self.registry
        )
        self.pool.apply(self.engine.config.backends)
        options = DiscoveryOptions(interval=1, max_age=max_age, timeout=timeout)
        self.discovery = Discovery(self.pool, self.engine, options=options, registry=self.registry)
        self.resolver = STATIC_RESOLVER
        self.lister = FakeLister(dict(PODS))
        self.provider = PrometheusProvider(
            backends=self.pool,
            discovery=self.discovery,
            resolver=STATIC_RESOLVER,
            lister=self.lister,
            cache=ResultCache(ttl=0),
            registry=self.registry,
        )

    async def discover(self) -> None:
        await self.discovery.run_once(now=datetime.now(UTC))

    def metric(self, name: str, labels: str) -> float:
        for line in generate_latest(self.registry).decode().splitlines():
            if line.startswith(f"{name}{{{labels}}} " if labels else f"{name} "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0


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
    adapter = Adapter(prometheus.url, rules(second_prometheus.url))
    await adapter.discover()
    client = await aiohttp_client(build_app(adapter.provider, registry=adapter.registry))
    a_path, b_path = (
        f"{CM}/namespaces/default/pods/web-1/gauge_a",
        f"{CM}/namespaces/default/pods/web-1/gauge_b",
    )
    body = await (await client.get(b_path)).json()
    assert body["items"][0]["value"] == "4"  # served from the second server
    before = [await _timed(client, a_path, 200) for _ in range(15)]

    os.kill(second_prometheus.pid, signal.SIGSTOP)  # hung: accepts connections, never answers
    hung_b = asyncio.ensure_future(_timed(client, b_path, 503))  # in flight while we measure a
    during = [await _timed(client, a_path, 200) for _ in range(15)]
    assert await hung_b < 1.5  # its own timeout (1 s), then 503
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
    assert await _timed(client, b_path, 503) < 0.5
    during += [await _timed(client, a_path, 200) for _ in range(15)]
    # no added latency: a's requests never waited on b (b's hang was 1 s per call)
    assert max(during) < 0.5, during
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


async def test_an_unreadable_backend_credential_is_a_located_error(tmp_path):
    extra = f", bearerTokenFile: '{tmp_path}/missing-token'"
    engine = load_engine(
        rules("http://127.0.0.1:9", extra_b=extra), source="cfg", resolver=STATIC_RESOLVER
    )
    pool = BackendPool(PrometheusOptions(url="http://127.0.0.1:9"), registry=None)
    with pytest.raises(ConfigError) as caught:
        pool.apply(engine.config.backends)
    missing = f"{tmp_path}/missing-token"
    want = f"cfg: backends.b.bearerTokenFile: cannot read {missing}: No such file or directory"
    assert str(caught.value) == want
    assert pool.names == ("default",)  # nothing changed
    await pool.close()
