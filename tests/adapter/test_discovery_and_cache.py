"""Discovery (per-query resilience, readiness, max age) and the result cache, at their seams."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from adapter.errors import PrometheusUnavailable
from adapter.provider.cache import ResultCache
from adapter.provider.discovery import Discovery, DiscoveryOptions
from adapter.provider.engine import SingleBackend
from adapter.provider.rules_engine import load_engine
from adapter.rules.resources import STATIC_RESOLVER
from common.selectors import EVERYTHING

RULES = """
rules:
- seriesQuery: 'a_total{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: 'b_total{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
"""
NOW = datetime(2026, 1, 1, tzinfo=UTC)


class FakeSeries:
    """Series by seriesQuery; a query listed in `failing` raises like a Prometheus outage."""

    def __init__(self, answers):
        self.answers = answers
        self.failing: set[str] = set()
        self.calls: list[tuple[str, datetime | None, datetime | None, float | None]] = []

    async def series(self, matchers, *, start=None, end=None, time_limit=None, rule=""):
        (query,) = matchers
        self.calls.append((query, start, end, time_limit))
        if query in self.failing:
            raise PrometheusUnavailable()
        return self.answers.get(query, [])


def labels(name, pod):
    return {"__name__": name, "namespace": "default", "pod": pod}


def metric_names(discovery):
    return sorted(str(m.api_name) for m in discovery.planner.custom)


async def test_a_failing_series_query_keeps_its_last_good_result():
    source = FakeSeries(
        {
            'a_total{namespace!="",pod!=""}': [labels("a_total", "p")],
            'b_total{namespace!="",pod!=""}': [labels("b_total", "p")],
        }
    )
    engine = load_engine(RULES, source="t", resolver=STATIC_RESOLVER)
    discovery = Discovery(
        SingleBackend(source), engine, options=DiscoveryOptions(max_age=300, timeout=2)
    )
    assert not discovery.ready
    await discovery.run_once(now=NOW)
    assert discovery.ready
    assert metric_names(discovery) == [
        "namespaces/a_total",
        "namespaces/b_total",
        "pods/a_total",
        "pods/b_total",
    ]
    # b fails on the next pass while a's result changes: a updates, b keeps its last result
    source.failing.add('b_total{namespace!="",pod!=""}')
    source.answers['a_total{namespace!="",pod!=""}'] = []
    await discovery.run_once(now=NOW)
    assert metric_names(discovery) == ["namespaces/b_total", "pods/b_total"]
    assert discovery.metrics.failures.labels("default")._value.get() == 1
    assert discovery.metrics.stale.labels("default")._value.get() == 1


async def test_last_success_is_the_last_pass_where_every_query_succeeded():
    source = FakeSeries({})
    engine = load_engine(RULES, source="t", resolver=STATIC_RESOLVER)
    discovery = Discovery(SingleBackend(source), engine, options=DiscoveryOptions())
    last_success = discovery.metrics.last_success.labels("default")
    await discovery.run_once(now=NOW)
    assert last_success._value.get() == NOW.timestamp()
    # one query failing: the pass serves what it can, but discovery is not fresh
    source.failing.add('b_total{namespace!="",pod!=""}')
    await discovery.run_once(now=NOW + timedelta(minutes=1))
    assert last_success._value.get() == NOW.timestamp()
    source.failing.clear()
    await discovery.run_once(now=NOW + timedelta(minutes=2))
    assert last_success._value.get() == (NOW + timedelta(minutes=2)).timestamp()


async def test_one_call_per_distinct_series_query_over_max_age():
    rules = RULES + RULES.split("rules:\n", 1)[1]  # the same two queries twice
    source = FakeSeries({})
    engine = load_engine(rules, source="t", resolver=STATIC_RESOLVER)
    discovery = Discovery(
        SingleBackend(source), engine, options=DiscoveryOptions(max_age=300, timeout=2)
    )
    await discovery.run_once(now=NOW)
    assert sorted(c[0] for c in source.calls) == [
        'a_total{namespace!="",pod!=""}',
        'b_total{namespace!="",pod!=""}',
    ]
    assert {(c[1], c[2], c[3]) for c in source.calls} == {(NOW - timedelta(seconds=300), NOW, 2)}


async def test_first_pass_failing_still_makes_ready():
    source = FakeSeries({})
    source.failing = {'a_total{namespace!="",pod!=""}', 'b_total{namespace!="",pod!=""}'}
    engine = load_engine(RULES, source="t", resolver=STATIC_RESOLVER)
    discovery = Discovery(SingleBackend(source), engine, options=DiscoveryOptions())
    await discovery.run_once(now=NOW)
    assert discovery.ready
    assert discovery.planner.custom == ()


class HangingSeries(FakeSeries):
    """A backend whose series calls wait until `release` is set."""

    def __init__(self, answers):
        super().__init__(answers)
        self.release = asyncio.Event()

    async def series(self, matchers, **kw):
        await self.release.wait()
        return await super().series(matchers, **kw)


class TwoBackends:
    def __init__(self, **clients):
        self.clients = clients

    def client(self, name):
        return self.clients[name]


TWO_BACKENDS = RULES.replace("rules:\n", "backends: {slow: {url: 'http://slow'}}\nrules:\n") + (
    "  backend: slow\n"
)


async def test_a_hung_backend_delays_neither_the_others_metrics_nor_its_last_list():
    fast = FakeSeries({'a_total{namespace!="",pod!=""}': [labels("a_total", "p")]})
    slow = HangingSeries({'b_total{namespace!="",pod!=""}': [labels("b_total", "p")]})
    engine = load_engine(TWO_BACKENDS, source="t", resolver=STATIC_RESOLVER)
    discovery = Discovery(
        TwoBackends(default=fast, slow=slow), engine, options=DiscoveryOptions(timeout=2)
    )
    first = asyncio.create_task(discovery.run_once(now=NOW))
    for _ in range(20):  # let the fast backend's pass finish
        await asyncio.sleep(0)
    # the fast backend's metrics are served while the slow one has not answered
    assert metric_names(discovery) == ["namespaces/a_total", "pods/a_total"]
    assert not discovery.ready  # readiness waits for every backend's first pass
    slow.release.set()
    await first
    assert discovery.ready
    assert metric_names(discovery) == [
        "namespaces/a_total",
        "namespaces/b_total",
        "pods/a_total",
        "pods/b_total",
    ]
    # later the slow backend fails: its metrics stay listed, readiness stays, a updates
    slow.failing.add('b_total{namespace!="",pod!=""}')
    fast.answers['a_total{namespace!="",pod!=""}'] = []
    await discovery.run_once(now=NOW)
    assert discovery.ready
    assert metric_names(discovery) == ["namespaces/b_total", "pods/b_total"]
    assert discovery.metrics.stale.labels("slow")._value.get() == 1
    assert discovery.metrics.stale.labels("default")._value.get() == 0


async def test_a_pass_created_before_a_reload_does_not_publish_the_new_rules():
    source = FakeSeries({'a_total{namespace!="",pod!=""}': [labels("a_total", "p")]})
    engine = load_engine(RULES, source="t", resolver=STATIC_RESOLVER)
    discovery = Discovery(SingleBackend(source), engine, options=DiscoveryOptions())
    await discovery.run_once(now=NOW)
    stale_pass = discovery.run_once(now=NOW)  # created, not yet run
    changed = RULES.replace("by (<<.GroupBy>>)", "by (<<.GroupBy>>) > 0")
    pending = discovery.replace_engine(load_engine(changed, source="t", resolver=STATIC_RESOLVER))
    assert len(pending) == 2  # both rules changed: nothing carried over
    await stale_pass
    # the old rules keep serving until the new rules' own pass has answered
    assert metric_names(discovery) == ["namespaces/a_total", "pods/a_total"]
    assert "> 0" not in pod_query(discovery)
    await discovery.run_once(now=NOW, only=pending)
    assert metric_names(discovery) == ["namespaces/a_total", "pods/a_total"]
    assert "> 0" in pod_query(discovery)  # now the reloaded rule answers


def pod_query(discovery):
    pods = STATIC_RESOLVER.resolve("pods")
    query = discovery.planner.custom_query(
        pods, "a_total", namespace="default", names=["p"], metric_selector=EVERYTHING
    )
    return query.promql


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


async def test_cache_ttl_and_bound():
    clock = Clock()
    cache: ResultCache[int] = ResultCache(ttl=1.0, max_entries=2, clock=clock)
    calls = []

    def fetcher(key, value):
        async def fetch():
            calls.append(key)
            return value

        return fetch

    assert await cache.get("q1", fetcher("q1", 1)) == 1
    assert await cache.get("q1", fetcher("q1", 2)) == 1  # cached
    clock.now += 1.5
    assert await cache.get("q1", fetcher("q1", 3)) == 3  # expired
    await cache.get("q2", fetcher("q2", 0))
    await cache.get("q3", fetcher("q3", 0))
    assert len(cache) == 2  # bounded: q1 evicted
    assert calls == ["q1", "q1", "q2", "q3"]


@pytest.mark.parametrize("ttl", [pytest.param(0.0, id="cache-off"), pytest.param(5.0, id="on")])
async def test_concurrent_identical_calls_share_one_fetch(ttl):
    cache: ResultCache[str] = ResultCache(ttl=ttl)
    gate = asyncio.Event()
    calls = 0

    async def fetch():
        nonlocal calls
        calls += 1
        await gate.wait()
        return "v"

    tasks = [asyncio.create_task(cache.get("q", fetch)) for _ in range(100)]
    await asyncio.sleep(0)
    gate.set()
    assert set(await asyncio.gather(*tasks)) == {"v"}
    assert calls == 1
    await cache.get("q", fetch)
    assert calls == (2 if ttl == 0 else 1)  # with the cache off, a later call queries again


async def test_failures_are_shared_but_not_cached():
    cache: ResultCache[str] = ResultCache(ttl=5.0)
    calls = 0

    async def fail():
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        raise PrometheusUnavailable()

    results = await asyncio.gather(
        *(cache.get("q", fail) for _ in range(5)), return_exceptions=True
    )
    assert all(isinstance(r, PrometheusUnavailable) for r in results)
    assert calls == 1
    with pytest.raises(PrometheusUnavailable):
        await cache.get("q", fail)
    assert calls == 2


async def test_a_cancelled_first_caller_does_not_fail_the_others():
    cache: ResultCache[str] = ResultCache(ttl=0)
    gate = asyncio.Event()

    async def fetch():
        await gate.wait()
        return "v"

    first = asyncio.create_task(cache.get("q", fetch))
    await asyncio.sleep(0)
    second = asyncio.create_task(cache.get("q", fetch))
    await asyncio.sleep(0)
    first.cancel()
    gate.set()
    assert await second == "v"
    with pytest.raises(asyncio.CancelledError):
        await first
