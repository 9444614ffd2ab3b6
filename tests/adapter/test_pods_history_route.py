"""A Pods metric's history (`history.promscaler.dev .../pods/*/{metric}`) against a real
Prometheus: the sum over the workload's pods at each step, the pods of an earlier rollout
included, a similarly named workload's not; bad selectors 400, Prometheus down 503."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from adapter.errors import KubeUnavailable
from adapter.kube import ObjectStore
from adapter.prometheus import PrometheusClient, PrometheusOptions
from adapter.provider.engine import SingleBackend
from adapter.provider.history import RangeHistory
from adapter.rules.podnames import PodLineage
from adapter.rules.resources import ResourceInfo
from adapter.server.app import build_app
from common.selectors import Selector
from sandbox.promfaults import PromFaultPlan, PromFaultProxy
from tests.adapter.fakes import FakeLister
from tests.adapter.stack import make_stack
from tests.controller.stack import STALE_NAN
from tests.support.prometheus import remote_write

pytestmark = pytest.mark.prometheus

H = "/apis/history.promscaler.dev/v1alpha1"
RULES = """
rules:
- seriesQuery: 'pod_rps{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
"""
MINUTES = 20
OLD, NEW = "web-5b9c4d8f7", "web-6c4f8b7d9"  # two ReplicaSets of Deployment web
# pods the cluster holds now: the new ReplicaSet's, and others that must not count
NOW_PODS: list[dict[str, Any]] = [
    {"name": f"{NEW}-npqrs", "rs": NEW, "hash": "6c4f8b7d9", "app": "web"},
    {"name": f"{NEW}-tvwxz", "rs": NEW, "hash": "6c4f8b7d9", "app": "web"},
    {"name": "web-db-5b9c4d8f7-bcdfg", "rs": "web-db-5b9c4d8f7", "hash": "5b9c4d8f7", "app": "db"},
    {"name": "webx-5b9c4d8f7-bcdfg", "rs": "webx-5b9c4d8f7", "hash": "5b9c4d8f7", "app": "webx"},
]


def pod(spec: dict[str, Any]) -> dict[str, Any]:
    """A pod as the ReplicaSet controller creates it (what the adapter's list-watch holds)."""
    return {
        "metadata": {
            "namespace": "shop",
            "name": spec["name"],
            "generateName": f"{spec['rs']}-",
            "labels": {"app": spec["app"], "pod-template-hash": spec["hash"]},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": spec["rs"],
                    "controller": True,
                }
            ],
        }
    }


class StorePods:
    """`PodLineages` over the adapter's own ObjectStore (the watch cache without the watch)."""

    def __init__(self, items: list[dict[str, Any]], *, fail: bool = False) -> None:
        self.store = ObjectStore()
        self.store.replace(items)
        self.fail = fail
        self.asked: list[Selector] = []

    async def lineage(
        self, info: ResourceInfo, *, namespace: str, selector: Selector
    ) -> list[PodLineage]:
        self.asked.append(selector)
        if self.fail:
            raise KubeUnavailable()
        return self.store.lineage(namespace, selector)


