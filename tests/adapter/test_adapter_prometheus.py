"""The adapter end to end against a real Prometheus fed by remote write."""

from __future__ import annotations

import asyncio
import math
import time
from decimal import Decimal

import pytest
from prometheus_client import generate_latest

from adapter.server.app import build_app
from common.quantity import parse_quantity
from tests.adapter.fakes import FakeLister
from tests.adapter.stack import make_stack, series
from tests.support.prometheus import remote_write

pytestmark = pytest.mark.prometheus

CM1 = "/apis/custom.metrics.k8s.io/v1beta1"
CM2 = "/apis/custom.metrics.k8s.io/v1beta2"
EM = "/apis/external.metrics.k8s.io/v1beta1"


def data() -> list:
    """The series, ending a few seconds before now: built when written, never at import (a
    suite running for minutes would otherwise age them out of rate windows and lookback)."""
    return [
        series("gauge_value", {"namespace": "default", "pod": "web-1"}, [1.0, 1.5]),
        series("gauge_value", {"namespace": "default", "pod": "web-2"}, [0.0004]),
        series("gauge_value", {"namespace": "default", "pod": "web-3"}, [2.0, 3.0]),
        series("gauge_value", {"namespace": "nan", "pod": "p"}, [math.nan]),
        series("gauge_value", {"namespace": "prod", "pod": "web-1"}, [7.0]),
        series("gauge_value", {"namespace": "round", "pod": "r1"}, [1.0006]),
        series("gauge_value", {"namespace": "round", "pod": "r2"}, [0.5]),
        series(
            "http_requests_total",
            {"namespace": "default", "pod": "web-1", "verb": "GET"},
            [0, 15, 30, 45, 60],
        ),
        series(
            "http_requests_total",
            {"namespace": "default", "pod": "web-1", "verb": "POST"},
            [0, 30, 60, 90, 120],
        ),
        series("queue_lag", {"namespace": "default", "deployment": "web"}, [7]),
        series("node_temp", {"node": "node-a"}, [42]),
        series("node_temp", {"node": "node-b"}, [41.5]),
        series("queue_depth", {"queue": "orders"}, [42]),
        series("queue_depth", {"queue": "emails"}, [1000]),
        series("jobs_pending", {"namespace": "default", "kind": "a"}, [3]),
        series("jobs_pending", {"namespace": "prod", "kind": "a"}, [5]),
        series("pinf", {"namespace": "default", "pod": "web-1"}, [math.inf]),
    ]


OBJECTS = {
    ("pods", "default"): {
        "web-1": {"app": "web"},
        "web-2": {"app": "web"},
        "web-3": {"app": "web", "broken": "yes"},
        "db-1": {"app": "db"},
    },
    ("nodes", None): {"node-a": {"zone": "a"}, "node-b": {"zone": "b"}},
}


@pytest.fixture
async def stack(prometheus):
    await remote_write(prometheus.url, data())
    # web-3 gets a NaN as its newest sample so it has a value series but no number
    now = time.time() - 1
    await remote_write(
        prometheus.url,
        [({"__name__": "gauge_value", "namespace": "default", "pod": "web-3"}, [(now, math.nan)])],
    )
    s = await make_stack(prometheus.url, lister=FakeLister(OBJECTS))
    await s.discover()
    yield s
    await s.close()


@pytest.fixture
async def client(aiohttp_client, stack):
    return await aiohttp_client(build_app(stack.provider, registry=stack.registry))


async def get(client, path, code=200):
    resp = await client.get(path)
    assert resp.status == code, await resp.text()
    return await resp.json()


def values(body):
    return {i["describedObject"]["name"]: i["value"] for i in body["items"]}


async def test_discovery_lists_every_metric(client, stack):
    body = await get(client, CM2)
    names = {(r["name"], r["namespaced"]) for r in body["resources"]}
    assert names == {
        ("pods/gauge_value", True),
        ("namespaces/gauge_value", False),
        ("pods/http_requests_per_second", True),
        ("namespaces/http_requests_per_second", False),
        ("deployments.apps/queue_lag", True),
        ("namespaces/queue_lag", False),
        ("nodes/node_temp", False),
    }
    ext = await get(client, EM)
    assert [r["name"] for r in ext["resources"]] == ["jobs_pending", "queue_depth"]
    assert stack.provider.ready()


