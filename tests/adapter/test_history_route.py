"""history.promscaler.dev against a real Prometheus: the rule's query as range queries, the
selector as matchers, summed per step; bad ranges 400, unknown metrics 404, Prometheus down 503."""

from __future__ import annotations

import time

import pytest

from adapter.prometheus import PrometheusClient, PrometheusOptions
from adapter.provider.engine import SingleBackend
from adapter.provider.history import CHUNK, RangeHistory
from adapter.server.app import build_app
from sandbox.promfaults import PromFaultPlan, PromFaultProxy
from tests.adapter.fakes import FakeLister
from tests.adapter.stack import make_stack
from tests.support.prometheus import remote_write

pytestmark = pytest.mark.prometheus

H = "/apis/history.promscaler.dev/v1alpha1"
RULES = """
rules:
- seriesQuery: 'svc_rps{namespace!="",service!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      service: {resource: service}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
externalRules:
- seriesQuery: 'backlog_items{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (namespace, queue)'
"""
MINUTES = 20


@pytest.fixture
async def stack(prometheus):
    # one sample a minute on whole minutes, so each range step reads exactly one of them
    last = int(time.time()) // 60 * 60 - 60
    first = last - (MINUTES - 1) * 60
    rows = [
        (
            {"__name__": "backlog_items", "namespace": "shop", "queue": "orders"},
            [(first + i * 60, float(i)) for i in range(MINUTES)],
        ),
        (
            {"__name__": "backlog_items", "namespace": "shop", "queue": "mail"},
            [(first + i * 60, 10.0) for i in range(MINUTES)],
        ),
        (
            {"__name__": "backlog_items", "namespace": "other", "queue": "orders"},
            [(first + i * 60, 1000.0) for i in range(MINUTES)],
        ),
        (
            {"__name__": "svc_rps", "namespace": "shop", "service": "web", "code": "200"},
            [(first + i * 60, 2.0 * i) for i in range(MINUTES)],
        ),
        (
            {"__name__": "svc_rps", "namespace": "shop", "service": "web", "code": "500"},
            [(first + i * 60, 1.0) for i in range(MINUTES)],
        ),
        (
            {"__name__": "svc_rps", "namespace": "shop", "service": "api", "code": "200"},
            [(first + i * 60, 500.0) for i in range(MINUTES)],
        ),
    ]
    await remote_write(prometheus.url, rows)
    s = await make_stack(prometheus.url, lister=FakeLister({}), rules=RULES)
    await s.discover()
    s.first, s.last = first, last  # type: ignore[attr-defined]
    yield s
    await s.close()


@pytest.fixture
async def client(aiohttp_client, stack):
    history = RangeHistory(backends=SingleBackend(stack.client), discovery=stack.discovery)
    return await aiohttp_client(build_app(stack.provider, registry=stack.registry, history=history))


async def get(client, path, code=200):
    resp = await client.get(path)
    assert resp.status == code, await resp.text()
    return await resp.json()


async def test_history_is_the_rule_query_summed_per_step(client, stack):
    body = await get(
        client, f"{H}/namespaces/shop/backlog_items?start={stack.first}&end={stack.last}"
    )
    assert body["kind"] == "MetricHistory"
    assert body["step"] == 60
    assert body["start"] == stack.first
    # orders counts 0..19, mail is 10: their sum; the other namespace never enters
    assert body["values"] == [float(i) + 10 for i in range(MINUTES)]


async def test_selector_becomes_matchers(client, stack):
    q = f"start={stack.first}&end={stack.last}&labelSelector=queue%3Dmail"
    body = await get(client, f"{H}/namespaces/shop/backlog_items?{q}")
    assert body["values"] == [10.0] * MINUTES


async def test_an_objects_history_is_its_custom_metric(client, stack):
    q = f"start={stack.first}&end={stack.last}"
    body = await get(client, f"{H}/namespaces/shop/services/web/svc_rps?{q}")
    # the rule sums web's series (200s and 500s); the api service's never enter
    assert body["values"] == [2.0 * i + 1 for i in range(MINUTES)]
    q += "&metricLabelSelector=code%3D200"
    body = await get(client, f"{H}/namespaces/shop/service/web/svc_rps?{q}")
    assert body["values"] == [2.0 * i for i in range(MINUTES)]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("namespaces/shop/services/web/no_such_metric", id="unknown-metric"),
        pytest.param("namespaces/shop/widgets/web/svc_rps", id="unknown-resource"),
        pytest.param("namespaces/shop/nodes/n1/svc_rps", id="cluster-scoped-resource"),
        pytest.param("namespaces/shop/services/*/svc_rps", id="no-wildcard"),
    ],
)
async def test_object_history_of_nothing_served_is_404(client, path):
    body = await get(client, f"{H}/{path}?start=0&end=60", 404)
    assert (body["kind"], body["reason"]) == ("Status", "NotFound")


async def test_minutes_without_samples_are_null(client, stack):
    start = stack.first - 30 * 60  # half an hour before the first sample: beyond the lookback
    body = await get(client, f"{H}/namespaces/shop/backlog_items?start={start}&end={stack.last}")
    assert body["values"][:20] == [None] * 20
    assert body["values"][-1] == MINUTES - 1 + 10


