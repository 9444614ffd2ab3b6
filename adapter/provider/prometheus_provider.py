"""The Prometheus-backed MetricsProvider: discovered rules -> PromQL -> metric values.

Values policy (both APIs): values are canonical Quantity strings rounded to the nearest milli
(`common.quantity.format_quantity`); a NaN or ±Inf sample is dropped (a named object then gets
404, a wildcard omits it, an external list leaves it out) and counted in
`promscaler_adapter_nonfinite_samples_total`. The peer turns NaN into
-9223372036854775808m, which an HPA would act on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from types import MappingProxyType
from typing import Any, cast

from prometheus_client import CollectorRegistry, Counter

from adapter.errors import MetricNotFound
from adapter.provider.cache import ResultCache
from adapter.provider.discovery import Discovery
from adapter.provider.engine import Backends, PreparedQuery
from adapter.provider.seams import (
    CustomMetricInfo,
    CustomValues,
    ExternalMetricInfo,
    ExternalMetricValue,
    MetricValue,
    ObjectLister,
)
from adapter.rules.resources import GroupResource, ResourceInfo, ResourceResolver
from common.quantity import format_quantity
from common.selectors import Operator, Requirement, Selector

log = logging.getLogger(__name__)


class PrometheusProvider:
    """Implements `adapter.provider.seams.MetricsProvider`."""

    def __init__(
        self,
        *,
        backends: Backends,
        discovery: Discovery,
        resolver: ResourceResolver,
        lister: ObjectLister,
        cache: ResultCache[object],
        registry: CollectorRegistry | None = None,
        batch_window: float = 0.0,
        external_window: float | None = None,
    ) -> None:
        self._backends = backends
        # seconds a namespace-wide (batched) custom answer is shared by later requests; 0:
        # batching off, each request its own query (identical ones coalesce)
        self._batch_window = batch_window
        # seconds an external answer is shared (None: the batch window); shorter, because an
        # External metric is what wakes a target at zero, read every --zero-poll-interval
        self._external_window = batch_window if external_window is None else external_window
        self._discovery = discovery
        self._resolver = resolver
        self._lister = lister
        self._cache = cache
        self._known: tuple[object, frozenset[tuple[GroupResource, str]]] = (None, frozenset())
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
    ) -> Sequence[MetricValue]:
        # an unknown metric is a 404 before the (costlier) object look-up
        if (resource.group_resource, metric) not in self._known_custom():
            raise MetricNotFound.for_resource(metric, str(resource.group_resource))
        names = await self._lister.names(resource, namespace=namespace, selector=selector)
        if not names:
            return []
        return await self._custom(resource, metric, namespace, names, metric_selector)

    def _known_custom(self) -> frozenset[tuple[GroupResource, str]]:
        planner = self._discovery.planner
        if self._known[0] is not planner:  # a new discovery pass: rebuild the set once
            keys = frozenset((m.group_resource, m.metric) for m in planner.custom)
            self._known = (planner, keys)
        return self._known[1]

    async def _custom(
        self,
        resource: ResourceInfo,
        metric: str,
        namespace: str | None,
        names: Sequence[str],
        metric_selector: Selector,
    ) -> CustomValues:
        query = self._discovery.planner.custom_query(
            resource,
            metric,
            namespace=namespace,
            names=names,
            metric_selector=metric_selector,
            batch=self._batch_window > 0,
        )
        if query is None:
            raise MetricNotFound.for_resource(metric, str(resource.group_resource))
        label = query.resource_label or ""
        points = cast(
            dict[str, tuple[datetime, str]],
            await self._cache.get(
                ("custom", query.backend, label, query.promql),
                lambda: self._fetch_custom(query, label),
                ttl=self._batch_window if query.batched else None,
            ),
        )
        return CustomValues(
            kind=resource.kind,
            api_version=resource.api_version,
            namespace=namespace or "",
            metric=metric,
            window_seconds=query.window_seconds,
            metric_selector=None if metric_selector.empty else metric_selector,
            names=names,
            points=points,
        )

    async def _fetch_custom(
        self, query: PreparedQuery, label: str
    ) -> dict[str, tuple[datetime, str]]:
        """Object name -> (time, Quantity): converted once per query, shared by its readers."""
        client = self._backends.client(query.backend)
        keyed = await client.query_keyed(
            query.promql, label=label, time_of=_time, value_of=_quantity_text, rule=query.rule
        )
        if keyed.dropped:
            self._nonfinite.labels("custom").inc(keyed.dropped)
        return keyed.points

    async def external_metric(
        self, metric: str, *, namespace: str, selector: Selector
    ) -> list[ExternalMetricValue]:
        query = self._discovery.planner.external_query(
            metric, namespace=namespace, selector=selector, batch=self._batch_window > 0
        )
        if query is None:
            raise MetricNotFound.external(metric)
        answer = cast(
            ExternalAnswer,
            await self._cache.get(
                ("external", query.backend, query.promql),
                lambda: self._fetch_external(query),
                # the same PromQL (metric, selector or, batched, none, and namespace unless
                # `namespaced: false`) is the same answer: share it for the external window
                ttl=self._external_window or None,
            ),
        )
        rows = answer.select(selector) if query.batched else answer.rows
        return [
            ExternalMetricValue(metric, stamp, value, labels, query.window_seconds)
            for labels, stamp, value in rows
        ]

    async def _fetch_external(self, query: PreparedQuery) -> ExternalAnswer:
        samples = await self._backends.client(query.backend).query(query.promql, rule=query.rule)
        return ExternalAnswer(
            [
                (
                    MappingProxyType({k: v for k, v in s.labels.items() if k != "__name__"}),
                    _time(s.timestamp),
                    _quantity(s.value),
                )
                for s in samples
                if self._finite(s.value, "external")
            ]
        )

    def _finite(self, value: Decimal, api: str) -> bool:
        if value.is_finite():
            return True
        self._nonfinite.labels(api).inc()
        return False


ExternalRow = tuple[Mapping[str, str], datetime, str]  # labels less __name__, time, Quantity


class ExternalAnswer:
    """One External query's rows, and (batched) the rows a metric selector keeps.

    A batched query ran without the request's selector, over a rule that groups by every label
    the selector names; keeping the output rows the selector matches gives what the query with
    the selector returns. The selector is read as PromQL reads the matchers it would have
    become (`adapter.rules.matchers`): an absent label has the value "". Rows are looked up by
    the value of an `=`/`in` label through an index built once per answer, so each of
    thousands of requests sharing one answer costs a dict look-up, not a scan."""

    __slots__ = ("_index", "rows")

    def __init__(self, rows: list[ExternalRow]) -> None:
        self.rows = rows
        self._index: dict[str, dict[str, list[int]]] = {}

    def select(self, selector: Selector) -> list[ExternalRow]:
        requirements = selector.requirements
        positions: Iterable[int] = range(len(self.rows))
        for req in requirements:  # narrow through one equality or set requirement
            if req.operator in _IN_LIKE:
                by_value = self._by_value(req.key)
                found: set[int] = set()
                for value in req.values:
                    found.update(by_value.get(value, ()))
                positions = sorted(found)  # the answer's own order, as a scan would keep
                break
        rows = self.rows
        return [rows[i] for i in positions if all(_holds(req, rows[i][0]) for req in requirements)]

    def _by_value(self, key: str) -> dict[str, list[int]]:
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = {}
            for i, (labels, _, _) in enumerate(self.rows):
                index.setdefault(labels.get(key, ""), []).append(i)
        return index


_IN_LIKE = frozenset({Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN})


def _holds(req: Requirement, labels: Mapping[str, str]) -> bool:
    """`req` read as its PromQL matcher reads a series (`adapter.rules.matchers`)."""
    value, op = labels.get(req.key, ""), req.operator
    if op in _IN_LIKE:
        return value in req.values
    if op is Operator.NOT_EQUALS or op is Operator.NOT_IN:
        return value not in req.values
    if op is Operator.EXISTS:
        return value != ""
    if op is Operator.DOES_NOT_EXIST:
        return value == ""
    raise AssertionError(f"{req} reached a batched External answer")  # the planner refuses gt/lt


# gauges repeat their values from one poll to the next: remember the last few thousand strings
_quantity = lru_cache(maxsize=8192)(format_quantity)


@lru_cache(maxsize=64)  # the samples of one query share their evaluation time
def _time(unix: Any) -> datetime:
    """A sample's time (unix seconds, as Prometheus' JSON has it) to the second, in UTC."""
    return datetime.fromtimestamp(int(float(unix)), tz=UTC)


@lru_cache(maxsize=8192)
def _quantity_text(text: str) -> str | None:
    """Prometheus' text of a sample value as a Quantity; None for NaN and the infinities.
    Raises InvalidOperation (an ArithmeticError) for text that is not a number, TypeError for
    a value that is not text (Decimal would take a number: Prometheus sends text)."""
    if type(text) is not str:
        raise TypeError("a sample value is not a string")
    value = Decimal(text)
    return format_quantity(value) if value.is_finite() else None
