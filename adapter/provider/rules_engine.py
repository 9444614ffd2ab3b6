"""`adapter.rules` behind the provider's `RuleEngine` seam."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

from adapter.errors import ConfigError
from adapter.provider.engine import PreparedQuery
from adapter.provider.seams import CustomMetricInfo, ExternalMetricInfo
from adapter.rules import (
    MetricIndex,
    RuleError,
    RulesConfig,
    SeriesIndex,
    build_custom_query,
    build_external_query,
    carry_over,
    index_series,
    load_rules,
)
from adapter.rules.batching import batch_obstacle, external_batch_labels
from adapter.rules.config import SeriesCall
from adapter.rules.matchers import selector_matchers
from adapter.rules.resources import STATIC_RESOLVER, ResourceInfo, ResourceResolver
from common.selectors import Selector

MEMO_SIZE = 1024  # rendered queries kept per discovery pass
_EVERYTHING = Selector(())


class RulesPlanner:
    """A `QueryPlanner` over one MetricIndex."""

    def __init__(self, index: MetricIndex, resolver: ResourceResolver) -> None:
        self._index = index
        self._resolver = resolver
        # rendered queries by request: rendering a template costs more than the lookup
        self._queries: dict[Hashable, PreparedQuery] = {}
        self.custom: Sequence[CustomMetricInfo] = tuple(
            CustomMetricInfo(m.group_resource, m.namespaced, m.metric)
            for m in index.custom_metrics()
        )
        self.external: Sequence[ExternalMetricInfo] = tuple(
            ExternalMetricInfo(name) for name in index.external_metrics()
        )

    def custom_query(
        self,
        resource: ResourceInfo,
        metric: str,
        *,
        namespace: str | None,
        names: Sequence[str],
        metric_selector: Selector,
        batch: bool = False,
        name_regex: str | None = None,
    ) -> PreparedQuery | None:
        source = self._index.find_custom(resource.group_resource, metric)
        if source is None:
            return None
        # a batched query is the same for every object set: one memo entry per namespace
        batched = batch and bool(namespace) and batch_obstacle(source.rule) is None
        # the objects: all (batched), a regex (a Pods history) or the names (a tuple)
        objects = None if batched else name_regex if name_regex is not None else tuple(names)
        key = (resource, metric, namespace, objects, metric_selector)
        cached = self._queries.get(key)
        if cached is not None:
            return cached
        query = build_custom_query(
            source,
            resource=resource,
            namespace=namespace,
            names=names,
            metric_selector=metric_selector,
            resolver=self._resolver,
            whole_namespace=batched,
            name_regex=name_regex,
        )
        prepared = PreparedQuery(
            query.promql,
            query.resource_label,
            query.window_seconds,
            source.rule.backend,
            batched,
            source.rule.where,
        )
        if len(self._queries) >= MEMO_SIZE:
            self._queries.clear()  # crude but bounded; HPAs ask the same few questions
        self._queries[key] = prepared
        return prepared

    def external_query(
        self, metric: str, *, namespace: str, selector: Selector, batch: bool = False
    ) -> PreparedQuery | None:
        """`batch`: when the rule groups by every label `selector` names
        (`adapter.rules.batching.external_batch_labels`), the query without the selector,
        marked `batched`: the caller keeps the series the selector matches."""
        source = self._index.find_external(metric)
        if source is None:
            return None
        batched = False
        if batch and not selector.empty:
            labels = external_batch_labels(source.rule)
            if labels is not None and all(r.key in labels for r in selector.requirements):
                selector_matchers(selector)  # what PromQL cannot express is a 400 here too
                batched = True
        # a batched query is the same for every selector: one memo entry per namespace
        key = ("external", metric, namespace, None if batched else selector)
        cached = self._queries.get(key)
        if cached is not None:
            return cached
        query = build_external_query(
            source,
            namespace=namespace,
            metric_selector=_EVERYTHING if batched else selector,
            resolver=self._resolver,
        )
        prepared = PreparedQuery(
            query.promql,
            None,
            query.window_seconds,
            source.rule.backend,
            batched,
            rule=source.rule.where,
        )
        if len(self._queries) >= MEMO_SIZE:
            self._queries.clear()
        self._queries[key] = prepared
        return prepared


class RulesEngine:
    """A `RuleEngine` over a loaded rule file; the resolver maps labels to resources."""

    def __init__(self, config: RulesConfig, *, resolver: ResourceResolver) -> None:
        self.config = config
        self._resolver = resolver

    @property
    def series_calls(self) -> Sequence[SeriesCall]:
        return self.config.series_calls

    def index_part(self, call: SeriesCall, series: Iterable[Mapping[str, str]]) -> object:
        return index_series(
            self.config, call.series_query, series, resolver=self._resolver, backend=call.backend
        )

    def carry_over(self, part: object, *, previous: object) -> object | None:
        if not isinstance(part, SeriesIndex) or not isinstance(previous, RulesEngine):
            return None
        return carry_over(part, old=previous.config, new=self.config)

    def combine(self, parts: Mapping[SeriesCall, object]) -> RulesPlanner:
        indexes = [p for p in parts.values() if isinstance(p, SeriesIndex)]
        return RulesPlanner(MetricIndex.merge(indexes), self._resolver)

    def with_resolver(self, resolver: ResourceResolver) -> RulesEngine:
        return RulesEngine(self.config, resolver=resolver)


def load_engine(
    text: str, *, source: str, resolver: ResourceResolver = STATIC_RESOLVER
) -> RulesEngine:
    """Parse a rule file; ConfigError carries the RuleError's place and problem."""
    try:
        config = load_rules(text, source=source)
    except RuleError as err:
        raise ConfigError(str(err)) from err
    return RulesEngine(config, resolver=resolver)
