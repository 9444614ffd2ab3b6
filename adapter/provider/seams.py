"""The provider seams: what the server asks of a metrics backend, and what the provider asks
of the cluster.

Shaped after custom-metrics-apiserver's `provider.CustomMetricsProvider` and
`ExternalMetricsProvider`: the server parses a request, resolves its resource, and asks the
provider; the provider never sees HTTP. Values come back as frozen dataclasses the server
renders in either API version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import NamedTuple, Protocol

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
    ) -> list[MetricValue]:
        """Values of every object of `resource` in `namespace` whose labels match `selector`.

        Objects without a value are omitted; no matching object gives []. Raises
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
