"""Decide documents in a few words: pods, metric inputs and specs as Kubernetes JSON.

Times are offsets in seconds from NOW (negative = in the past); `ZERO` is Go's zero time.
The upstream test settings (tolerance 0.1, CPU initialization 2m, readiness delay 10s) are
`UPSTREAM_CONTROLLER`.
"""

from __future__ import annotations

from typing import Any

from common.kubetime import format_time_ns, parse_time_ns

NOW = "2026-01-01T00:00:00Z"
NOW_NS = parse_time_ns(NOW)
ZERO = "0001-01-01T00:00:00Z"

UPSTREAM_CONTROLLER = {
    "tolerance": 0.1,
    "cpuInitializationPeriodSeconds": 120,
    "initialReadinessDelaySeconds": 10,
    "downscaleStabilizationSeconds": 300,
}


def at(offset: float | str) -> str:
    """NOW plus `offset` seconds as RFC3339 (strings pass through, e.g. ZERO)."""
    if isinstance(offset, str):
        return offset
    return format_time_ns(NOW_NS + round(offset * 1_000_000_000))


def pod(
    name: str,
    *,
    cpu: str | None = "1",
    requests: dict[str, str] | None = None,
    phase: str = "Running",
    ready: str | None = "True",
    start: float | str | None = ZERO,
    ltt: float | str | None = None,
    deleting: bool = False,
    containers: list[dict[str, Any]] | None = None,
    init_containers: list[dict[str, Any]] | None = None,
    pod_requests: dict[str, str] | None = None,
    overhead: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A pod with one container `app` requesting `cpu` (or `requests`)."""
    reqs = dict(requests or {})
    if cpu is not None and "cpu" not in reqs:
        reqs["cpu"] = cpu
    spec: dict[str, Any] = {
        "containers": containers
        if containers is not None
        else [{"name": "app", "resources": {"requests": reqs}}]
    }
    if init_containers:
        spec["initContainers"] = init_containers
    if pod_requests:
        spec["resources"] = {"requests": pod_requests}
    if overhead:
        spec["overhead"] = overhead
    status: dict[str, Any] = {"phase": phase}
    if start is not None:
        status["startTime"] = at(start)
    if ready is not None:
        cond: dict[str, Any] = {"type": "Ready", "status": ready}
        when = ltt if ltt is not None else start
        if when is not None:
            cond["lastTransitionTime"] = at(when)
        status["conditions"] = [cond]
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if deleting:
        meta["deletionTimestamp"] = at(-1)
    return {"metadata": meta, "spec": spec, "status": status}


def pods(n: int, **kw: Any) -> list[dict[str, Any]]:
    return [pod(f"p{i}", **kw) for i in range(n)]


def pod_metrics(
    usage: dict[str, str | int],
    *,
    resource: str = "cpu",
    ts: float | str = 0,
    window: str = "1m0s",
    container: str = "app",
) -> dict[str, Any]:
    """podMetrics for pods by name; int usage means thousandths."""
    return {
        "podMetrics": [
            {
                "metadata": {"name": name, "namespace": "default"},
                "timestamp": at(ts),
                "window": window,
                "containers": [
                    {"name": container, "usage": {resource: f"{v}m" if isinstance(v, int) else v}}
                ],
            }
            for name, v in usage.items()
        ]
    }


def cpu_levels(levels: list[int], **kw: Any) -> dict[str, Any]:
    """Per-pod CPU usage in millicores for pods p0, p1, ..."""
    return pod_metrics({f"p{i}": v for i, v in enumerate(levels)}, **kw)


def pods_items(levels: list[int], *, names: list[str] | None = None) -> dict[str, Any]:
    names = names or [f"p{i}" for i in range(len(levels))]
    return {
        "items": [
            {
                "describedObject": {
                    "kind": "Pod",
                    "name": n,
                    "namespace": "default",
                    "apiVersion": "v1",
                },
                "metric": {"name": "qps"},
                "timestamp": at(0),
                "value": f"{v}m",
            }
            for n, v in zip(names, levels, strict=True)
        ]
    }


def object_item(level: int) -> dict[str, Any]:
    return {
        "items": [
            {
                "describedObject": {
                    "kind": "Ingress",
                    "name": "web",
                    "apiVersion": "networking.k8s.io/v1",
                },
                "metric": {"name": "rps"},
                "timestamp": at(0),
                "value": f"{level}m",
            }
        ]
    }


def external_items(levels: list[int]) -> dict[str, Any]:
    return {
        "items": [
            {"metricName": "queue", "metricLabels": {}, "timestamp": at(0), "value": f"{v}m"}
            for v in levels
        ]
    }


def cpu_utilization(target: int, *, resource: str = "cpu") -> dict[str, Any]:
    return {
        "type": "Resource",
        "resource": {
            "name": resource,
            "target": {"type": "Utilization", "averageUtilization": target},
        },
    }


def cpu_average(target_milli: int, *, resource: str = "cpu") -> dict[str, Any]:
    return {
        "type": "Resource",
        "resource": {
            "name": resource,
            "target": {"type": "AverageValue", "averageValue": f"{target_milli}m"},
        },
    }


def container_utilization(target: int, container: str = "app") -> dict[str, Any]:
    return {
        "type": "ContainerResource",
        "containerResource": {
            "name": "cpu",
            "container": container,
            "target": {"type": "Utilization", "averageUtilization": target},
        },
    }


def pods_metric(target_milli: int) -> dict[str, Any]:
    return {
        "type": "Pods",
        "pods": {
            "metric": {"name": "qps"},
            "target": {"type": "AverageValue", "averageValue": f"{target_milli}m"},
        },
    }


def object_metric(*, value: int | None = None, average: int | None = None) -> dict[str, Any]:
    target: dict[str, Any] = {"type": "Value" if value is not None else "AverageValue"}
    if value is not None:
        target["value"] = f"{value}m"
    if average is not None:
        target["averageValue"] = f"{average}m"
    return {
        "type": "Object",
        "object": {
            "describedObject": {
                "kind": "Ingress",
                "name": "web",
                "apiVersion": "networking.k8s.io/v1",
            },
            "metric": {"name": "rps"},
            "target": target,
        },
    }


def external_metric(*, value: int | None = None, average: int | None = None) -> dict[str, Any]:
    target: dict[str, Any] = {"type": "Value" if value is not None else "AverageValue"}
    if value is not None:
        target["value"] = f"{value}m"
    if average is not None:
        target["averageValue"] = f"{average}m"
    return {
        "type": "External",
        "external": {
            "metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}},
            "target": target,
        },
    }


def document(
    *,
    metrics_spec: list[dict[str, Any]],
    metrics: list[dict[str, Any]],
    current: int,
    status_replicas: int | None = None,
    pod_list: list[dict[str, Any]] | None = None,
    min_replicas: int | None = 1,
    max_replicas: int = 1000,
    behavior: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    history: dict[str, Any] | None = None,
    controller: dict[str, Any] | None = None,
    now: float = 0,
    selector: str = "app=web",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": max_replicas,
        "metrics": metrics_spec,
    }
    if min_replicas is not None:
        spec["minReplicas"] = min_replicas
    if behavior is not None:
        spec["behavior"] = behavior
    doc: dict[str, Any] = {
        "now": at(now),
        "controller": controller if controller is not None else dict(UPSTREAM_CONTROLLER),
        "autoscaler": {"spec": spec, "status": status or {}},
        "scale": {
            "spec": {"replicas": current},
            "status": {
                "replicas": current if status_replicas is None else status_replicas,
                "selector": selector,
            },
        },
        "pods": pod_list if pod_list is not None else [],
        "metrics": metrics,
    }
    if history is not None:
        doc["history"] = history
    return doc


def conditions(result: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """type -> (status, reason) of a result's conditions."""
    return {c["type"]: (c["status"], c["reason"]) for c in result["status"]["conditions"]}
