"""PromQL rule engine, compatible with prometheus-adapter rule files. Pure: no I/O.

- `load_rules(text, source=...)` -> `RulesConfig` (or `RuleError` naming the place);
- `index_series(config, series_query, label_sets, resolver=...)` -> `SeriesIndex` per
  seriesQuery, combined with `MetricIndex.merge(parts)`;
- `build_custom_query(...)` / `build_external_query(...)` -> rendered PromQL for a request.

See docs/rules.md for the accepted format and every deliberate difference from the peer.
"""

from adapter.rules.config import Rule, RulesConfig, load_rules
from adapter.rules.discovery import (
    CustomMetric,
    MetricIndex,
    MetricSource,
    SeriesIndex,
    build_index,
    carry_over,
    index_series,
)
from adapter.rules.errors import RuleError, RuleQueryError
from adapter.rules.queries import (
    MAX_NAMES_BYTES,
    CustomQuery,
    ExternalQuery,
    build_custom_query,
    build_external_query,
)

__all__ = [
    "MAX_NAMES_BYTES",
    "CustomMetric",
    "CustomQuery",
    "ExternalQuery",
    "MetricIndex",
    "MetricSource",
    "Rule",
    "RuleError",
    "RuleQueryError",
    "RulesConfig",
    "SeriesIndex",
    "build_custom_query",
    "build_external_query",
    "build_index",
    "carry_over",
    "index_series",
    "load_rules",
]
