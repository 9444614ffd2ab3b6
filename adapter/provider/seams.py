"""The provider seams: what the server asks of a metrics backend, and what the provider asks
of the cluster.

Shaped after custom-metrics-apiserver's `provider.CustomMetricsProvider` and
`ExternalMetricsProvider`: the server parses a request, resolves its resource, and asks the
provider; the provider never sees HTTP. Values come back as records (a custom metric answer
as one `CustomValues`) the server renders in either API version.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import NamedTuple, Protocol, overload

from adapter.rules.podnames import PodLineage
from adapter.rules.resources import GroupResource, ResourceInfo
from common.selectors import Selector


@dataclass(frozen=True, order=True)
class CustomMetricInfo:
    """One custom metric as discovery knows it: `<resource[.group]>/<metric>`."""

    group_resource: GroupResource
    namespaced: bool  # whether objects of the resource live in namespaces
    metric: str

    @property
    def api_name(self) -> str:
        """The APIResource name in the discovery document, e.g. "pods/http_requests"."""
        return f"{self.group_resource}/{self.metric}"


@dataclass(frozen=True, order=True)
class ExternalMetricInfo:
    """One external metric as discovery knows it."""

    metric: str


class ObjectReference(NamedTuple):
    """`describedObject`: the Kubernetes object a custom metric value describes. A NamedTuple,
    not a frozen dataclass: one is built per item of every answer, and a frozen dataclass'
    `__init__` (one `object.__setattr__` per field) showed in the hot path's profile."""

    kind: str
    name: str
    api_version: str  # "v1" for core objects (the peer's "/v1" is a bug)
    namespace: str = ""  # "" for cluster-scoped objects


class MetricValue(NamedTuple):
    """One custom metric value, ready to render as a v1beta1 or v1beta2 item (a NamedTuple
    for the same reason as ObjectReference)."""

    described_object: ObjectReference
    metric: str
    timestamp: datetime  # the sample's time, tz-aware UTC
    value: str  # a canonical Quantity string ("1500m")
    window_seconds: int | None = None  # the rule query's range, None when it has none
    metric_selector: Selector | None = None  # the request's metricLabelSelector, if any


class CustomValues(Sequence[MetricValue]):
    """The values of one custom metric answer: what all its items share, once, and the point
    (time, Quantity) of each object that has one, by name.

    It reads as the sequence of MetricValues it stands for, in the order of `names`, leaving
    out the names without a point; those MetricValues are built on first need. The server
    renders straight from `names` and `points` instead (`adapter.server.documents`): a
    wildcard over 100 pods built 200 small tuples only to take them apart again, which cost
    more than the rendering itself. Nothing here is copied: `names` and `points` are shared
    with the provider's caches and must not be changed."""

    __slots__ = (
        "_built",
        "_names",
        "_points",
        "api_version",
        "kind",
        "metric",
        "metric_selector",
        "namespace",
        "window_seconds",
    )

    def __init__(
        self,
        *,
        kind: str,
        api_version: str,
        namespace: str,  # "" for cluster-scoped objects
        metric: str,
        window_seconds: int | None,
        metric_selector: Selector | None,  # None for an empty one, as in MetricValue
        names: Sequence[str],
        points: Mapping[str, tuple[datetime, str]],
    ) -> None:
        self.kind = kind
        self.api_version = api_version
        self.namespace = namespace
        self.metric = metric
        self.window_seconds = window_seconds
        self.metric_selector = metric_selector
        self._names = names
        self._points = points
        self._built: list[MetricValue] | None = None

    @property
    def names(self) -> Sequence[str]:
        """The objects asked for, in the answer's order (some may have no point)."""
        return self._names

    @property
    def points(self) -> Mapping[str, tuple[datetime, str]]:
        """Name -> (time, Quantity) of the objects that have a value."""
        return self._points

    def found(self) -> Iterator[tuple[str, datetime, str]]:
        """(name, time, Quantity) of each object with a point, in the order of `names`."""
        points = self._points.get
        for name in self._names:
            point = points(name)
            if point is not None:
                yield name, point[0], point[1]

    def _values(self) -> list[MetricValue]:
        if self._built is None:
            kind, api_version, namespace = self.kind, self.api_version, self.namespace
            self._built = [
                MetricValue(
                    ObjectReference(kind, name, api_version, namespace),
                    self.metric,
                    when,
                    quantity,
                    self.window_seconds,
                    self.metric_selector,
                )
                for name, when, quantity in self.found()
            ]
        return self._built

    @overload
    def __getitem__(self, index: int) -> MetricValue: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[MetricValue]: ...

    def __getitem__(self, index: int | slice) -> MetricValue | Sequence[MetricValue]:
        return self._values()[index]

    def __len__(self) -> int:
        return len(self._values())

    def __iter__(self) -> Iterator[MetricValue]:
        return iter(self._values())

    def __eq__(self, other: object) -> bool:  # as the list it stands for
        if isinstance(other, CustomValues):
            other = other._values()
        return self._values() == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # like a list: equal to one, so unhashable

    def __repr__(self) -> str:
        return f"CustomValues({self._values()!r})"


