"""Fakes at the adapter's seams: a provider for server tests, a lister for provider tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from adapter.errors import MetricNotFound, StatusError
from adapter.kube import ObjectStore
from adapter.provider.seams import (
    CustomMetricInfo,
    ExternalMetricInfo,
    ExternalMetricValue,
    MetricValue,
    ObjectReference,
)
from adapter.rules.resources import STATIC_RESOLVER, ResourceInfo
from common.selectors import Selector

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Call:
    method: str
    resource: str
    metric: str
    namespace: str | None
    name: str | None
    selector: str
    metric_selector: str


@dataclass
class FakeProvider:
    """Values by (resource, metric) -> {object name: value}; records every call."""

    custom: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    external: dict[str, list[tuple[dict[str, str], str]]] = field(default_factory=dict)
    window: int | None = 60
    fail: StatusError | Exception | None = None
    is_ready: bool = True
    calls: list[Call] = field(default_factory=list)

    def resolve_resource(self, name: str) -> ResourceInfo | None:
        return STATIC_RESOLVER.resolve(name)

    def list_custom_metrics(self) -> Sequence[CustomMetricInfo]:
        out = []
        for resource, metric in self.custom:
            info = STATIC_RESOLVER.resolve(resource)
            assert info is not None
            out.append(CustomMetricInfo(info.group_resource, info.namespaced, metric))
        return out

    def list_external_metrics(self) -> Sequence[ExternalMetricInfo]:
        return [ExternalMetricInfo(m) for m in self.external]

    def ready(self) -> bool:
        return self.is_ready

    def _values(self, resource: ResourceInfo, metric: str) -> Mapping[str, str]:
        if self.fail is not None:
            raise self.fail
        key = (str(resource.group_resource), metric)
        if key not in self.custom:
            raise MetricNotFound.for_resource(metric, str(resource.group_resource))
        return self.custom[key]

    def _value(self, resource, metric, namespace, name, value, metric_selector) -> MetricValue:
        ref = ObjectReference(resource.kind, name, resource.api_version, namespace or "")
        selector = None if metric_selector.empty else metric_selector
        return MetricValue(ref, metric, T0, value, self.window, selector)

    async def custom_metric_by_name(
        self, resource, metric, *, namespace, name, metric_selector: Selector
    ) -> MetricValue:
        self.calls.append(
            Call(
                "name",
                str(resource.group_resource),
                metric,
                namespace,
                name,
                "",
                str(metric_selector),
            )
        )
        values = self._values(resource, metric)
        if name not in values:
            raise MetricNotFound.for_object(metric, str(resource.group_resource), name)
        return self._value(resource, metric, namespace, name, values[name], metric_selector)

    async def custom_metric_by_selector(
        self, resource, metric, *, namespace, selector: Selector, metric_selector: Selector
    ) -> list[MetricValue]:
        self.calls.append(
            Call(
                "selector",
                str(resource.group_resource),
                metric,
                namespace,
                None,
                str(selector),
                str(metric_selector),
            )
        )
        values = self._values(resource, metric)
        return [
            self._value(resource, metric, namespace, n, v, metric_selector)
            for n, v in values.items()
        ]

    async def external_metric(
        self, metric: str, *, namespace: str, selector: Selector
    ) -> list[ExternalMetricValue]:
        self.calls.append(Call("external", "", metric, namespace, None, str(selector), ""))
        if self.fail is not None:
            raise self.fail
        if metric not in self.external:
            raise MetricNotFound.external(metric)
        return [
            ExternalMetricValue(metric, T0, value, labels, self.window)
            for labels, value in self.external[metric]
        ]


@dataclass
class FakeLister:
    """Objects by (resource, namespace) -> {name: labels}; counts calls."""

    objects: dict[tuple[str, str | None], dict[str, dict[str, str]]] = field(default_factory=dict)
    calls: int = 0

    async def names(
        self, info: ResourceInfo, *, namespace: str | None, selector: Selector
    ) -> list[str]:
        self.calls += 1
        found = self.objects.get((str(info.group_resource), namespace), {})
        return [name for name, labels in found.items() if selector.matches(labels)]


class StoreLister:
    """An ObjectLister over `adapter.kube.ObjectStore`, the watch cache's own store (label
    index, remembered answers) without the watch: the adapter's per-request look-up, for
    benchmarks. Objects as FakeLister's: (resource, namespace) -> {name: labels}."""

    def __init__(self, objects: dict[tuple[str, str | None], dict[str, dict[str, str]]]) -> None:
        items: dict[str, list[dict[str, object]]] = {}
        for (resource, namespace), named in objects.items():
            items.setdefault(resource, []).extend(
                {"metadata": {"namespace": namespace or "", "name": name, "labels": labels}}
                for name, labels in named.items()
            )
        self.stores: dict[str, ObjectStore] = {}
        for resource, listed in items.items():
            self.stores[resource] = store = ObjectStore()
            store.replace(listed)

    async def names(
        self, info: ResourceInfo, *, namespace: str | None, selector: Selector
    ) -> list[str]:
        store = self.stores.get(str(info.group_resource))
        if store is None:
            return []
        return store.names(namespace if info.namespaced else None, selector)