async def test_a_long_range_is_read_in_chunks(client, stack):
    calls = stack.client.calls
    start = stack.last - (CHUNK + 5) * 60
    body = await get(client, f"{H}/namespaces/shop/backlog_items?start={start}&end={stack.last}")
    assert len(body["values"]) == CHUNK + 6
    assert stack.client.calls - calls == 2
    assert body["values"][-1] == MINUTES - 1 + 10


@pytest.mark.parametrize(
    ("query", "code", "needle"),
    [
        pytest.param("end=100", 400, "start: required", id="no-start"),
        pytest.param("start=abc&end=100", 400, "start: must be a whole number", id="bad-start"),
        pytest.param(
            "start=%C2%B2&end=100", 400, "start: must be a whole number", id="unicode-digit-start"
        ),
        pytest.param("start=100&end=50", 400, "end: must not be before start", id="end-first"),
        pytest.param("start=0&end=3024060", 400, "at most 840h", id="range-too-long"),
        pytest.param("start=0&end=60&step=5", 400, "step: must be between", id="step-too-fine"),
        pytest.param("start=0&end=60&step=7200", 400, "step: must be between", id="step-coarse"),
        pytest.param(
            "start=0&end=60&labelSelector=queue%3E3", 400, "labelSelector", id="numeric-selector"
        ),
    ],
)
async def test_bad_requests_are_400_statuses(client, query, code, needle):
    body = await get(client, f"{H}/namespaces/shop/backlog_items?{query}", code)
    assert (body["kind"], body["code"], body["reason"]) == ("Status", code, "BadRequest")
    assert needle in body["message"]


async def test_unknown_metric_is_404(client):
    body = await get(client, f"{H}/namespaces/shop/no_such_metric?start=0&end=60", 404)
    assert (body["kind"], body["reason"]) == ("Status", "NotFound")
    assert "no_such_metric" in body["message"]


async def test_paths_of_other_shapes_are_404(client):
    body = await get(client, f"{H}/namespaces/shop/pods/x/backlog_items?start=0&end=60", 404)
    assert body["reason"] == "NotFound"


async def test_discovery_lists_the_group_and_the_external_metrics(client):
    groups = await get(client, "/apis")
    assert "history.promscaler.dev" in [g["name"] for g in groups["groups"]]
    resources = await get(client, H)
    assert resources["groupVersion"] == "history.promscaler.dev/v1alpha1"
    assert [(r["name"], r["kind"]) for r in resources["resources"]] == [
        ("backlog_items", "MetricHistory"),
        ("services/svc_rps", "MetricHistory"),
    ]


async def test_prometheus_down_is_503(aiohttp_client, stack):
    dead = PrometheusClient(PrometheusOptions(url="http://127.0.0.1:9", timeout=2.0))
    try:
        history = RangeHistory(backends=SingleBackend(dead), discovery=stack.discovery)
        app = build_app(stack.provider, registry=stack.registry, history=history)
        c = await aiohttp_client(app)
        body = await get(c, f"{H}/namespaces/shop/backlog_items?start=0&end=600", 503)
        assert (body["kind"], body["code"]) == ("Status", 503)
    finally:
        await dead.close()


async def test_without_a_history_provider_the_group_is_404(aiohttp_client, stack):
    c = await aiohttp_client(build_app(stack.provider, registry=stack.registry))
    await get(c, f"{H}/namespaces/shop/backlog_items?start=0&end=60", 404)


@pytest.mark.parametrize(
    ("kind", "extra", "code"),
    [
        pytest.param("error", {"error_code": 500}, 503, id="prometheus-500"),
        pytest.param("hang", {"hang_seconds": 5}, 503, id="prometheus-hangs"),
        pytest.param("partial", {}, 503, id="partial-answer"),
        pytest.param("nan", {}, 200, id="nan-samples-are-null"),
    ],
)
async def test_prometheus_faults(prometheus, aiohttp_client, stack, kind, extra, code):
    async with PromFaultProxy(upstream=prometheus.url) as proxy:
        faulty = await make_stack(proxy.url, lister=FakeLister({}), rules=RULES, timeout=1.0)
        try:
            await faulty.discover()
            history = RangeHistory(
                backends=SingleBackend(faulty.client), discovery=faulty.discovery
            )
            c = await aiohttp_client(build_app(faulty.provider, history=history))
            proxy.set(PromFaultPlan(seed=1, rates={kind: 1.0}, **extra))
            started = time.monotonic()
            q = f"start={stack.first}&end={stack.last}"
            body = await get(c, f"{H}/namespaces/shop/backlog_items?{q}", code)
            assert time.monotonic() - started < 1.0 + 1.5  # never past the adapter's timeout
            if code == 503:
                assert (body["kind"], body["reason"]) == ("Status", "ServiceUnavailable")
            else:
                assert body["values"] == [None] * MINUTES
        finally:
            await faulty.close()
