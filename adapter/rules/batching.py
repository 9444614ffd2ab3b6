"""Whether a custom rule's answer for one object can be cut out of a namespace-wide answer.

Batching (`--batch-window`) renders a Pods or Object metric's query once per namespace with the
resource matcher `label!=""` and keeps, per request, only the objects it names. That returns
exactly what the per-request query (`label=~"a|b"`) returns when each object's value depends
only on that object's own series: the query must group by the resource label
(`<<.GroupBy>>`), and must not let the set of selected objects change one object's value.
Templates that do (or may) are answered per request, as before:

- no `<<.GroupBy>>` / `<<.GroupBySlice>>`: results are not per object;
- `<<.LabelValuesByName>>`: the template sees the requested names themselves;
- functions whose value for one series depends on the other selected series (`topk`, `scalar`,
  ratios to a total over `on()` / `ignoring` / `without`, ...).

The check reads the template source; it errs towards "not batchable".
"""

from __future__ import annotations

import re
from functools import lru_cache

from adapter.rules.config import Rule

__all__ = ["batch_obstacle", "external_batch_labels"]

_GROUP_BY = re.compile(r"\.GroupBy(Slice)?\b")
_NAMES = re.compile(r"\.LabelValuesByName\b")
# a series' value depends on which other series were selected
_CROSS_SERIES = re.compile(
    r"\b(topk|bottomk|limitk|limit_ratio|scalar|count_values|quantile|absent|absent_over_time"
    r"|on|ignoring|without|group_left|group_right)\s*\(",
)


@lru_cache(maxsize=4096)  # rules hash by identity; a reload brings new ones
def batch_obstacle(rule: Rule) -> str | None:
    """Why `rule` cannot be answered from a namespace-wide query (None: it can)."""
    source = rule.metrics_query.source
    if not _GROUP_BY.search(source):
        return "its metricsQuery does not group by <<.GroupBy>>"
    if _NAMES.search(source):
        return "its metricsQuery reads <<.LabelValuesByName>>"
    found = _CROSS_SERIES.search(source)
    if found:
        return f"its metricsQuery uses {found.group(1)}(), which mixes objects"
    return None


# External rules: an allowlist, not a denylist. The metricsQuery must be one aggregation by
# literal labels over the rule's series (optionally through one range function), with
# `<<.LabelMatchers>>` its only matchers. Then the requests whose metric selectors only name
# those labels can share one query without the selector: each output series is one group, and
# a group's value depends only on its own series, so filtering the output by a grouping label
# keeps exactly the groups (with the same values) that filtering the input would have made.
# Anything else (`or vector(0)`, binary operators, label_replace, ...) may not commute with
# the filter and is answered per request.
def _action(name: str) -> str:
    return rf"<<-?\s*\.{name}\s*-?>>"


_SERIES = rf"(?:{_action('Series')}|[a-zA-Z_:][a-zA-Z0-9_:]*)"
_VECTOR = rf"{_SERIES}\s*\{{\s*{_action('LabelMatchers')}\s*\}}"
_RANGE_FUNCTIONS = (
    "rate|irate|increase|delta|idelta|deriv|avg_over_time|min_over_time|max_over_time"
    "|sum_over_time|count_over_time|last_over_time|present_over_time"
)
_INNER = rf"(?:{_VECTOR}|(?:{_RANGE_FUNCTIONS})\s*\(\s*{_VECTOR}\s*\[\s*[0-9]+[smhdwy]\s*\]\s*\))"
_AGGREGATIONS = r"(?:sum|min|max|avg|count|group|stddev|stdvar)"
_LABEL_LIST = r"[a-zA-Z_][a-zA-Z0-9_]*(?:\s*,\s*[a-zA-Z_][a-zA-Z0-9_]*)*\s*,?"
_EXTERNAL_SHAPES = (
    re.compile(
        rf"\s*{_AGGREGATIONS}\s*\(\s*{_INNER}\s*\)\s*by\s*\(\s*(?P<labels>{_LABEL_LIST})\s*\)\s*"
    ),
    re.compile(
        rf"\s*{_AGGREGATIONS}\s*by\s*\(\s*(?P<labels>{_LABEL_LIST})\s*\)\s*\(\s*{_INNER}\s*\)\s*"
    ),
)


@lru_cache(maxsize=4096)
def external_batch_labels(rule: Rule) -> frozenset[str] | None:
    """The labels an External rule groups by, when requests whose metric selectors name only
    those labels may share one query without their selectors (None: never share)."""
    source = rule.metrics_query.source
    for shape in _EXTERNAL_SHAPES:
        found = shape.fullmatch(source)
        if found is not None:
            labels = frozenset(
                part.strip() for part in found.group("labels").split(",") if part.strip()
            )
            return labels or None
    return None
