"""Discovery indexing (pure): label sets Prometheus returned -> a compact `MetricIndex`.

The server calls `index_series` once per distinct seriesQuery with the label sets of
`/api/v1/series` (any iterable, consumed once, never retained), keeps the last good
`SeriesIndex` per query (so one failing query does not discard the others), and combines them
with `MetricIndex.merge`. Only what the API needs is kept: per custom metric its resource,
name, namespacedness and the (rule, series name) to query; per external metric the same
without the resource. Memory is O(metrics x resources), independent of series count.

Conflicts (two rules giving the same metric for the same resource, or the same external
metric): the rule later in the file wins, as in the peer (its registry is a map written in
rule order). Within one rule, the last series seen wins (also as the peer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from adapter.rules.backends import DEFAULT_BACKEND
from adapter.rules.config import Rule, RulesConfig, SeriesCall
from adapter.rules.naming import NAMESPACES, ResourceLabels, metric_name
from adapter.rules.resources import GroupResource, ResourceInfo, ResourceResolver

__all__ = [
    "CustomMetric",
    "MetricIndex",
    "MetricSource",
    "SeriesIndex",
    "carry_over",
    "index_series",
]


@dataclass(frozen=True)
class MetricSource:
    """Where a metric's values come from: a rule and one Prometheus series (metric) name."""

    rule: Rule
    series: str


@dataclass(frozen=True, order=True)
class CustomMetric:
    """One custom metric as the API lists it: `<resource[.group]>/<metric>`."""

    group_resource: GroupResource
    metric: str
    namespaced: bool  # the resource's scope, from discovery (not guessed from the name)


_Custom = dict[tuple[GroupResource, str], tuple[CustomMetric, MetricSource]]


@dataclass(frozen=True)
class SeriesIndex:
    """What one seriesQuery's result contributes; combine several with `MetricIndex.merge`."""

    series_query: str
    custom: Mapping[tuple[GroupResource, str], tuple[CustomMetric, MetricSource]]
    external: Mapping[str, MetricSource]
    series_seen: int  # label sets read (for the discovery metrics)
    unresolved: frozenset[str] = frozenset()  # override resources the resolver did not know
    backend: str = DEFAULT_BACKEND  # the backend the call went to


class _RuleIndexer:
    """Applies one rule to label sets, memoising per series name and per label name."""

    def __init__(self, rule: Rule, resolver: ResourceResolver) -> None:
        self.rule = rule
        self.labels = ResourceLabels(rule.resources, resolver)
        self.sources: dict[str, MetricSource | None] = {}
        self.names: dict[str, str] = {}
        self.by_keys: dict[tuple[str, ...], tuple[ResourceInfo, ...]] = {}

    def source(self, series: str) -> tuple[str, MetricSource] | None:
        if series not in self.sources:
            name = metric_name(self.rule, series)
            self.sources[series] = None if not name else MetricSource(self.rule, series)
            if name:
                self.names[series] = name
        found = self.sources[series]
        return None if found is None else (self.names[series], found)

    def resources(self, labels: tuple[str, ...]) -> tuple[ResourceInfo, ...]:
        """Resources named by a label set's keys; memoised per distinct key tuple (series of
        one metric nearly always share their label names)."""
        cached = self.by_keys.get(labels)
        if cached is None:
            found = [self.labels.resource_for_label(label) for label in labels]
            infos = [info for info in found if info is not None]
            has_namespace = any(info.group_resource == NAMESPACES for info in infos)
            # a namespaced resource is queried with a namespace matcher, which a series without
            # the namespace label never matches (the peer lists it anyway, as namespaced)
            cached = tuple(info for info in infos if has_namespace or not info.namespaced)
            self.by_keys[labels] = cached
        return cached


