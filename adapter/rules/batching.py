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

__all__ = ["batch_obstacle"]

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
