"""An in-process adapter over a real Prometheus: client, rules, discovery, provider, app;
`Adapter` wires it over a BackendPool as `adapter.__main__` does (several backends)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, generate_latest

from adapter.backends import BackendPool
from adapter.prometheus import PrometheusClient, PrometheusOptions
from adapter.provider.cache import ResultCache
from adapter.provider.discovery import Discovery, DiscoveryOptions
from adapter.provider.engine import SingleBackend
from adapter.provider.prometheus_provider import PrometheusProvider
from adapter.provider.rules_engine import load_engine
from adapter.provider.seams import ObjectLister
from adapter.rules.resources import STATIC_RESOLVER
from tests.adapter.fakes import FakeLister

RULES = """
rules:
- seriesQuery: 'http_requests_total{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  name: {matches: "^(.*)_total$", as: "${1}_per_second"}
  metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)'
- seriesQuery: 'gauge_value{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: 'queue_lag{namespace!="",deployment!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      deployment: {group: apps, resource: deployment}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: 'node_temp{node!=""}'
  resources:
    overrides:
      node: {resource: node}
  metricsQuery: 'max(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
externalRules:
- seriesQuery: 'queue_depth{queue!=""}'
  resources: {namespaced: false}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue)'
- seriesQuery: 'jobs_pending{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (namespace, kind)'
"""


def series(name: str, labels: dict[str, str], values: list[float], *, step: float = 15.0):
    """One series ending a few seconds ago, one sample every `step` seconds."""
    now = time.time() - 2
    start = now - step * (len(values) - 1)
    return ({"__name__": name, **labels}, [(start + i * step, v) for i, v in enumerate(values)])


@dataclass
class Stack:
    client: PrometheusClient
    discovery: Discovery
    provider: PrometheusProvider
    cache: ResultCache[object]
    registry: CollectorRegistry

    async def discover(self, *, complete: bool = True) -> None:
        """A discovery pass. With `complete`, repeat it (a few times at most) until every
        seriesQuery has answered: on a loaded machine one can time out, and its metrics would
        then be unknown (404) to the test that follows."""
        for _ in range(DISCOVERY_PASSES if complete else 1):
            await self.discovery.run_once(now=datetime.now(UTC))
            if not complete or stale_calls(self.registry) == 0:
                return
        raise AssertionError(f"{stale_calls(self.registry):g} seriesQuery calls keep failing")

    async def close(self) -> None:
        await self.client.close()


DISCOVERY_PASSES = 5  # passes `discover` makes at most before it gives up


def stale_calls(registry: CollectorRegistry) -> float:
    """seriesQuery calls whose latest relist failed, over all backends (the self-metric)."""
    return sum(
        sample.value
        for family in registry.collect()
        if family.name == "promscaler_adapter_discovery_stale_series_queries"
        for sample in family.samples
    )


async def make_stack(
    url: str,
    *,
    lister: ObjectLister,
    rules: str = RULES,
    cache_ttl: float = 0.0,
    # seconds per Prometheus call: generous, as a loaded CI machine answers slowly; the tests
    # of timeouts pass their own
    timeout: float = 10.0,
    verb: str = "GET",
    batch_window: float = 0.0,
    external_window: float | None = None,
    clock: Callable[[], float] = time.monotonic,  # the result cache's
    compression: str = "auto",
    warnings: str = "reject",
) -> Stack:
    registry = CollectorRegistry()
    options = PrometheusOptions(
        url=url, timeout=timeout, verb=verb, compression=compression, warnings=warnings
    )
    client = PrometheusClient(options, registry=registry)
    engine = load_engine(rules, source="test-rules", resolver=STATIC_RESOLVER)
    discovery = Discovery(
        SingleBackend(client),
        engine,
        options=DiscoveryOptions(max_age=3600, timeout=timeout),
        registry=registry,
    )
    cache: ResultCache[object] = ResultCache(ttl=cache_ttl, clock=clock, registry=registry)
    provider = PrometheusProvider(
        backends=SingleBackend(client),
        discovery=discovery,
        resolver=STATIC_RESOLVER,
        lister=lister,
        cache=cache,
        registry=registry,
        batch_window=batch_window,
        external_window=external_window,
    )
    return Stack(client, discovery, provider, cache, registry)


NAMED_RULE = """
- seriesQuery: '{name}{{namespace!="",pod!=""}}'
  resources: {{overrides: {{namespace: {{resource: namespace}}, pod: {{resource: pod}}}}}}
  name: {{as: '{alias}'}}
  metricsQuery: 'sum(<<.Series>>{{<<.LabelMatchers>>}}) by (<<.GroupBy>>)'"""


def rule_file(names: list[str], *, suffix: str = "") -> str:
    """One pod rule per series name, served as `<name><suffix>`."""
    return "rules:" + "".join(NAMED_RULE.format(name=n, alias=n + suffix) for n in names) + "\n"


PODS = {("pods", "default"): {"web-1": {"app": "web"}}}


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
