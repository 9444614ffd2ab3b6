"""What the provider needs from the rule engine, as a seam.

`adapter.rules` (pure) turns a rule file into PromQL; this module states the two things the
provider asks of it, so discovery and serving can be tested with a fake and the real engine is
adapted in one place (`adapter.provider.rules_engine`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from adapter.provider.seams import CustomMetricInfo, ExternalMetricInfo
from adapter.rules.resources import ResourceInfo
from common.selectors import Selector


@dataclass(frozen=True)
class PreparedQuery:
    """A rendered query and how to read its result."""

    promql: str
    resource_label: str | None = None  # custom: the label whose value names the object
    window_seconds: int | None = None  # the rule query's range (e.g. [2m] -> 120), if any


class QueryPlanner(Protocol):
    """The discovered metrics and the queries that answer them (one discovery pass)."""

    @property
    def custom(self) -> Sequence[CustomMetricInfo]: ...

    @property
    def external(self) -> Sequence[ExternalMetricInfo]: ...

    def custom_query(
        self,
        resource: ResourceInfo,
        metric: str,
        *,
        namespace: str | None,
        names: Sequence[str],
        metric_selector: Selector,
    ) -> PreparedQuery | None:
        """The query for `metric` of objects `names` (not empty) of `resource`; None when that
        metric was not discovered for the resource.
        Raises adapter.errors.BadRequest for a selector that cannot be translated."""
        ...

    def external_query(
        self, metric: str, *, namespace: str, selector: Selector
    ) -> PreparedQuery | None:
        """The query for an external metric; None when it was not discovered. A rule with
        `namespaced: false` ignores `namespace`. Raises BadRequest like custom_query."""
        ...


class RuleEngine(Protocol):
    """Builds QueryPlanners from discovery results, one seriesQuery at a time so a failing
    call can keep its last good part while the others update."""

    @property
    def series_queries(self) -> Sequence[str]:
        """The distinct seriesQuery strings, each to be sent once per discovery pass."""
        ...

    def index_part(self, series_query: str, series: Iterable[Mapping[str, str]]) -> object:
        """A compact summary of what one seriesQuery found (the label sets are not kept)."""
        ...

    def combine(self, parts: Mapping[str, object]) -> QueryPlanner:
        """A planner over the parts of every seriesQuery that has answered at least once."""
        ...
