"""Fakes at the controller's seams: a scripted Cluster and a scripted decision function."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Mapping
from typing import Any

from autoscaler.cluster import ClusterError, Scale


class FakeCluster:
    """An in-memory cluster: scales by (kind, name), metric entries by metric name, and a log
    of every write (scale writes, status patches, events)."""

    def __init__(self) -> None:
        self.scales: dict[str, Scale] = {}
        self.scale_errors: dict[str, ClusterError] = {}
        self.update_errors: dict[str, ClusterError] = {}
        self.metrics: dict[str, dict[str, Any]] = {}
        self.pods: list[dict[str, Any]] = []
        self.pod_calls = 0
        self.scale_writes: list[tuple[str, int]] = []
        self.status_patches: list[tuple[str, dict[str, Any]]] = []
        self.events: list[tuple[str, str, str, str]] = []  # (object, type, reason, message)
        self.delay: dict[str, float] = {}  # seconds get_scale takes, per target name
        self.pod_annotations: list[tuple[str, str, str]] = []  # (pod, key, value) written
        self.annotate_errors: dict[str, ClusterError] = {}  # pod name -> its patch fails

    def add_target(self, name: str, replicas: int, *, selector: str = "app=web") -> None:
        raw = {
            "spec": {"replicas": replicas},
            "status": {"replicas": replicas, "selector": selector},
        }
        self.scales[name] = Scale(path=name, raw=raw)

    async def get_scale(self, namespace: str, ref: Mapping[str, Any]) -> Scale:
        name = str(ref.get("name"))
        await asyncio.sleep(self.delay.get(name, 0))
        if name in self.scale_errors:
            raise self.scale_errors[name]
        if name not in self.scales:
            raise ClusterError("NotFound", f"deployments.apps {name!r} not found")
        return self.scales[name]

    async def update_scale(self, scale: Scale, replicas: int) -> None:
        if scale.path in self.update_errors:
            raise self.update_errors[scale.path]
        self.scale_writes.append((scale.path, replicas))
        status = scale.raw["status"]
        self.add_target(scale.path, replicas, selector=status["selector"])

    async def list_pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        self.pod_calls += 1
        return list(self.pods)

    async def fetch_metric(
        self, namespace: str, metric: Mapping[str, Any], *, pod_selector: str
    ) -> dict[str, Any]:
        kind = str(metric.get("type"))
        source = metric.get(kind[:1].lower() + kind[1:]) or {}
        name = str((source.get("metric") or {}).get("name") or source.get("name"))
        return copy.deepcopy(self.metrics.get(name, {"error": f"no metric {name}"}))

    async def annotate_pod(self, namespace: str, name: str, key: str, value: str) -> None:
        if name in self.annotate_errors:
            raise self.annotate_errors[name]
        self.pod_annotations.append((name, key, value))
        for pod in self.pods:
            meta = pod.setdefault("metadata", {})
            if meta.get("name") == name:
                meta.setdefault("annotations", {})[key] = value

    async def patch_status(
        self, namespace: str, name: str, status: dict[str, Any]
    ) -> dict[str, Any]:
        self.status_patches.append((f"{namespace}/{name}", copy.deepcopy(status)))
        return {}

    async def record_event(
        self, obj: Mapping[str, Any], *, type_: str, reason: str, message: str
    ) -> None:
        meta = obj.get("metadata", {})
        self.events.append((f"{meta.get('namespace')}/{meta.get('name')}", type_, reason, message))


class ScriptedDecide:
    """A stand-in for the core's decide_document: returns `result(doc)` and keeps the docs."""

    def __init__(self, result: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.result = result
        self.docs: list[dict[str, Any]] = []

    def __call__(self, doc: dict[str, Any]) -> dict[str, Any]:
        self.docs.append(copy.deepcopy(doc))
        return self.result(doc)


def autoscaler(
    name: str = "web",
    *,
    namespace: str = "default",
    generation: int = 1,
    metrics: list[dict[str, Any]] | None = None,
    status: dict[str, Any] | None = None,
    min_replicas: int = 1,
    max_replicas: int = 10,
) -> dict[str, Any]:
    return {
        "apiVersion": "promscaler.dev/v1alpha1",
        "kind": "Autoscaler",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "generation": generation,
            "uid": f"uid-{name}",
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": min_replicas,
            "maxReplicas": max_replicas,
            "metrics": metrics if metrics is not None else [external("queue", "10")],
        },
        "status": status or {},
    }


def external(name: str, value: str, *, average: bool = False) -> dict[str, Any]:
    target = (
        {"type": "AverageValue", "averageValue": value}
        if average
        else {"type": "Value", "value": value}
    )
    return {"type": "External", "external": {"metric": {"name": name}, "target": target}}


def pods_metric(name: str, average: str) -> dict[str, Any]:
    return {
        "type": "Pods",
        "pods": {
            "metric": {"name": name},
            "target": {"type": "AverageValue", "averageValue": average},
        },
    }


def external_value(value: str) -> dict[str, Any]:
    return {
        "items": [
            {
                "metricName": "queue",
                "metricLabels": {},
                "timestamp": "2026-01-01T00:00:00Z",
                "value": value,
            }
        ]
    }
