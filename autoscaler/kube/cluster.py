"""`Cluster` over the Kubernetes API: /scale, pods, the three metrics APIs, status, events.

Metrics are read exactly where the upstream HPA controller reads them
(`pkg/controller/podautoscaler/metrics/client.go`):

- Resource, ContainerResource: `metrics.k8s.io/v1beta1` PodMetrics of the namespace, filtered by
  the target's pod selector;
- Pods: `custom.metrics.k8s.io/v1beta2 namespaces/{ns}/pods/*/{metric}` with `labelSelector`
  (the pod selector) and `metricLabelSelector`;
- Object: `custom.metrics.k8s.io/v1beta2 namespaces/{ns}/{resource.group}/{name}/{metric}`;
- External: `external.metrics.k8s.io/v1beta1 namespaces/{ns}/{metric}` with `labelSelector`
  (the metric's selector).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import orjson

from autoscaler.cluster import ClusterError, Scale
from autoscaler.kube.client import MERGE_PATCH, KubeClient, KubeError
from autoscaler.kube.discovery import Discovery
from autoscaler.kube.events import EventRecorder
from autoscaler.kube.failures import check_entry, failure, reason_of
from autoscaler.kube.informer import Informer
from autoscaler.kube.scalecache import ScaleCache
from autoscaler.kube.sharedreads import SharedReads
from autoscaler.kube.slimpod import slim_pod
from common.labelindex import LabelIndex
from common.selectors import (
    Selector,
    SelectorError,
    parse_selector,
    selector_from_label_selector,
)

__all__ = ["AUTOSCALERS", "KubeCluster"]

JSON = dict[str, Any]
AUTOSCALERS = "/apis/promscaler.dev/v1alpha1"
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1"
RESOURCE = "/apis/metrics.k8s.io/v1beta1"
HISTORY = "/apis/history.promscaler.dev/v1alpha1"
_EMPTY = {  # upstream's error texts for an empty answer (metrics/client.go)
    "podMetrics": "no metrics returned from resource metrics API",
    "custom": "no metrics returned from custom metrics API",
    "external": "no metrics returned from external metrics API",
}


def _seg(text: str) -> str:
    return quote(text, safe="")


class KubeCluster:
    """The production `Cluster`. `component` names the events' source."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        component: str = "promscaler-autoscaler",
        cache_scales: bool = True,
        share_pod_metrics: float = 0.0,
    ) -> None:
        self._kube = kube
        self.discovery = Discovery(kube)
        self.events = EventRecorder(kube, component=component)
        self._pods: dict[str, Informer] = {}
        self.scales = ScaleCache(kube)
        self.cache_scales = cache_scales  # False: GET /scale on every pass, as upstream
        self._pod_labels: dict[str, LabelIndex[str]] = {}  # namespace -> its pods by label
        # > 0: Pods metrics read namespace-wide once per window, shared (kube/sharedreads.py)
        self.shared_reads = SharedReads(share_pod_metrics) if share_pod_metrics > 0 else None

    async def close(self) -> None:
        await asyncio.gather(*(i.stop() for i in self._pods.values()))
        self._pods.clear()
        await self.scales.close()
        self._pod_labels.clear()

    async def get_scale(self, namespace: str, ref: Mapping[str, Any]) -> Scale:
        api_version, kind = str(ref.get("apiVersion") or "v1"), str(ref.get("kind", ""))
        try:
            found = await self.discovery.find(api_version, kind)
        except KubeError as e:
            raise ClusterError("FailedDiscovery", f"discovery of {api_version}: {e}") from e
        if found is None:
            raise ClusterError("UnknownKind", f"no resource of kind {kind!r} in {api_version!r}")
        if not found.has_scale:
            raise ClusterError("NoScale", f"{found.plural} ({kind}) has no /scale subresource")
        collection = f"{found.api_path}/namespaces/{_seg(namespace)}/{found.plural}"
        path = f"{collection}/{_seg(str(ref.get('name', '')))}/scale"

        async def read() -> Scale:
            try:
                return Scale(path=path, raw=await self._kube.request("GET", path))
            except KubeError as e:
                raise ClusterError(
                    e.reason or "Error", f"get {kind}/{ref.get('name')} scale: {e}"
                ) from e

        if not self.cache_scales:
            return await read()
        return await self.scales.get(collection, f"{namespace}/{ref.get('name', '')}", read)

    async def update_scale(self, scale: Scale, replicas: int) -> None:
        body = {**scale.raw, "spec": {**scale.raw.get("spec", {}), "replicas": replicas}}
        try:
            # carries resourceVersion: a Scale read before a change gets a 409, never overwrites
            written = await self._kube.request("PUT", scale.path, body=body)
        except KubeError as e:
            raise ClusterError(e.reason or "Error", f"update scale: {e}") from e
        collection = scale.path.rsplit("/", 2)[0]  # .../{plural}/{name}/scale
        meta = written.get("metadata") or {}
        if self.cache_scales and meta.get("name") and meta.get("namespace"):
            key = f"{meta['namespace']}/{meta['name']}"
            self.scales.put(collection, key, Scale(path=scale.path, raw=written))

    async def list_pods(self, namespace: str, selector: str) -> list[JSON]:
        try:
            sel = _pod_selector(selector)
        except SelectorError as e:
            raise ClusterError("InvalidSelector", str(e)) from e
        informer = self._pods.get(namespace)
        if informer is None:
            index = self._pod_labels[namespace] = LabelIndex()
            path = f"/api/v1/namespaces/{_seg(namespace)}/pods"
            informer = Informer(
                self._kube, path, on_event=lambda k, o: _index(index, k, o), transform=slim_pod
            )
            self._pods[namespace] = informer
            informer.start()
        try:
            if not informer.synced.is_set():  # a wait_for per pass costs a task and a timer
                await asyncio.wait_for(informer.synced.wait(), timeout=self._kube.timeout)
        except TimeoutError as e:
            raise ClusterError("PodsUnavailable", f"pods of {namespace} not listed yet") from e
        pods = informer.objects
        keys = self._pod_labels[namespace].candidates(sel)
        found = pods.values() if keys is None else (pods[k] for k in sorted(keys) if k in pods)
        return [p for p in found if sel.matches(p.get("metadata", {}).get("labels") or {})]

    async def fetch_metric(
        self, namespace: str, metric: Mapping[str, Any], *, pod_selector: str
    ) -> JSON:
        try:
            return check_entry(await self._fetch(namespace, metric, pod_selector))
        except (KubeError, ClusterError, SelectorError) as e:
            reason = "InvalidSelector" if isinstance(e, SelectorError) else reason_of(e)
            return failure(reason, str(e))

    async def _fetch(self, ns: str, metric: Mapping[str, Any], pod_selector: str) -> JSON:
        kind = str(metric.get("type", ""))
        if kind in ("Resource", "ContainerResource"):
            path = f"{RESOURCE}/namespaces/{_seg(ns)}/pods"
            doc = await self._kube.request("GET", path, query=[("labelSelector", pod_selector)])
            return _nonempty("podMetrics", doc.get("items"), _EMPTY["podMetrics"])
        if kind == "Pods":
            source = metric.get("pods") or {}
            name, query = _metric_query(source.get("metric") or {}, "metricLabelSelector")
            path = f"{CUSTOM}/namespaces/{_seg(ns)}/pods/*/{_seg(name)}"
            shared = self.shared_reads
            if shared is not None and shared.wide((ns, name, tuple(query)), self._pod_count(ns)):
                return await self._shared_pods(shared, ns, name, path, query, pod_selector)
            query.insert(0, ("labelSelector", pod_selector))
            doc = await self._kube.request("GET", path, query=query)
            return _nonempty("items", doc.get("items"), _EMPTY["custom"])
        if kind == "Object":
            return await self._fetch_object(ns, metric.get("object") or {})
        if kind == "External":
            source = metric.get("external") or {}
            name, query = _metric_query(source.get("metric") or {}, "labelSelector")
            path = f"{EXTERNAL}/namespaces/{_seg(ns)}/{_seg(name)}"
            doc = await self._kube.request("GET", path, query=query)
            return _nonempty("items", doc.get("items"), _EMPTY["external"])
        return failure("UnknownKind", f"unknown metric source type {kind!r}")

    async def read_history(
        self,
        namespace: str,
        metric: Mapping[str, Any],
        *,
        start: int,
        end: int,
        pod_selector: str = "",
    ) -> tuple[int, list[float | None]]:
        """A metric's history from the adapter's history.promscaler.dev group: (unix seconds
        of the first value, one value a minute; None: no sample). A Pods metric's is the sum
        over the pods of the workload `pod_selector` (the target's /scale selector) selects.
        ClusterError when the read fails (the adapter answered a Status, or could not be
        reached)."""
        try:
            path, query = await self._history_path(namespace, metric, pod_selector)
            query += [("start", str(start)), ("end", str(end)), ("step", "60")]
            # a range read of weeks takes the adapter several Prometheus calls: more than a
            # metric read's time (the history cache bounds it too)
            doc = await self._kube.request("GET", path, query=query, request_timeout=30.0)
        except KubeError as e:
            raise ClusterError(reason_of(e), str(e)) from e
        except SelectorError as e:
            raise ClusterError("InvalidSelector", str(e)) from e
        if not isinstance(doc, dict):
            raise ClusterError("InvalidHistory", "the history answer is not a JSON object")
        values = doc.get("values")
        first = doc.get("start")
        if not isinstance(values, list) or not isinstance(first, int) or doc.get("step") != 60:
            raise ClusterError("InvalidHistory", "the history answer is not a 60s MetricHistory")
        return first, [v if isinstance(v, int | float) else None for v in values]

    async def _history_path(
        self, ns: str, metric: Mapping[str, Any], pod_selector: str
    ) -> tuple[str, list[tuple[str, str]]]:
        """The history path of a metric: the one its value is read from, in the history
        group."""
        if metric.get("type") == "External":
            source = metric.get("external") or {}
            name, query = _metric_query(source.get("metric") or {}, "labelSelector")
            return f"{HISTORY}/namespaces/{_seg(ns)}/{_seg(name)}", query
        if metric.get("type") == "Pods":
            if not pod_selector:  # never every pod of the namespace
                raise ClusterError("InvalidSelector", "the target's /scale has no selector")
            source = metric.get("pods") or {}
            name, query = _metric_query(source.get("metric") or {}, "metricLabelSelector")
            query.insert(0, ("labelSelector", pod_selector))  # as the metric is read
            return f"{HISTORY}/namespaces/{_seg(ns)}/pods/*/{_seg(name)}", query
        source = metric.get("object") or {}
        described = source.get("describedObject") or {}
        api_version, kind = str(described.get("apiVersion") or "v1"), str(described.get("kind", ""))
        found = await self.discovery.find(api_version, kind)
        if found is None:
            raise ClusterError("UnknownKind", f"no resource of kind {kind!r} in {api_version!r}")
        group = api_version.rpartition("/")[0]
        if kind == "Namespace" and not group:
            raise ClusterError("Unsupported", "no history is read for a Namespace's metrics")
        resource = f"{found.plural}.{group}" if group else found.plural
        name, query = _metric_query(source.get("metric") or {}, "metricLabelSelector")
        obj = _seg(str(described.get("name", "")))
        return f"{HISTORY}/namespaces/{_seg(ns)}/{_seg(resource)}/{obj}/{_seg(name)}", query

    def _pod_count(self, ns: str) -> int | None:
        informer = self._pods.get(ns)
        return len(informer.objects) if informer is not None and informer.synced.is_set() else None

    async def _shared_pods(
        self,
        shared: SharedReads,
        ns: str,
        name: str,
        path: str,
        query: list[tuple[str, str]],
        pod_selector: str,
    ) -> JSON:
        """The values of this target's pods, from the namespace's shared answer: the items
        naming a pod the selector matches in the pod cache, in the answer's order."""

        async def fetch() -> dict[str, list[tuple[int, JSON]]]:
            doc = await self._kube.request("GET", path, query=query)
            return _by_pod(doc.get("items") or ())

        by_pod = await shared.read((ns, name, tuple(query)), fetch)
        found = [
            hit
            for pod in await self.list_pods(ns, pod_selector)
            for hit in by_pod.get((pod.get("metadata") or {}).get("name", ""), ())
        ]
        found.sort(key=lambda hit: hit[0])
        return _nonempty("items", [item for _, item in found], _EMPTY["custom"])

    async def _fetch_object(self, ns: str, source: Mapping[str, Any]) -> JSON:
        described = source.get("describedObject") or {}
        api_version, kind = str(described.get("apiVersion") or "v1"), str(described.get("kind", ""))
        found = await self.discovery.find(api_version, kind)
        if found is None:
            return failure("UnknownKind", f"no resource of kind {kind!r} in {api_version!r}")
        group = api_version.rpartition("/")[0]
        resource = (
            f"{found.plural}.{group}" if group else found.plural
        )  # client-go's qualified name
        name, query = _metric_query(source.get("metric") or {}, "metricLabelSelector")
        obj = _seg(str(described.get("name", "")))
        if kind == "Namespace" and not group:  # root-scoped metrics of a namespace
            path = f"{CUSTOM}/namespaces/{obj}/metrics/{_seg(name)}"
        else:
            path = f"{CUSTOM}/namespaces/{_seg(ns)}/{_seg(resource)}/{obj}/{_seg(name)}"
        doc = await self._kube.request("GET", path, query=query)
        if "items" in doc:  # a MetricValueList
            return _nonempty("items", doc.get("items"), _EMPTY["custom"])
        return {"items": [doc]}  # a single MetricValue

    async def annotate_pod(self, namespace: str, name: str, key: str, value: str) -> None:
        path = f"/api/v1/namespaces/{_seg(namespace)}/pods/{_seg(name)}"
        body = {"metadata": {"annotations": {key: value}}}  # touches this one key, nothing else
        try:
            await self._kube.request("PATCH", path, body=body, content_type=MERGE_PATCH)
        except KubeError as e:
            raise ClusterError(e.reason or "Error", f"annotate pod {name}: {e}") from e

    async def patch_status(self, namespace: str, name: str, status: JSON) -> JSON:
        path = f"{AUTOSCALERS}/namespaces/{_seg(namespace)}/autoscalers/{_seg(name)}/status"
        try:
            return await self._kube.request(
                "PATCH", path, body={"status": status}, content_type=MERGE_PATCH
            )
        except KubeError as e:
            raise ClusterError(e.reason or "Error", f"update status: {e}") from e

    async def record_event(
        self, obj: Mapping[str, Any], *, type_: str, reason: str, message: str
    ) -> None:
        await self.events.record(obj, type_=type_, reason=reason, message=message)


