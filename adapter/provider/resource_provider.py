"""The metrics.k8s.io provider: pods and nodes from the cluster, usage from Prometheus.

Objects come from the same watch-backed metadata caches as custom-metric wildcards (labels
included, so label selectors work and PodMetrics carry the pod's labels); for pods, the CPU and
memory queries run once per namespace, concurrently. Unlike the peer, a failing query is not
silently turned into an empty list: the request fails with a 503 Status (the HPA then keeps its
replicas instead of acting on a list with pods missing).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Protocol, cast

from prometheus_client import CollectorRegistry, Counter

from adapter.errors import NotFound
from adapter.prometheus import Sample
from adapter.provider.cache import ResultCache
from adapter.provider.resource_values import (
    Grouped,
    NodeMetrics,
    PodMetrics,
    group_samples,
    node_metrics,
    pod_metrics,
)
from adapter.rules.config import ResourceRules
from adapter.rules.resource_queries import (
    NODES,
    PODS,
    ResourceQuery,
    build_node_query,
    build_pod_query,
)
from adapter.rules.resources import ResourceInfo, ResourceResolver
from common.selectors import EVERYTHING, Selector

__all__ = ["DEFAULT_WINDOW", "ObjectMeta", "ObjectMetaLister", "ResourceMetricsProvider"]

log = logging.getLogger(__name__)

DEFAULT_WINDOW = 60  # seconds: `window` when the rule file sets none (metrics-server's default
# resolution is 60 s, and kubectl/HPA only display or ignore it)
POD_INFO = ResourceInfo(PODS, "v1", "Pod", "pod", True)
NODE_INFO = ResourceInfo(NODES, "v1", "Node", "node", False)

METRICS_GROUP = "metrics.k8s.io"
ObjectMeta = tuple[str, str, Mapping[str, str]]  # (namespace, name, labels)
Keep = Callable[[str, str], bool]  # (namespace, name) -> serve it? (field selectors)


def _ALL(namespace: str, name: str) -> bool:
    return True


class QuerySource(Protocol):
    async def query(
        self, promql: str, *, at: datetime | None = None, rule: str = ""
    ) -> list[Sample]: ...


class QueryBackends(Protocol):
    """The client of each backend by name (`adapter.backends.BackendPool`)."""

    def client(self, name: str) -> QuerySource: ...


class ObjectMetaLister(Protocol):
    """Objects' metadata by label selector (`adapter.kube.KubeObjects` implements it)."""

    async def objects(
        self, info: ResourceInfo, *, namespace: str | None, selector: Selector
    ) -> list[ObjectMeta]:
        """(namespace, name, labels) of the objects of `info` in `namespace` (None: every
        namespace) matching `selector`, sorted by namespace then name. Raises KubeUnavailable
        when the cache cannot sync, BadRequest when the selector matches too many."""
        ...


