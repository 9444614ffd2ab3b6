"""Rendering a rule's metricsQuery for one request.

`<<.LabelMatchers>>` is, in order: the request's metric-selector matchers sorted by key, the
namespace matcher, then (custom only) the resource matcher: `label="name"` for one object,
`label=~"a|b"` (names regex-escaped, sorted, de-duplicated) for several. Every request value
is quoted by `matchers.quote`, so no input can change the query's structure.

Bounded queries: when the escaped names would exceed `max_names_bytes` (default
`MAX_NAMES_BYTES`, 32 KiB), the resource matcher becomes `label!=""` (every object in the
namespace) and `CustomQuery.names_filter` tells the caller to keep only results whose
`resource_label` is one of the requested names. The answer is the same; the query stays small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from adapter.rules.discovery import MetricSource
from adapter.rules.errors import RuleQueryError, TemplateError
from adapter.rules.matchers import Matcher, quote, regex_union, selector_matchers
from adapter.rules.naming import NAMESPACES, ResourceLabels
from adapter.rules.resources import ResourceInfo, ResourceResolver
from adapter.rules.templating import Record
from common.selectors import Selector

__all__ = [
    "MAX_NAMES_BYTES",
    "CustomQuery",
    "ExternalQuery",
    "build_custom_query",
    "build_external_query",
]

MAX_NAMES_BYTES = 32 * 1024  # escaped `a|b|...` bytes before switching to `label!=""`;
# the peer's 16 KB+ queries failed as GET URLs (HTTP 414); the client POSTs long queries and
# Prometheus handles a 32 KiB regex set quickly, but beyond that one namespace-wide query is
# cheaper than matching thousands of alternatives.


@dataclass(frozen=True)
class CustomQuery:
    """A rendered custom-metrics query."""

    promql: str
    resource_label: str  # the label whose value names each result's object
    window_seconds: int | None  # the rule's range (`[2m]` -> 120), None when it has none
    names_filter: frozenset[str] | None = None  # set: keep only results naming these objects


@dataclass(frozen=True)
class ExternalQuery:
    """A rendered external-metrics query."""

    promql: str
    window_seconds: int | None


def _render(source: MetricSource, args: dict[str, object]) -> str:
    try:
        text = source.rule.metrics_query.render(Record(args))
    except TemplateError as err:
        raise RuleQueryError() from err
    if not text.strip():
        raise RuleQueryError("unable to fetch metrics: the rule's query rendered empty")
    return text


def _namespace_label(labels: ResourceLabels, rule_where: str) -> str:
    label = labels.label_for_resource(NAMESPACES)
    if label is None:
        # the rule maps no label to namespaces: the peer fails the same way, at request time
        raise RuleQueryError(
            "unable to fetch metrics: the rule maps no label to namespaces"
        ) from LookupError(f"{rule_where}: no label maps to namespaces")
    return label


def _selector_parts(selector: Selector) -> tuple[list[Matcher], dict[str, str]]:
    matchers: list[Matcher] = []
    values: dict[str, str] = {}
    for matcher, union in selector_matchers(selector):
        matchers.append(matcher)
        values[matcher.label] = _quoted_body(union)
    return matchers, values


def _quoted_body(value: str) -> str:
    """`value` escaped for use between double quotes in a template (`"<<index ...>>"`)."""
    return quote(value)[1:-1]


def build_custom_query(
    source: MetricSource,
    *,
    resource: ResourceInfo,
    namespace: str | None,
    names: Sequence[str],
    metric_selector: Selector,
    resolver: ResourceResolver,
    max_names_bytes: int = MAX_NAMES_BYTES,
    whole_namespace: bool = False,
    name_regex: str | None = None,
) -> CustomQuery:
    """The PromQL for `source`'s metric of objects `names` of `resource` in `namespace`.

    `namespace` is None (or "") for cluster-scoped resources; `names` must not be empty (a
    wildcard that matched no object needs no query). Raises BadRequest for selector input
    PromQL cannot express, RuleQueryError when the rule cannot render. `whole_namespace`
    (batching): match every object of the namespace (`label!=""`) whatever `names` are, so
    requests with different object sets share one query; `names_filter` is then None and the
    caller keeps the objects it asked for. `name_regex` (a Pods metric's history): match the
    objects whose name matches this regex instead of `names`; it must be built from escaped
    parts (`adapter.rules.podnames`); beyond `max_names_bytes` the matcher becomes `label!=""`
    and the caller keeps the objects the regex matches.
    """
    if not names and name_regex is None:
        raise ValueError("build_custom_query needs at least one object name")
    labels = ResourceLabels(source.rule.resources, resolver)
    matchers, values = _selector_parts(metric_selector)
    if namespace:
        label = _namespace_label(labels, source.rule.where)
        matchers.append(Matcher(label, "=", namespace))
        values[label] = _quoted_body(regex_union([namespace]))
    resource_label = labels.label_for_resource(resource.group_resource)
    if resource_label is None:
        raise RuleQueryError() from LookupError(
            f"{source.rule.where}: no label maps to {resource.group_resource}"
        )
    unique = sorted(set(names))
    union = regex_union(unique)
    names_filter = None
    if name_regex is not None and len(name_regex.encode()) <= max_names_bytes:
        matchers.append(Matcher(resource_label, "=~", name_regex))
        union = name_regex
    elif name_regex is not None or (whole_namespace and namespace):
        # a regex too long (its caller keeps what it matches), or batching: the namespace
        matchers.append(Matcher(resource_label, "!=", ""))
        union = ".+"
    elif len(unique) == 1:
        matchers.append(Matcher(resource_label, "=", unique[0]))
    elif len(union.encode()) <= max_names_bytes:
        matchers.append(Matcher(resource_label, "=~", union))
    else:
        matchers.append(Matcher(resource_label, "!=", ""))
        union, names_filter = ".+", frozenset(unique)
    values[resource_label] = _quoted_body(union)
    promql = _render(
        source,
        {
            "Series": source.series,
            "LabelMatchers": ",".join(str(matcher) for matcher in matchers),
            "LabelValuesByName": values,
            "GroupBy": resource_label,
            "GroupBySlice": (resource_label,),
        },
    )
    return CustomQuery(promql, resource_label, source.rule.window_seconds, names_filter)


def build_external_query(
    source: MetricSource,
    *,
    namespace: str | None,
    metric_selector: Selector,
    resolver: ResourceResolver,
) -> ExternalQuery:
    """The PromQL for external metric `source` seen from `namespace`, filtered by
    `metric_selector` on the metric's labels. Rules with `namespaced: false` ignore the
    namespace. `GroupBy` is always empty (so `by (<<.GroupBy>>)` renders `by ()`)."""
    matchers, values = _selector_parts(metric_selector)
    if namespace and source.rule.resources.namespaced:
        label = _namespace_label(ResourceLabels(source.rule.resources, resolver), source.rule.where)
        matchers.append(Matcher(label, "=", namespace))
        values[label] = _quoted_body(regex_union([namespace]))
    promql = _render(
        source,
        {
            "Series": source.series,
            "LabelMatchers": ",".join(str(matcher) for matcher in matchers),
            "LabelValuesByName": values,
            "GroupBy": "",
            "GroupBySlice": (),
        },
    )
    return ExternalQuery(promql, source.rule.window_seconds)