def index_series(
    config: RulesConfig,
    series_query: str,
    label_sets: Iterable[Mapping[str, str]],
    *,
    resolver: ResourceResolver,
    backend: str = DEFAULT_BACKEND,
) -> SeriesIndex:
    """Index the series one seriesQuery returned from `backend`, for every rule of that backend
    sharing the query."""
    rules = config.rules_for(series_query, backend=backend)
    indexers = [_RuleIndexer(rule, resolver) for rule in rules]
    custom: _Custom = {}
    external: dict[str, MetricSource] = {}
    seen = 0
    for labels in label_sets:
        seen += 1
        series = labels.get("__name__")
        if not series:
            continue
        keys = tuple(labels)
        for indexer in indexers:
            named = indexer.source(series)
            if named is None:
                continue
            name, source = named
            if indexer.rule.kind == "external":
                if name not in external or not _newer(external[name], source):
                    external[name] = source
                continue
            for info in indexer.resources(keys):
                key = (info.group_resource, name)
                entry = custom.get(key)
                if entry is None or (entry[1] is not source and not _newer(entry[1], source)):
                    custom[key] = (CustomMetric(info.group_resource, name, info.namespaced), source)
    unresolved = frozenset().union(*(indexer.labels.unresolved for indexer in indexers))
    return SeriesIndex(series_query, custom, external, seen, unresolved, backend)


def carry_over(part: SeriesIndex, *, old: RulesConfig, new: RulesConfig) -> SeriesIndex | None:
    """`part` (indexed under `old`) re-pointed at `new`'s rules, when the rules sharing its call
    are unchanged (same text, same relative order, same backend settings); None when the call
    must be discovered again. Positions come from the new rules, so conflicts between calls
    still resolve by the new file's order."""
    call = SeriesCall(part.backend, part.series_query)
    before = old.rules_for(call.series_query, backend=call.backend)
    after = new.rules_for(call.series_query, backend=call.backend)
    if [r.fingerprint for r in before] != [r.fingerprint for r in after] or not after:
        return None
    if old.backends.get(call.backend) != new.backends.get(call.backend):
        return None  # another server (or other credentials) may list other series
    moved = {id(a): b for a, b in zip(before, after, strict=True)}

    def source(src: MetricSource) -> MetricSource:
        return MetricSource(moved[id(src.rule)], src.series)

    custom = {key: (metric, source(src)) for key, (metric, src) in part.custom.items()}
    external = {name: source(src) for name, src in part.external.items()}
    return replace(part, custom=MappingProxyType(custom), external=MappingProxyType(external))


def _newer(a: MetricSource, b: MetricSource) -> bool:
    return a.rule.position > b.rule.position


@dataclass(frozen=True)
class MetricIndex:
    """Every discovered metric, immutable; swap in a new one after each discovery pass."""

    custom: Mapping[tuple[GroupResource, str], tuple[CustomMetric, MetricSource]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    external: Mapping[str, MetricSource] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def merge(cls, parts: Iterable[SeriesIndex]) -> MetricIndex:
        """Combine per-query indexes; on a conflict the later rule in the file wins."""
        custom: _Custom = {}
        external: dict[str, MetricSource] = {}
        for part in parts:
            for key, entry in part.custom.items():
                if key not in custom or not _newer(custom[key][1], entry[1]):
                    custom[key] = entry
            for name, source in part.external.items():
                if name not in external or not _newer(external[name], source):
                    external[name] = source
        return cls(MappingProxyType(custom), MappingProxyType(external))

    def custom_metrics(self) -> tuple[CustomMetric, ...]:
        """Custom metrics in a stable order (resource, then name)."""
        return tuple(sorted(metric for metric, _ in self.custom.values()))

    def external_metrics(self) -> tuple[str, ...]:
        return tuple(sorted(self.external))

    def find_custom(self, resource: GroupResource, metric: str) -> MetricSource | None:
        """The source of `metric` for `resource`, or None when not discovered."""
        entry = self.custom.get((resource, metric))
        return None if entry is None else entry[1]

    def find_external(self, metric: str) -> MetricSource | None:
        return self.external.get(metric)


def build_index(
    config: RulesConfig,
    results: Mapping[str, Iterable[Mapping[str, str]]],
    *,
    resolver: ResourceResolver,
) -> MetricIndex:
    """One-shot: index every seriesQuery's result (queries missing from `results` add none)."""
    return MetricIndex.merge(
        index_series(config, query, results[query], resolver=resolver)
        for query in config.series_queries
        if query in results
    )