async def test_named_pod_both_versions(client, prometheus):
    for base in (CM1, CM2):
        body = await get(client, f"{base}/namespaces/default/pods/web-1/gauge_value")
        (item,) = body["items"]
        assert item["value"] == "1500m"
        assert item["describedObject"] == {
            "kind": "Pod",
            "namespace": "default",
            "name": "web-1",
            "apiVersion": "v1",
        }
        assert "window" not in item
        assert "windowSeconds" not in item
        assert item["timestamp"].endswith("Z")
        assert len(item["timestamp"]) == 20
    assert 'sum(gauge_value{namespace="default",pod="web-1"}) by (pod)' in prometheus.queries()


async def test_wildcard_by_label_selector_drops_nan(client, prometheus, stack):
    path = f"{CM2}/namespaces/default/pods/*/gauge_value?labelSelector=app%3Dweb"
    body = await get(client, path)
    assert values(body) == {"web-1": "1500m", "web-2": "0"}  # web-3 is NaN: omitted
    assert (
        'sum(gauge_value{namespace="default",pod=~"web-1|web-2|web-3"}) by (pod)'
        in prometheus.queries()
    )
    metrics = await (await client.get("/metrics")).text()
    assert 'promscaler_adapter_nonfinite_samples_total{api="custom"} 1.0' in metrics


async def test_wildcard_without_matching_objects_is_empty(client, prometheus):
    before = len(prometheus.queries())
    body = await get(
        client, f"{CM1}/namespaces/default/pods/*/gauge_value?labelSelector=app%3Dnone"
    )
    assert body["items"] == []
    assert len(prometheus.queries()) == before  # no object, no query
    body = await get(client, f"{CM1}/namespaces/default/pods/*/gauge_value?labelSelector=app%3Ddb")
    assert body["items"] == []  # an object without a series


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param(
            f"{CM2}/namespaces/default/pods/web-3/gauge_value",
            "the server could not find the metric gauge_value for pods web-3",
            id="nan-value",
        ),
        pytest.param(
            f"{CM2}/namespaces/default/pods/web-9/gauge_value",
            "the server could not find the metric gauge_value for pods web-9",
            id="no-series",
        ),
        pytest.param(
            f"{CM2}/namespaces/default/pods/web-1/nope",
            "the server could not find the metric nope for pods",
            id="unknown-metric",
        ),
        pytest.param(
            f"{CM2}/namespaces/default/services/web/gauge_value",
            "the server could not find the metric gauge_value for services",
            id="metric-not-for-resource",
        ),
        pytest.param(
            f"{CM2}/namespaces/nan/metrics/gauge_value",
            "the server could not find the metric gauge_value for namespaces nan",
            id="namespace-nan",
        ),
    ],
)
async def test_not_found(client, path, message):
    body = await get(client, path, 404)
    assert body["message"] == message
    assert body["reason"] == "NotFound"


async def test_rate_rule_window_and_metric_label_selector(client, prometheus):
    base = f"{CM1}/namespaces/default/pods/web-1/http_requests_per_second"
    body = await get(client, base + "?metricLabelSelector=verb%3DGET")
    (item,) = body["items"]
    assert item["window"] == 120
    assert item["selector"] == {"matchLabels": {"verb": "GET"}}
    get_rate = parse_quantity(item["value"])
    assert get_rate > 0
    assert (
        'sum(rate(http_requests_total{verb="GET",namespace="default",pod="web-1"}[2m])) by (pod)'
        in prometheus.queries()
    )
    both = await get(client, base.replace(CM1, CM2))
    assert both["items"][0]["windowSeconds"] == 120
    # POST grows twice as fast as GET: all verbs together is three times GET
    assert abs(parse_quantity(both["items"][0]["value"]) / get_rate - 3) < Decimal("0.01")


async def test_namespace_metric_and_rounding(client, prometheus):
    body = await get(client, f"{CM2}/namespaces/round/metrics/gauge_value")
    (item,) = body["items"]
    assert item["describedObject"] == {"kind": "Namespace", "name": "round", "apiVersion": "v1"}
    assert item["value"] == "1501m"  # 1.5006 rounds to the nearest milli, never truncates
    assert 'sum(gauge_value{namespace="round"}) by (namespace)' in prometheus.queries()
    body = await get(client, f"{CM1}/namespaces/prod/metrics/gauge_value")
    assert body["items"][0]["value"] == "7"
    # default's sum includes web-3's NaN: no number, so 404 like any missing value
    body = await get(client, f"{CM1}/namespaces/default/metrics/gauge_value", 404)
    assert body["message"].endswith("for namespaces default")