def _by_pod(items: Any) -> dict[str, list[tuple[int, JSON]]]:
    """A namespace-wide answer's items by the pod they describe, with their place in it: each
    pass then looks up its own pods instead of walking every pod of the namespace."""
    out: dict[str, list[tuple[int, JSON]]] = {}
    for i, item in enumerate(items):
        described = item.get("describedObject") if isinstance(item, dict) else None
        if isinstance(described, dict):
            out.setdefault(str(described.get("name", "")), []).append((i, item))
    return out


def _index(index: LabelIndex[str], kind: str, pod: JSON) -> None:
    """Keep the pods' label index in step with the pod informer (keyed as the informer is)."""
    meta = pod.get("metadata") or {}
    key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    if kind == "DELETED":
        index.drop(key)
    else:
        index.put(key, meta.get("labels") or {})


@functools.lru_cache(maxsize=65_536)  # a target's selector, parsed once (one per target)
def _pod_selector(text: str) -> Selector:
    return parse_selector(text)


def _metric_query(identifier: Mapping[str, Any], param: str) -> tuple[str, list[tuple[str, str]]]:
    """The metric name and its selector as a query parameter (omitted when empty, as upstream)."""
    raw = identifier.get("selector")
    # the key as text: orjson's bytes keep a 4 KB buffer behind them, which the memo would hold
    key = None if raw is None else orjson.dumps(raw, option=orjson.OPT_SORT_KEYS).decode()
    text = "" if key is None else _selector_text(key)
    query = [(param, text)] if text else []
    return str(identifier.get("name", "")), query


@functools.lru_cache(maxsize=65_536)  # a metric's selector, rendered once (a few per Autoscaler)
def _selector_text(raw: str) -> str:
    """The query-parameter form of a `metav1.LabelSelector` given as its canonical JSON ("" when
    it selects everything); raises SelectorError (not remembered) for a bad one."""
    selector = selector_from_label_selector(orjson.loads(raw))
    return "" if selector.empty else str(selector)


def _nonempty(key: str, items: Any, empty_error: str) -> JSON:
    if not items:
        return failure("Empty", empty_error)
    return {key: list(items)}