@pytest.fixture
async def stack(prometheus):
    last = int(time.time()) // 60 * 60 - 60
    first = last - (MINUTES - 1) * 60
    half = MINUTES // 2

    def minutes(lo: int, hi: int, value: float, *, stale: bool) -> list[tuple[float, float]]:
        points = [(first + i * 60, value) for i in range(lo, hi)]
        # the rollout ends a pod: Prometheus marks its series stale, as a scrape would
        return [*points, (first + (hi - 1) * 60 + 30, STALE_NAN)] if stale else points

    def rps(name: str, namespace: str = "shop") -> dict[str, str]:
        return {"__name__": "pod_rps", "namespace": namespace, "pod": name}

    rows = [
        # the first half: three pods of the old ReplicaSet, 1 request/s each
        (rps(f"{OLD}-bcdfg"), minutes(0, half, 1.0, stale=True)),
        (rps(f"{OLD}-hjklm"), minutes(0, half, 1.0, stale=True)),
        (rps(f"{OLD}-2x4z9"), minutes(0, half, 1.0, stale=True)),
        # the second half: the new ReplicaSet's two pods, 5 each
        (rps(f"{NEW}-npqrs"), minutes(half, MINUTES, 5.0, stale=False)),
        (rps(f"{NEW}-tvwxz"), minutes(half, MINUTES, 5.0, stale=False)),
        # other workloads with names alike, and the same names in another namespace
        (rps("web-db-5b9c4d8f7-bcdfg"), minutes(0, MINUTES, 1000.0, stale=False)),
        (rps("webx-5b9c4d8f7-bcdfg"), minutes(0, MINUTES, 1000.0, stale=False)),
        (rps("web-bcd"), minutes(0, MINUTES, 1000.0, stale=False)),
        (rps(f"{OLD}-bcdfg", "other"), minutes(0, MINUTES, 1000.0, stale=False)),
    ]
    await remote_write(prometheus.url, rows)
    s = await make_stack(prometheus.url, lister=FakeLister({}), rules=RULES)
    await s.discover()
    s.first, s.last = first, last  # type: ignore[attr-defined]
    yield s
    await s.close()


def history(stack, pods: StorePods, client: PrometheusClient | None = None) -> RangeHistory:
    backends = SingleBackend(client or stack.client)
    return RangeHistory(backends=backends, discovery=stack.discovery, pods=pods)


@pytest.fixture
def pods() -> StorePods:
    return StorePods([pod(p) for p in NOW_PODS])


@pytest.fixture
async def client(aiohttp_client, stack, pods):
    app = build_app(stack.provider, registry=stack.registry, history=history(stack, pods))
    return await aiohttp_client(app)


async def get(client, path, code=200):
    resp = await client.get(path)
    assert resp.status == code, await resp.text()
    return await resp.json()


def path(stack, query: str = "labelSelector=app%3Dweb", metric: str = "pod_rps") -> str:
    return f"{H}/namespaces/shop/pods/*/{metric}?{query}&start={stack.first}&end={stack.last}"


async def test_the_sum_over_the_workloads_pods_spans_its_rollouts(client, stack, pods):
    body = await get(client, path(stack))
    assert (body["kind"], body["metricName"], body["step"]) == ("MetricHistory", "pod_rps", 60)
    assert body["start"] == stack.first
    # the old ReplicaSet's three pods (no longer there), then the new one's two: never the
    # db or webx workloads, a bare pod named web-bcd, nor the other namespace's pod
    half = MINUTES // 2
    assert body["values"] == [3.0] * half + [10.0] * (MINUTES - half)
    assert [str(s) for s in pods.asked] == ["app=web"]


async def test_the_metric_selector_still_applies(aiohttp_client, stack):
    store = StorePods([pod(p) for p in NOW_PODS])
    app = build_app(stack.provider, history=history(stack, store))
    c = await aiohttp_client(app)
    body = await get(c, path(stack, "labelSelector=app%3Dweb&metricLabelSelector=pod%3Dnone"))
    assert body["values"] == [None] * MINUTES


async def test_a_pod_without_a_controller_counts_by_its_own_name(aiohttp_client, stack):
    bare = {"metadata": {"namespace": "shop", "name": "web-bcd", "labels": {"app": "solo"}}}
    c = await aiohttp_client(build_app(stack.provider, history=history(stack, StorePods([bare]))))
    body = await get(c, path(stack, "labelSelector=app%3Dsolo"))
    assert body["values"] == [1000.0] * MINUTES


async def test_no_pod_matching_now_is_a_grid_of_nulls_without_a_query(client, stack):
    calls = stack.client.calls
    body = await get(client, path(stack, "labelSelector=app%3Dnothing"))
    assert body["values"] == [None] * MINUTES
    assert stack.client.calls == calls


