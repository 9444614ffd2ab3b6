"""The history of an external metric or of one object's custom metric (the
`history.promscaler.dev` group, docs/predictive.md): the rule's own query, built exactly as for
an instant query (the selectors become label matchers, so user input never changes its
structure), run as Prometheus range queries.

The answer is a grid: one value every `step` seconds from `start`, the sum of the series at that
instant (what the HPA sums from an external metric's items; an object's series are those whose
resource label names it; a Pods metric's are those of the pods of the workloads the selector's
pods belong to, past pods included, `adapter.rules.podnames`), None where no series had a
finite sample. Prometheus refuses more
than 11,000 points per series, so a long range is read in chunks of at most CHUNK steps, one
after the other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from adapter.errors import BadRequest, MetricNotFound
from adapter.provider.discovery import Discovery
from adapter.provider.engine import Backends, PreparedQuery
from adapter.provider.seams import PodLineages
from adapter.rules.podnames import pod_name_pattern
from adapter.rules.resources import ResourceInfo
from common.selectors import Selector

__all__ = ["CHUNK", "MAX_RANGE", "MAX_STEP", "MIN_STEP", "History", "RangeHistory"]

MIN_STEP = 60  # seconds: the model's grid; finer would only cost Prometheus more
MAX_STEP = 3600  # seconds: coarser than an hour is no history to forecast minutes from
MAX_RANGE = 840 * 3600  # seconds: five weeks, the longest `spec.predictive.history`
CHUNK = 10_080  # steps per range query: a week of minutes, under Prometheus' 11,000 points


@dataclass(frozen=True)
class History:
    """values[i] is the metric at start + i * step (unix seconds); None: no sample."""

    metric: str
    start: int
    step: int
    values: list[float | None]


class RangeHistory:
    """Range reads of the external and custom metrics the discovered rules serve. `pods`
    gives the pods a selector matches and where their names came from (without it, a Pods
    metric's history is a 404)."""

    def __init__(
        self, *, backends: Backends, discovery: Discovery, pods: PodLineages | None = None
    ) -> None:
        self._backends = backends
        self._discovery = discovery
        self._pods = pods

    async def external_history(
        self, metric: str, *, namespace: str, selector: Selector, start: int, end: int, step: int
    ) -> History:
        """The grid over [start, end] (start rounded down to a step). Raises MetricNotFound
        for a metric no rule serves, BadRequest for a bad range, PrometheusUnavailable (503)
        when Prometheus cannot answer."""
        check_range(start=start, end=end, step=step)
        query = self._discovery.planner.external_query(
            metric, namespace=namespace, selector=selector
        )
        if query is None:
            raise MetricNotFound.external(metric)
        return await self._grid(query, metric, start, end, step, lambda labels: True)

    async def object_history(
        self,
        resource: ResourceInfo,
        metric: str,
        *,
        namespace: str,
        name: str,
        metric_selector: Selector,
        start: int,
        end: int,
        step: int,
    ) -> History:
        """The grid of one namespaced object's custom metric (an HPA Object metric)."""
        check_range(start=start, end=end, step=step)
        query = self._discovery.planner.custom_query(
            resource, metric, namespace=namespace, names=[name], metric_selector=metric_selector
        )
        if query is None:
            raise MetricNotFound.for_resource(metric, str(resource.group_resource))
        label = query.resource_label

        def named(labels: Mapping[str, str]) -> bool:
            return label is None or labels.get(label) == name

        return await self._grid(query, metric, start, end, step, named)

    async def pods_history(
        self,
        resource: ResourceInfo,
        metric: str,
        *,
        namespace: str,
        selector: Selector,
        metric_selector: Selector,
        start: int,
        end: int,
        step: int,
    ) -> History:
        """The grid of a Pods metric: at each step, the sum over the pods then alive of the
        workloads whose pods `selector` matches now (their earlier pods included: the regex of
        `adapter.rules.podnames`). No pod matching now: every value None, and no query. Raises
        KubeUnavailable (503) when the pods cannot be listed, BadRequest when they are too
        many."""
        check_range(start=start, end=end, step=step)
        planner = self._discovery.planner
        if self._pods is None or not any(
            m.group_resource == resource.group_resource and m.metric == metric
            for m in planner.custom
        ):
            raise MetricNotFound.for_resource(metric, str(resource.group_resource))
        pods = await self._pods.lineage(resource, namespace=namespace, selector=selector)
        pattern = pod_name_pattern(pods)
        first = start - start % step
        if pattern is None:
            return History(metric, first, step, [None] * ((end - first) // step + 1))
        query = planner.custom_query(
            resource,
            metric,
            namespace=namespace,
            names=(),
            metric_selector=metric_selector,
            name_regex=pattern,
        )
        if query is None:
            raise MetricNotFound.for_resource(metric, str(resource.group_resource))
        label, names = query.resource_label, re.compile(f"(?:{pattern})")

        def ours(labels: Mapping[str, str]) -> bool:
            # the query matched them already unless the regex was too long for it
            return label is None or names.fullmatch(labels.get(label, "")) is not None

        return await self._grid(query, metric, start, end, step, ours)

    async def _grid(
        self,
        query: PreparedQuery,
        metric: str,
        start: int,
        end: int,
        step: int,
        keep: Callable[[Mapping[str, str]], bool],
    ) -> History:
        client = self._backends.client(query.backend)
        first = start - start % step
        count = (end - first) // step + 1
        sums: list[float | None] = [None] * count
        for lo in range(0, count, CHUNK):
            hi = min(count, lo + CHUNK) - 1
            series = await client.query_range(
                query.promql,
                start=first + lo * step,
                end=first + hi * step,
                step=step,
                rule=query.rule,
            )
            for one in series:
                if not keep(one.labels):
                    continue
                for ts, value in one.points:
                    i = round((ts - first) / step)
                    number = float(value)
                    if 0 <= i < count and math.isfinite(number):
                        held = sums[i]
                        sums[i] = number if held is None else held + number
        return History(metric, first, step, sums)


def check_range(*, start: int, end: int, step: int) -> None:
    """BadRequest naming the parameter for a range the history route does not serve."""
    if not MIN_STEP <= step <= MAX_STEP:
        raise BadRequest(f"step: must be between {MIN_STEP} and {MAX_STEP} seconds, not {step}")
    if end < start:
        raise BadRequest(f"end: must not be before start ({end} < {start})")
    if end - start > MAX_RANGE:
        raise BadRequest(f"end: the range may span at most {MAX_RANGE // 3600}h")
