"""What the provider needs from the rule engine, as a seam.

`adapter.rules` (pure) turns a rule file into PromQL; this module states the two things the
provider asks of it, so discovery and serving can be tested with a fake and the real engine is
adapted in one place (`adapter.provider.rules_engine`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

from adapter.prometheus import Keyed, RangeSeries, Sample
from adapter.provider.seams import CustomMetricInfo, ExternalMetricInfo
from adapter.rules.backends import DEFAULT_BACKEND
from adapter.rules.config import SeriesCall
from adapter.rules.resources import ResourceInfo
from common.selectors import Selector

T = TypeVar("T")
V = TypeVar("V")


@dataclass(frozen=True)
class PreparedQuery:
    """A rendered query and how to read its result."""

    promql: str
    resource_label: str | None = None  # custom: the label whose value names the object
    window_seconds: int | None = None  # the rule query's range (e.g. [2m] -> 120), if any
    backend: str = DEFAULT_BACKEND  # the backend whose client answers it
    batched: bool = False  # shared by requests for other objects (custom) or selectors (external)
    rule: str = ""  # where the rule is, e.g. "config: rules[3]", for log lines


class PrometheusAPI(Protocol):
    """The calls the provider and discovery make to one backend (`adapter.prometheus`)."""

    async def query(
        self, promql: str, *, at: datetime | None = None, rule: str = ""
    ) -> list[Sample]: ...

    async def query_keyed(
        self,
        promql: str,
        *,
        label: str,
        time_of: Callable[[Any], T],
        value_of: Callable[[Any], V | None],
        rule: str = "",
    ) -> Keyed[T, V]: ...

    async def query_range(
        self,
        promql: str,
        *,
        start: float,
        end: float,
        step: float,
        time_limit: float | None = None,
        rule: str = "",
    ) -> list[RangeSeries]: ...

    async def series(
        self,
        matchers: Sequence[str],
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        time_limit: float | None = None,
        rule: str = "",
    ) -> list[dict[str, str]]: ...


class Backends(Protocol):
    """The client of each backend by name (`adapter.backends.BackendPool`)."""

    def client(self, name: str) -> PrometheusAPI:
        """The client of backend `name` (`default` is the --prometheus-* flags' backend)."""
        ...


class SingleBackend:
    """Every backend name answered by one client: tests, and programs with one Prometheus."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def client(self, name: str) -> PrometheusAPI:
        return self._client  # type: ignore[no-any-return]


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
        batch: bool = False,
        name_regex: str | None = None,
    ) -> PreparedQuery | None:
        """The query for `metric` of objects `names` (not empty) of `resource`; None when that
        metric was not discovered for the resource. `batch`: one namespace-wide query for any
        `names` when the rule allows it (`adapter.rules.batching`; marked `batched`).
        `name_regex` (never batched): the objects whose names match it, in place of `names`
        (`adapter.rules.queries.build_custom_query`).
        Raises adapter.errors.BadRequest for a selector that cannot be translated."""
        ...

    def external_query(
        self, metric: str, *, namespace: str, selector: Selector, batch: bool = False
    ) -> PreparedQuery | None:
        """The query for an external metric; None when it was not discovered. A rule with
        `namespaced: false` ignores `namespace`. `batch`: the query without `selector` when
        the rule groups by every label it names (`adapter.rules.batching`; marked `batched`:
        the caller keeps the series `selector` matches). Raises BadRequest like
        custom_query."""
        ...


class RuleEngine(Protocol):
    """Builds QueryPlanners from discovery results, one (backend, seriesQuery) call at a time
    so a failing call can keep its last good part while the others update."""

    @property
    def series_calls(self) -> Sequence[SeriesCall]:
        """The distinct (backend, seriesQuery) calls, each sent once per discovery pass."""
        ...

    def index_part(self, call: SeriesCall, series: Iterable[Mapping[str, str]]) -> object:
        """A compact summary of what one call found (the label sets are not kept)."""
        ...

    def carry_over(self, part: object, *, previous: RuleEngine) -> object | None:
        """A part `previous` built, usable by this engine when the rules sharing its call did
        not change (a reload re-discovers only the rest); None otherwise."""
        ...

    def combine(self, parts: Mapping[SeriesCall, object]) -> QueryPlanner:
        """A planner over the parts of every call that has answered at least once."""
        ...
