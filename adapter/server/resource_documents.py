"""Wire shapes of metrics.k8s.io/v1beta1 (kubernetes/metrics `pkg/apis/metrics/v1beta1`).

PodMetrics: `metadata` (name, namespace, creationTimestamp, labels), `timestamp`, `window` (a Go
duration string, "1m0s"), `containers[].usage` ({cpu, memory} Quantities). NodeMetrics: the
same without namespace and with `usage` at the top. Lists carry no kind on their items, as the
apiserver's JSON encoder writes them; a single object carries kind and apiVersion.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache
from typing import Any

from adapter.provider.resource_values import NodeMetrics, PodMetrics, Usage, go_duration
from common.kubetime import format_time

METRICS_GROUP = "metrics.k8s.io"
METRICS_VERSION = "v1beta1"
GROUP_VERSION = f"{METRICS_GROUP}/{METRICS_VERSION}"


def _usage(usage: Usage) -> dict[str, str]:
    return {"cpu": usage.cpu, "memory": usage.memory}


@lru_cache(maxsize=64)  # every item of an answer shares its times
def _time(at: datetime) -> str:
    return format_time(at)


def _metadata(name: str, namespace: str, labels: Any, now: datetime) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["creationTimestamp"] = _time(now)  # as the peer: the time of the answer
    if labels:
        meta["labels"] = dict(labels)
    return meta


def pod_item(metric: PodMetrics, now: datetime) -> dict[str, Any]:
    return {
        "metadata": _metadata(metric.name, metric.namespace, metric.labels, now),
        "timestamp": _time(metric.timestamp),
        "window": go_duration(metric.window_seconds),
        "containers": [{"name": c.name, "usage": _usage(c.usage)} for c in metric.containers],
    }


def node_item(metric: NodeMetrics, now: datetime) -> dict[str, Any]:
    return {
        "metadata": _metadata(metric.name, "", metric.labels, now),
        "timestamp": _time(metric.timestamp),
        "window": go_duration(metric.window_seconds),
        "usage": _usage(metric.usage),
    }


def _single(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"kind": kind, "apiVersion": GROUP_VERSION, **item}


def _list(kind: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": kind, "apiVersion": GROUP_VERSION, "metadata": {}, "items": items}


def pod_metrics(metric: PodMetrics, now: datetime) -> dict[str, Any]:
    return _single("PodMetrics", pod_item(metric, now))


def pod_metrics_list(metrics: Iterable[PodMetrics], now: datetime) -> dict[str, Any]:
    return _list("PodMetricsList", [pod_item(m, now) for m in metrics])


def node_metrics(metric: NodeMetrics, now: datetime) -> dict[str, Any]:
    return _single("NodeMetrics", node_item(metric, now))


def node_metrics_list(metrics: Iterable[NodeMetrics], now: datetime) -> dict[str, Any]:
    return _list("NodeMetricsList", [node_item(m, now) for m in metrics])


def resource_list() -> dict[str, Any]:
    """The group-version's APIResourceList, as metrics-server serves it."""
    resources = [
        ("nodes", False, "NodeMetrics"),
        ("pods", True, "PodMetrics"),
    ]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": GROUP_VERSION,
        "resources": [
            {
                "name": name,
                "singularName": "",
                "namespaced": namespaced,
                "kind": kind,
                "verbs": ["get", "list"],
            }
            for name, namespaced, kind in resources
        ],
    }


def api_group() -> dict[str, Any]:
    version = {"groupVersion": GROUP_VERSION, "version": METRICS_VERSION}
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": METRICS_GROUP,
        "versions": [version],
        "preferredVersion": version,
    }


def openapi_paths() -> dict[str, Any]:
    """Paths of the group-version for the OpenAPI documents (operation ids as upstream's)."""
    base = f"/apis/{GROUP_VERSION}"
    ok = {"200": {"description": "OK"}}
    routes = {
        f"{base}/": "getMetricsV1beta1APIResources",
        f"{base}/nodes": "listMetricsV1beta1NodeMetrics",
        f"{base}/nodes/{{name}}": "readMetricsV1beta1NodeMetrics",
        f"{base}/pods": "listMetricsV1beta1PodMetricsForAllNamespaces",
        f"{base}/namespaces/{{namespace}}/pods": "listMetricsV1beta1NamespacedPodMetrics",
        f"{base}/namespaces/{{namespace}}/pods/{{name}}": "readMetricsV1beta1NamespacedPodMetrics",
    }
    return {path: {"get": {"operationId": op, "responses": ok}} for path, op in routes.items()}


def openapi_v3_document() -> dict[str, Any]:
    return {
        "openapi": "3.0.0",
        "info": {"title": "promscaler-adapter", "version": "v1beta1"},
        "paths": openapi_paths(),
        "components": {"schemas": {}},
    }


def openapi_v3_entry() -> dict[str, str]:
    """The /openapi/v3 index entry: the document's URL with a content hash."""
    doc = json.dumps(openapi_v3_document(), sort_keys=True).encode()
    digest = hashlib.sha512(doc).hexdigest()[:32].upper()
    return {"serverRelativeURL": f"/openapi/v3/apis/{GROUP_VERSION}?hash={digest}"}
