"""Wire shapes of metrics.k8s.io, v1 and v1beta1 (kubernetes/metrics `pkg/apis/metrics/v1`,
`v1beta1`: the same types under two versions, KEP-5207; v1 is GA in Kubernetes 1.37).

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
# served side by side, in preference order: upstream's consumers (the HPA controller's resource
# metrics client, kubectl top) ask discovery and take v1 when it is served, else v1beta1
VERSIONS = ("v1", "v1beta1")


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


def _single(kind: str, item: dict[str, Any], version: str) -> dict[str, Any]:
    return {"kind": kind, "apiVersion": f"{METRICS_GROUP}/{version}", **item}


def _list(kind: str, items: list[dict[str, Any]], version: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "apiVersion": f"{METRICS_GROUP}/{version}",
        "metadata": {},
        "items": items,
    }


def pod_metrics(
    metric: PodMetrics, now: datetime, *, version: str = METRICS_VERSION
) -> dict[str, Any]:
    return _single("PodMetrics", pod_item(metric, now), version)


def pod_metrics_list(
    metrics: Iterable[PodMetrics], now: datetime, *, version: str = METRICS_VERSION
) -> dict[str, Any]:
    return _list("PodMetricsList", [pod_item(m, now) for m in metrics], version)


def node_metrics(
    metric: NodeMetrics, now: datetime, *, version: str = METRICS_VERSION
) -> dict[str, Any]:
    return _single("NodeMetrics", node_item(metric, now), version)


def node_metrics_list(
    metrics: Iterable[NodeMetrics], now: datetime, *, version: str = METRICS_VERSION
) -> dict[str, Any]:
    return _list("NodeMetricsList", [node_item(m, now) for m in metrics], version)


def resource_list(*, version: str = METRICS_VERSION) -> dict[str, Any]:
    """The group-version's APIResourceList, as metrics-server serves it."""
    resources = [
        ("nodes", False, "NodeMetrics"),
        ("pods", True, "PodMetrics"),
    ]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{METRICS_GROUP}/{version}",
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
    versions = [{"groupVersion": f"{METRICS_GROUP}/{v}", "version": v} for v in VERSIONS]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": METRICS_GROUP,
        "versions": versions,
        "preferredVersion": versions[0],
    }


def openapi_paths(*, version: str | None = None) -> dict[str, Any]:
    """Paths of one group-version (None: of every one) for the OpenAPI documents (operation ids
    as upstream's)."""
    if version is None:
        return {p: op for v in VERSIONS for p, op in openapi_paths(version=v).items()}
    base = f"/apis/{METRICS_GROUP}/{version}"
    ok = {"200": {"description": "OK"}}
    v = version.capitalize()  # V1, V1beta1
    routes = {
        f"{base}/": f"getMetrics{v}APIResources",
        f"{base}/nodes": f"listMetrics{v}NodeMetrics",
        f"{base}/nodes/{{name}}": f"readMetrics{v}NodeMetrics",
        f"{base}/pods": f"listMetrics{v}PodMetricsForAllNamespaces",
        f"{base}/namespaces/{{namespace}}/pods": f"listMetrics{v}NamespacedPodMetrics",
        f"{base}/namespaces/{{namespace}}/pods/{{name}}": f"readMetrics{v}NamespacedPodMetrics",
    }
    return {path: {"get": {"operationId": op, "responses": ok}} for path, op in routes.items()}


def openapi_v3_document(*, version: str = METRICS_VERSION) -> dict[str, Any]:
    return {
        "openapi": "3.0.0",
        "info": {"title": "promscaler-adapter", "version": version},
        "paths": openapi_paths(version=version),
        "components": {"schemas": {}},
    }


def openapi_v3_entry(*, version: str = METRICS_VERSION) -> dict[str, str]:
    """The /openapi/v3 index entry: the document's URL with a content hash."""
    doc = json.dumps(openapi_v3_document(version=version), sort_keys=True).encode()
    digest = hashlib.sha512(doc).hexdigest()[:32].upper()
    path = f"apis/{METRICS_GROUP}/{version}"
    return {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
