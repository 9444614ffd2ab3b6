"""What a PromQL expression reads: each metric with the labels it matches on, and the labels
each aggregation or vector match groups by, parsed with promql-parser (not by regexes)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import promql_parser as pp

# Grafana's variables, replaced by values of their type so the expression parses
GRAFANA_RANGES = re.compile(r"\$__(rate_interval|interval|range)\b")
GRAFANA_VARIABLE = re.compile(r"\$\{?(\w+)\}?")


@dataclass(frozen=True)
class Selector:
    """A vector selector: its metric name and the label names of its matchers."""

    metric: str
    labels: frozenset[str]


@dataclass(frozen=True)
class Grouping:
    """Labels an aggregation (`by`, `without`) or a vector match (`on`, `ignoring`,
    `group_left`) names, and the metrics below it, one of which must carry them."""

    labels: frozenset[str]
    metrics: frozenset[str]


@dataclass(frozen=True)
class References:
    selectors: tuple[Selector, ...]
    groupings: tuple[Grouping, ...]


def grafana_to_promql(expr: str) -> str:
    """A dashboard query with its `$__rate_interval` and `$var` replaced."""
    expr = GRAFANA_RANGES.sub("5m", expr)
    return GRAFANA_VARIABLE.sub(".*", expr)


def references(expr: str) -> References:
    tree = pp.parse(expr)
    selectors: list[Selector] = []
    groupings: list[Grouping] = []

    def visit(node: object) -> bool:
        if isinstance(node, pp.VectorSelector):
            selectors.append(_selector(node))
        elif isinstance(node, pp.AggregateExpr) and node.modifier is not None:
            groupings.append(Grouping(frozenset(node.modifier.labels), _metrics(node.expr)))
        elif isinstance(node, pp.BinaryExpr) and node.modifier is not None:
            labels = _matching_labels(node.modifier)
            if labels:
                both = _metrics(node.lhs) | _metrics(node.rhs)
                groupings.append(Grouping(labels, both))
        return True

    pp.walk(tree, visit)
    return References(tuple(selectors), tuple(groupings))


def _selector(node: pp.VectorSelector) -> Selector:
    names = [m for m in node.matchers.matchers if m.name == "__name__"]
    metric = node.name or (names[0].value if names else "")
    labels = frozenset(m.name for m in node.matchers.matchers if m.name != "__name__")
    return Selector(metric, labels)


def _matching_labels(modifier: pp.BinModifier) -> frozenset[str]:
    labels = set(modifier.matching.labels) if modifier.matching is not None else set()
    return frozenset(labels | set(modifier.group_labels or ()))


def _metrics(expr: object) -> frozenset[str]:
    found: set[str] = set()

    def visit(node: object) -> bool:
        if isinstance(node, pp.VectorSelector):
            found.add(_selector(node).metric)
        return True

    pp.walk(expr, visit)
    return frozenset(found)
