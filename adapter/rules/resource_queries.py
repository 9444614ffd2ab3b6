"""metrics.k8s.io queries from a rule file's `resourceRules` (pure).

prometheus-adapter's resource provider asks, per resource (cpu, memory), one `containerQuery`
per namespace for pods and one `nodeQuery` for nodes. The template sees:

- `<<.LabelMatchers>>`: pods: the namespace matcher, then the pod matcher (`pod="a"` for one
  name, `pod=~"a|b"` for several, names regex-escaped); nodes: the node matcher alone.
- `<<.GroupBy>>`: pods: `<pod label>,<containerLabel>`; nodes: the node label.
- `<<.Series>>` is empty (resource rules name their series in the query itself).

As for custom metrics, names whose escaped union would exceed `max_names_bytes` become
`label!=""` plus `names_filter`, so a 10,000-pod namespace still sends a bounded query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from adapter.rules.config import ResourceRule
from adapter.rules.errors import RuleQueryError, TemplateError
from adapter.rules.matchers import Matcher, quote, regex_union
from adapter.rules.naming import NAMESPACES, ResourceLabels
from adapter.rules.queries import MAX_NAMES_BYTES
from adapter.rules.resources import GroupResource, ResourceResolver
from adapter.rules.templating import Record

__all__ = ["NODES", "PODS", "ResourceQuery", "build_node_query", "build_pod_query"]

PODS = GroupResource("", "pods")
NODES = GroupResource("", "nodes")


@dataclass(frozen=True)
class ResourceQuery:
    """A rendered resource-metrics query and how to read its samples."""

    promql: str
    object_label: str  # the label naming the pod or node of each sample
    container_label: str = ""  # pods: the label naming the container; "" for nodes
    names_filter: frozenset[str] | None = None  # set: keep only samples naming these objects


def _label(labels: ResourceLabels, resource: GroupResource, where: str) -> str:
    label = labels.label_for_resource(resource)
    if label is None:
        raise RuleQueryError(
            f"unable to fetch metrics: resourceRules maps no label to {resource}"
        ) from LookupError(f"{where}: no label maps to {resource}")
    return label


def _object_matcher(
    label: str, names: Sequence[str], max_bytes: int
) -> tuple[Matcher, frozenset[str] | None]:
    """The matcher for `names` and the names filter the caller must apply, if any."""
    unique = sorted(set(names))
    union = regex_union(unique)
    if len(unique) == 1:
        return Matcher(label, "=", unique[0]), None
    if len(union.encode()) <= max_bytes:
        return Matcher(label, "=~", union), None
    return Matcher(label, "!=", ""), frozenset(unique)  # bounded: filter the answer


def _render(rule: ResourceRule, which: str, matchers: list[Matcher], group_by: list[str]) -> str:
    template = rule.container_query if which == "containerQuery" else rule.node_query
    # `label!=""` (the bounded form) stands for every value: `.+` in LabelValuesByName
    values = {m.label: quote(m.value if m.op != "!=" else ".+")[1:-1] for m in matchers}
    args = {
        "Series": "",
        "LabelMatchers": ",".join(str(m) for m in matchers),
        "LabelValuesByName": values,
        "GroupBy": ",".join(group_by),
        "GroupBySlice": tuple(group_by),
    }
    try:
        text = template.render(Record(args))
    except TemplateError as err:
        raise RuleQueryError() from err
    if not text.strip():
        raise RuleQueryError(f"unable to fetch metrics: resourceRules {which} rendered empty")
    return text


def build_pod_query(
    rule: ResourceRule,
    *,
    namespace: str,
    names: Sequence[str],
    resolver: ResourceResolver,
    where: str = "resourceRules",
    max_names_bytes: int = MAX_NAMES_BYTES,
    whole_namespace: bool = False,
) -> ResourceQuery:
    """The containerQuery for pods `names` (not empty) of `namespace`. `whole_namespace`
    (the names are every pod there, e.g. `kubectl top pods` without a selector) matches
    `pod!=""` instead of naming them: Prometheus answers that far faster than a long regex
    alternation, and the caller only reads the pods it asked for."""
    if not names:
        raise ValueError("build_pod_query needs at least one pod name")
    labels = ResourceLabels(rule.resources, resolver)
    ns_label = _label(labels, NAMESPACES, where)
    pod_label = _label(labels, PODS, where)
    if whole_namespace and len(names) > 1:
        pod, names_filter = Matcher(pod_label, "!=", ""), None
    else:
        pod, names_filter = _object_matcher(pod_label, names, max_names_bytes)
    matchers = [Matcher(ns_label, "=", namespace), pod]
    group_by = [pod_label] + ([rule.container_label] if rule.container_label else [])
    promql = _render(rule, "containerQuery", matchers, group_by)
    return ResourceQuery(promql, pod_label, rule.container_label, names_filter)


def build_node_query(
    rule: ResourceRule,
    *,
    names: Sequence[str],
    resolver: ResourceResolver,
    where: str = "resourceRules",
    max_names_bytes: int = MAX_NAMES_BYTES,
) -> ResourceQuery:
    """The nodeQuery for nodes `names` (not empty)."""
    if not names:
        raise ValueError("build_node_query needs at least one node name")
    labels = ResourceLabels(rule.resources, resolver)
    node_label = _label(labels, NODES, where)
    node, names_filter = _object_matcher(node_label, names, max_names_bytes)
    promql = _render(rule, "nodeQuery", [node], [node_label])
    return ResourceQuery(promql, node_label, "", names_filter)
