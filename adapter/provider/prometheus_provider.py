"""The Prometheus-backed MetricsProvider: discovered rules -> PromQL -> metric values.

Values policy (both APIs): values are canonical Quantity strings rounded to the nearest milli
(`common.quantity.format_quantity`); a NaN or ±Inf sample is dropped (a named object then gets
404, a wildcard omits it, an external list leaves it out) and counted in
`promscaler_adapter_nonfinite_samples_total`. The peer turns NaN into
-9223372036854775808m, which an HPA would act on.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from types import MappingProxyType
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter

from adapter.errors import MetricNotFound
from adapter.prometheus import Sample
from adapter.provider.cache import ResultCache
from adapter.provider.discovery import Discovery
from adapter.provider.engine import PreparedQuery
from adapter.provider.seams import (
    CustomMetricInfo,
    ExternalMetricInfo,
    ExternalMetricValue,
    MetricValue,
    ObjectLister,
    ObjectReference,
)
from adapter.rules.resources import ResourceInfo, ResourceResolver
from common.quantity import format_quantity
from common.selectors import Selector

log = logging.getLogger(__name__)


class QuerySource(Protocol):
    """The part of the Prometheus client the provider uses."""

    async def query(self, promql: str, *, at: datetime | None = None) -> list[Sample]: ...


class PrometheusProvider:
    """Implements `adapter.provider.seams.MetricsProvider`."""

    def __init__(
        self,
        *,
        client: QuerySource,
        discovery: Discovery,
        resolver: ResourceResolver,
        lister: ObjectLister,
        cache: ResultCache[list[Sample]],
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._client = client
        self._discovery = discovery
        self._resolver = resolver
        self._lister = lister
        self._cache = cache
        self._nonfinite = Counter(
            "promscaler_adapter_nonfinite_samples_total",
            "NaN or infinite samples dropped from answers, by API.",
            ["api"],
            registry=registry,
        )

    def resolve_resource(self, name: str) -> ResourceInfo | None:
        return self._resolver.resolve(name)

    def list_custom_metrics(self) -> Sequence[CustomMetricInfo]:
        return self._discovery.planner.custom

    def list_external_metrics(self) -> Sequence[ExternalMetricInfo]:
        return self._discovery.planner.external

    def ready(self) -> bool:
        return self._discovery.ready

    async def custom_metric_by_name(
        self,
        resource: ResourceInfo,
        metric: str,
        *,
        namespace: str | None,
        name: str,
        metric_selector: Selector,
    ) -> MetricValue:
        values = await self._custom(resource, metric, namespace, [name], metric_selector)
        if not values:
            raise MetricNotFound.for_object(metric, str(resource.group_resource), name)
        return values[0]

    async def custom_metric_by_selector(
        self,
        resource: ResourceInfo,
        metric: str,
        *,
        namespace: str | None,
        selector: Selector,
        metric_selector: Selector,
    ) -> list[MetricValue]:
        # validate the metric and the metric selector before the (costlier) object look-up
        self._custom_query(resource, metric, namespace, ["probe"], metric_selector)
        names = await self._lister.names(resource, namespace=namespace, selector=selector)
        if not names:
            return []
        return await self._custom(resource, metric, namespace, names, metric_selector)

    def _custom_query(
        self,
        resource: ResourceInfo,
        metric: str,
        namespace: str | None,
        names: Sequence[str],
        metric_selector: Selector,
    ) -> PreparedQuery:
        query = self._discovery.planner.custom_query(
            resource, metric, namespace=namespace, names=names, metric_selector=metric_selector
        )
        if query is None:
            raise MetricNotFound.for_resource(metric, str(resource.group_resource))
        return query

    async def _custom(
        self,
        resource: ResourceInfo,
        metric: str,
        namespace: str | None,
        names: Sequence[str],
        metric_selector: Selector,
    ) -> list[MetricValue]:
        query = self._custom_query(resource, metric, namespace, names, metric_selector)
        samples = await self._run(query.promql)
        label = query.resource_label or ""
        by_name = {s.labels.get(label, ""): s for s in samples}
        selector = None if metric_selector.empty else metric_selector
        out: list[MetricValue] = []
        for name in names:
            sample = by_name.get(name)
            if sample is None or not self._finite(sample.value, "custom"):
                continue
            ref = ObjectReference(
                kind=resource.kind,
                name=name,
                api_version=resource.api_version,
                namespace=namespace or "",
            )
            out.append(
                MetricValue(
                    described_object=ref,
                    metric=metric,
                    timestamp=_time(sample.timestamp),
                    value=format_quantity(sample.value),
                    window_seconds=query.window_seconds,
                    metric_selector=selector,
                )
            )
        return out

    async def external_metric(
        self, metric: str, *, namespace: str, selector: Selector
    ) -> list[ExternalMetricValue]:
        query = self._discovery.planner.external_query(
            metric, namespace=namespace, selector=selector
        )
        if query is None:
            raise MetricNotFound.external(metric)
        samples = await self._run(query.promql)
        return [
            ExternalMetricValue(
                metric=metric,
                timestamp=_time(s.timestamp),
                value=format_quantity(s.value),
                labels=MappingProxyType({k: v for k, v in s.labels.items() if k != "__name__"}),
                window_seconds=query.window_seconds,
            )
            for s in samples
            if self._finite(s.value, "external")
        ]

    async def _run(self, promql: str) -> list[Sample]:
        return await self._cache.get(promql, lambda: self._client.query(promql))

    def _finite(self, value: Decimal, api: str) -> bool:
        if value.is_finite():
            return True
        self._nonfinite.labels(api).inc()
        return False


def _time(unix: float) -> datetime:
    return datetime.fromtimestamp(int(unix), tz=UTC)