async def test_cluster_scoped_and_group_qualified(client):
    body = await get(client, f"{CM1}/nodes/*/node_temp")
    assert values(body) == {"node-a": "42", "node-b": "41500m"}
    assert all("namespace" not in i["describedObject"] for i in body["items"])
    body = await get(client, f"{CM1}/nodes/*/node_temp?labelSelector=zone%3Db")
    assert values(body) == {"node-b": "41500m"}
    body = await get(client, f"{CM2}/namespaces/default/deployments.apps/web/queue_lag")
    assert body["items"][0]["describedObject"]["apiVersion"] == "apps/v1"
    assert body["items"][0]["value"] == "7"
    body = await get(client, f"{CM2}/namespaces/default/deployment/web/queue_lag")
    assert body["items"][0]["describedObject"]["kind"] == "Deployment"


async def test_external_with_and_without_selector(client, prometheus):
    body = await get(client, f"{EM}/namespaces/default/queue_depth")
    got = {i["metricLabels"]["queue"]: i["value"] for i in body["items"]}
    assert got == {"orders": "42", "emails": "1k"}
    assert all("__name__" not in i["metricLabels"] for i in body["items"])
    # namespaced: false -> the request namespace is not a matcher
    assert "sum(queue_depth{}) by (queue)" in prometheus.queries()
    body = await get(client, f"{EM}/namespaces/default/queue_depth?labelSelector=queue%3Dorders")
    assert [(i["metricLabels"], i["value"]) for i in body["items"]] == [({"queue": "orders"}, "42")]
    assert 'sum(queue_depth{queue="orders"}) by (queue)' in prometheus.queries()


async def test_external_namespaced(client, prometheus):
    body = await get(client, f"{EM}/namespaces/prod/jobs_pending")
    assert [(i["metricLabels"], i["value"]) for i in body["items"]] == [
        ({"kind": "a", "namespace": "prod"}, "5")
    ]
    assert 'sum(jobs_pending{namespace="prod"}) by (namespace, kind)' in prometheus.queries()


async def test_prometheus_down_is_503_within_the_timeout(client, prometheus):
    prometheus.stop()
    started = time.monotonic()
    body = await get(client, f"{CM2}/namespaces/default/pods/web-1/gauge_value", 503)
    assert time.monotonic() - started < 3
    assert body["reason"] == "ServiceUnavailable"
    assert "127.0.0.1" not in body["message"]
    body = await get(client, f"{EM}/namespaces/default/queue_depth", 503)
    assert body["code"] == 503
    prometheus.start()
    body = await get(client, f"{CM2}/namespaces/default/pods/web-1/gauge_value")
    assert body["items"][0]["value"] == "1500m"


async def test_hanging_prometheus_times_out():
    writers = []

    async def hang(reader, writer):
        writers.append(writer)  # accept, read nothing, answer nothing

    server = await asyncio.start_server(hang, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    s = await make_stack(f"http://127.0.0.1:{port}", lister=FakeLister(OBJECTS), timeout=0.5)
    try:
        started = time.monotonic()
        await s.discover(complete=False)  # every seriesQuery times out; discovery still finishes
        assert s.provider.ready()
        assert s.provider.list_custom_metrics() == ()
        assert time.monotonic() - started < 2
        assert 'kind="timeout"' in generate_latest(s.registry).decode()
    finally:
        await s.close()
        for writer in writers:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_cache_and_coalescing(prometheus):
    await remote_write(prometheus.url, data())
    s = await make_stack(prometheus.url, lister=FakeLister(OBJECTS), cache_ttl=30)
    try:
        await s.discover()
        pods = s.provider.resolve_resource("pods")
        from common.selectors import EVERYTHING

        async def ask():
            return await s.provider.custom_metric_by_name(
                pods,
                "gauge_value",
                namespace="default",
                name="web-1",
                metric_selector=EVERYTHING,
            )

        before = s.client.calls
        results = await asyncio.gather(*(ask() for _ in range(50)))
        assert {r.value for r in results} == {"1500m"}
        assert s.client.calls - before == 1  # 50 concurrent requests, one query
        await ask()
        assert s.client.calls - before == 1  # within the TTL: cached
    finally:
        await s.close()


async def test_post_verb_and_long_queries(prometheus):
    await remote_write(prometheus.url, data())
    lister = FakeLister(
        {("pods", "default"): {f"pod-{i:04d}-{'x' * 40}": {} for i in range(300)} | {"web-1": {}}}
    )
    for verb in ("POST", "GET"):  # GET switches to POST by itself for a long URL
        s = await make_stack(prometheus.url, lister=lister, verb=verb)
        try:
            await s.discover()
            pods = s.provider.resolve_resource("pods")
            from common.selectors import EVERYTHING

            got = await s.provider.custom_metric_by_selector(
                pods,
                "gauge_value",
                namespace="default",
                selector=EVERYTHING,
                metric_selector=EVERYTHING,
            )
            assert [v.described_object.name for v in got] == ["web-1"]
        finally:
            await s.close()