@pytest.mark.parametrize(
    ("query", "needle"),
    [
        pytest.param("labelSelector=app+in+%28", "labelSelector", id="malformed-pod-selector"),
        pytest.param("labelSelector=a%21%21b", "labelSelector", id="pod-selector-operator"),
        pytest.param(
            "labelSelector=app%3Dweb&metricLabelSelector=code%3E3",
            "metricLabelSelector",
            id="numeric-metric-selector",
        ),
        pytest.param(
            "labelSelector=app%3Dweb&metricLabelSelector=a-b%3Dc",
            "invalid label name",
            id="metric-label-not-a-prometheus-name",
        ),
    ],
)
async def test_a_bad_selector_is_a_400_naming_it(client, stack, query, needle):
    body = await get(client, path(stack, query), 400)
    assert (body["kind"], body["code"], body["reason"]) == ("Status", 400, "BadRequest")
    assert needle in body["message"]


async def test_bad_range_and_unknown_metric(client, stack):
    q = "labelSelector=app%3Dweb&start=0&end=60&step=5"
    body = await get(client, f"{H}/namespaces/shop/pods/*/pod_rps?{q}", 400)
    assert "step: must be between" in body["message"]
    body = await get(client, path(stack, metric="no_such_metric"), 404)
    assert (body["reason"], body["code"]) == ("NotFound", 404)
    # a wildcard names pods only: an HPA has no metric type for the others
    body = await get(client, f"{H}/namespaces/shop/services/*/pod_rps?start=0&end=60", 404)
    assert body["reason"] == "NotFound"


async def test_prometheus_down_is_503(aiohttp_client, stack, pods):
    dead = PrometheusClient(PrometheusOptions(url="http://127.0.0.1:9", timeout=2.0))
    try:
        app = build_app(stack.provider, history=history(stack, pods, dead))
        c = await aiohttp_client(app)
        body = await get(c, path(stack), 503)
        assert (body["kind"], body["code"], body["reason"]) == ("Status", 503, "ServiceUnavailable")
    finally:
        await dead.close()


async def test_prometheus_hung_is_503_within_the_timeout(prometheus, aiohttp_client, stack, pods):
    async with PromFaultProxy(upstream=prometheus.url) as proxy:
        faulty = await make_stack(proxy.url, lister=FakeLister({}), rules=RULES, timeout=1.0)
        try:
            await faulty.discover()
            app = build_app(faulty.provider, history=history(faulty, pods))
            c = await aiohttp_client(app)
            proxy.set(PromFaultPlan(seed=1, rates={"hang": 1.0}, hang_seconds=5))
            started = time.monotonic()
            body = await get(c, path(stack), 503)
            assert time.monotonic() - started < 1.0 + 1.5  # never past the adapter's timeout
            assert body["reason"] == "ServiceUnavailable"
        finally:
            await faulty.close()


async def test_pods_that_cannot_be_listed_are_503(aiohttp_client, stack):
    app = build_app(stack.provider, history=history(stack, StorePods([], fail=True)))
    c = await aiohttp_client(app)
    body = await get(c, path(stack), 503)
    assert (body["kind"], body["code"]) == ("Status", 503)


async def test_the_query_is_the_rules_own_with_the_names_as_a_regex(stack, pods):
    """What reaches Prometheus: the rule's query, the pods' names as one escaped regex."""
    sent: list[str] = []
    real = stack.client.query_range

    async def spy(promql: str, **kwargs: Any) -> Any:
        sent.append(promql)
        return await real(promql, **kwargs)

    stack.client.query_range = spy
    h = history(stack, pods)
    info = stack.provider.resolve_resource("pods")
    selector = Selector(())
    from common.selectors import parse_selector

    await h.pods_history(
        info,
        "pod_rps",
        namespace="shop",
        selector=parse_selector("app=web"),
        metric_selector=selector,
        start=stack.first,
        end=stack.last,
        step=60,
    )
    (promql,) = sent
    want = (
        'sum(pod_rps{namespace="shop",pod=~"web-[bcdf4-9]{1,10}-'
        '[bcdfghjklmnpqrstvwxz2456789]{5}"}) by (pod)'
    )
    assert promql == want
    assert re.fullmatch("web-[bcdf4-9]{1,10}-[bcdfghjklmnpqrstvwxz2456789]{5}", f"{OLD}-2x4z9")