class ResourceMetricsProvider:
    """PodMetrics and NodeMetrics from `rules` (assign a reloaded file's to `rules`)."""

    def __init__(
        self,
        *,
        rules: ResourceRules | None,
        backends: QueryBackends,
        lister: ObjectMetaLister,
        resolver: ResourceResolver,
        cache: ResultCache[object],
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.rules = rules
        self._backends = backends  # each resource rule queries its own `backend:`
        self._lister = lister
        self._resolver = resolver
        self._cache = cache
        self._missing = Counter(
            "promscaler_adapter_resource_objects_missing_total",
            "Pods or nodes left out of metrics.k8s.io answers: no CPU or no memory sample.",
            ["resource"],
            registry=registry,
        )

    @property
    def enabled(self) -> bool:
        """Whether the rule file has `resourceRules` (metrics.k8s.io is served only then)."""
        return self.rules is not None

    def replace_rules(self, rules: ResourceRules | None) -> None:
        """Serve a reloaded rule file's `resourceRules` (None switches the group off)."""
        self.rules = rules

    def _rules(self) -> ResourceRules:
        if self.rules is None:
            raise NotFound.no_route()
        return self.rules

    @property
    def _window(self) -> int:
        window = self._rules().window_seconds
        return DEFAULT_WINDOW if window is None else window

    # ---- pods ------------------------------------------------------------------------------

    async def list_pods(
        self, *, namespace: str | None, selector: Selector, keep: Keep = _ALL
    ) -> list[PodMetrics]:
        """Metrics of the pods matching `selector` and `keep(namespace, name)` (namespace None:
        all), sorted by namespace and name; pods without samples are left out."""
        rules = self._rules()
        found = await self._lister.objects(POD_INFO, namespace=namespace, selector=selector)
        pods = [pod for pod in found if keep(pod[0], pod[1])]
        by_namespace: dict[str, list[ObjectMeta]] = {}
        for pod in pods:
            by_namespace.setdefault(pod[0], []).append(pod)
        whole = selector.empty and keep is _ALL  # every pod of each namespace is asked for
        results = await asyncio.gather(
            *(
                self._namespace_pods(rules, ns, group, whole_namespace=whole)
                for ns, group in by_namespace.items()
            )
        )
        return [metric for group in results for metric in group]

    async def get_pod(self, *, namespace: str, name: str) -> PodMetrics:
        """One pod's metrics; 404 as metrics-server words it when the pod or its samples are
        missing."""
        rules = self._rules()
        pods = await self._lister.objects(POD_INFO, namespace=namespace, selector=EVERYTHING)
        pod = next((p for p in pods if p[1] == name), None)
        if pod is None:
            raise _not_found("pods", name)
        found = await self._namespace_pods(rules, namespace, [pod])
        if not found:
            raise _not_found("podmetrics", f"{namespace}/{name}", group=METRICS_GROUP)
        return found[0]

    async def _namespace_pods(
        self,
        rules: ResourceRules,
        namespace: str,
        pods: Sequence[ObjectMeta],
        *,
        whole_namespace: bool = False,
    ) -> list[PodMetrics]:
        names = [pod[1] for pod in pods]
        cpu_query, memory_query = (
            build_pod_query(
                rule,
                namespace=namespace,
                names=names,
                resolver=self._resolver,
                whole_namespace=whole_namespace,
            )
            for rule in (rules.cpu, rules.memory)
        )
        cpu, memory = await asyncio.gather(
            self._run(cpu_query, rules.cpu.backend, "cpu"),
            self._run(memory_query, rules.memory.backend, "memory"),
        )
        window = self._window
        out = []
        for ns, name, labels in pods:
            metric = pod_metrics(
                ns, name, cpu.get(name), memory.get(name), window_seconds=window, labels=labels
            )
            if metric is not None:
                out.append(metric)
        self._left_out("pods", len(pods) - len(out))
        return out

    def _left_out(self, resource: str, count: int) -> None:
        if count:
            self._missing.labels(resource).inc(count)
            log.debug("metrics.k8s.io: %d %s without samples left out", count, resource)

    # ---- nodes -----------------------------------------------------------------------------

    async def list_nodes(self, *, selector: Selector, keep: Keep = _ALL) -> list[NodeMetrics]:
        """Metrics of the nodes matching `selector` and `keep("", name)`, sorted by name; nodes
        without samples are left out."""
        rules = self._rules()
        found = await self._lister.objects(NODE_INFO, namespace=None, selector=selector)
        nodes = [node for node in found if keep("", node[1])]
        return await self._nodes(rules, nodes)

    async def get_node(self, *, name: str) -> NodeMetrics:
        rules = self._rules()
        nodes = await self._lister.objects(NODE_INFO, namespace=None, selector=EVERYTHING)
        node = next((n for n in nodes if n[1] == name), None)
        if node is None:
            raise _not_found("nodes", name)
        found = await self._nodes(rules, [node])
        if not found:
            raise _not_found("nodemetrics", name, group=METRICS_GROUP)
        return found[0]

    async def _nodes(self, rules: ResourceRules, nodes: Sequence[ObjectMeta]) -> list[NodeMetrics]:
        if not nodes:
            return []
        names = [node[1] for node in nodes]
        cpu_query = build_node_query(rules.cpu, names=names, resolver=self._resolver)
        memory_query = build_node_query(rules.memory, names=names, resolver=self._resolver)
        cpu, memory = await asyncio.gather(
            self._run(cpu_query, rules.cpu.backend, "cpu"),
            self._run(memory_query, rules.memory.backend, "memory"),
        )
        window = self._window
        out = []
        for _, name, labels in nodes:
            metric = node_metrics(
                name, cpu.get(name), memory.get(name), window_seconds=window, labels=labels
            )
            if metric is not None:
                out.append(metric)
        self._left_out("nodes", len(nodes) - len(out))
        return out

    async def _run(self, query: ResourceQuery, backend: str, resource: str) -> Grouped:
        """The query's samples grouped by object and container, shared through the cache."""

        async def fetch() -> Grouped:
            rule = f"config: resourceRules.{resource}"
            samples = await self._backends.client(backend).query(query.promql, rule=rule)
            return group_samples(
                samples,
                object_label=query.object_label,
                container_label=query.container_label,
                names=query.names_filter,
            )

        key = ("resource", backend, query.promql, query.names_filter)
        return cast(Grouped, await self._cache.get(key, fetch))


def _not_found(resource: str, name: str, *, group: str = "") -> NotFound:
    """apimachinery's NewNotFound: `<resource>[.<group>] "<name>" not found`."""
    qualified = f"{resource}.{group}" if group else resource
    details = {"name": name} | ({"group": group} if group else {}) | {"kind": resource}
    return NotFound(f'{qualified} "{name}" not found', details=details)