@dataclass(frozen=True)
class ExternalMetricValue:
    """One external metric value (an `ExternalMetricValue` item)."""

    metric: str
    timestamp: datetime
    value: str  # a canonical Quantity string
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # no __name__
    window_seconds: int | None = None


class MetricsProvider(Protocol):
    """A metrics backend as the server sees it.

    Errors are `adapter.errors.StatusError`s: `MetricNotFound` (404) for a metric the provider
    does not serve for that resource or a named object without a value, `BadRequest` (400) for
    a selector it cannot translate, `PrometheusUnavailable`/`KubeUnavailable` (503) for a
    backend that cannot answer in time. Non-finite samples (NaN, ±Inf) are never returned.
    """

    def resolve_resource(self, name: str) -> ResourceInfo | None:
        """A resource as written in a URL ("pods", "pod", "deployments.apps") -> its info."""
        ...

    def list_custom_metrics(self) -> Sequence[CustomMetricInfo]:
        """Every custom metric currently discovered (for the APIResourceList)."""
        ...

    def list_external_metrics(self) -> Sequence[ExternalMetricInfo]:
        """Every external metric currently discovered."""
        ...

    def ready(self) -> bool:
        """True once the first discovery pass has finished (drives /readyz)."""
        ...

    async def custom_metric_by_name(
        self,
        resource: ResourceInfo,
        metric: str,
        *,
        namespace: str | None,
        name: str,
        metric_selector: Selector,
    ) -> MetricValue:
        """The value for one named object; `namespace` is None for cluster-scoped resources.

        Raises MetricNotFound when the metric is unknown for the resource or the object has
        no (finite) value.
        """
        ...

    async def custom_metric_by_selector(
        self,
        resource: ResourceInfo,
        metric: str,
        *,
        namespace: str | None,
        selector: Selector,
        metric_selector: Selector,
    ) -> Sequence[MetricValue]:
        """Values of every object of `resource` in `namespace` whose labels match `selector`.

        Objects without a value are omitted; no matching object gives an empty sequence (a
        `CustomValues` from the Prometheus provider, which the server renders fastest). Raises
        MetricNotFound when the metric is unknown for the resource.
        """
        ...

    async def external_metric(
        self, metric: str, *, namespace: str, selector: Selector
    ) -> list[ExternalMetricValue]:
        """Values of an external metric seen from `namespace`, `selector` on its labels.

        Rules with `namespaced: false` ignore `namespace`. Raises MetricNotFound when the
        metric is unknown.
        """
        ...


class ObjectLister(Protocol):
    """Object names by label selector (SECURITY implements it as `adapter.kube.KubeObjects`)."""

    async def names(
        self, info: ResourceInfo, *, namespace: str | None, selector: Selector
    ) -> list[str]:
        """Names of objects of `info` in `namespace` (None: all / cluster-scoped) whose labels
        match `selector`, from a watch-backed cache started on the first request for that
        resource. Raises adapter.errors.KubeUnavailable when the API cannot be reached and the
        cache has never synced."""
        ...


class PodLineages(Protocol):
    """Pods by label selector with where their names came from (`adapter.kube.KubeObjects`)."""

    async def lineage(
        self, info: ResourceInfo, *, namespace: str, selector: Selector
    ) -> list[PodLineage]:
        """The objects of `info` (pods) in `namespace` whose labels match `selector`, each with
        its generateName, controller and pod-template-hash label, from the same watch-backed
        cache as `ObjectLister.names`. Raises KubeUnavailable like it, BadRequest when more
        objects match than a request may cover."""
        ...
