"""The seam between the controller and a cluster: what one reconcile pass reads and writes.

`autoscaler.kube.KubeCluster` implements it against the Kubernetes API; tests use a fake. The
controller never sees kubernetes-asyncio or HTTP: every failure arrives as a `ClusterError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Cluster", "ClusterError", "Scale", "failure"]

JSON = dict[str, Any]


class ClusterError(Exception):
    """A read or write failed; `reason` is a short CamelCase word (NotFound, Conflict, ...)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def failure(reason: str, message: str) -> JSON:
    """The metric entry of a metric that could not be had this pass: the document's
    `{"error": ...}`, and `reason`, a CamelCase word that labels the failure counter."""
    return {"error": message, "reason": reason}


@dataclass(frozen=True)
class Scale:
    """An `autoscaling/v1` Scale read from a target's /scale subresource."""

    path: str  # the /scale URL path (or any key a fake likes), used to write it back
    raw: JSON = field(compare=False)  # the Scale document as read (metadata incl. resourceVersion)

    @property
    def replicas(self) -> int:
        return int(self.raw.get("spec", {}).get("replicas", 0) or 0)

    @property
    def selector(self) -> str:
        return str(self.raw.get("status", {}).get("selector", "") or "")

    def document(self) -> JSON:
        """The `scale` entry of the decision document."""
        status = self.raw.get("status", {})
        return {
            "spec": {"replicas": self.replicas},
            "status": {"replicas": int(status.get("replicas", 0) or 0), "selector": self.selector},
        }


class Cluster(Protocol):
    """Reads and writes of one reconcile pass. Methods raise `ClusterError`, except
    `fetch_metric`, which turns a failure into the decision document's `{"error": ...}` entry
    (a metric we cannot read must make the core hold, never scale down)."""

    async def get_scale(self, namespace: str, ref: Mapping[str, Any]) -> Scale:
        """The /scale of `ref` (a CrossVersionObjectReference) in `namespace`."""
        ...

    async def update_scale(self, scale: Scale, replicas: int) -> None:
        """Write `spec.replicas`; a concurrent change (Conflict) is an error, not retried."""
        ...

    async def list_pods(self, namespace: str, selector: str) -> list[JSON]:
        """Pods of `namespace` matching a label-selector string (from a watch-backed cache)."""
        ...

    async def fetch_metric(
        self, namespace: str, metric: Mapping[str, Any], *, pod_selector: str
    ) -> JSON:
        """One `metrics[i]` entry: {"podMetrics": [...]}, {"items": [...]} or {"error": "..."}."""
        ...

    async def annotate_pod(self, namespace: str, name: str, key: str, value: str) -> None:
        """Set one annotation on a pod (a merge patch of metadata.annotations only)."""
        ...

    async def patch_status(self, namespace: str, name: str, status: JSON) -> JSON:
        """Merge-patch the Autoscaler's status subresource; returns the updated object."""
        ...

    async def record_event(
        self, obj: Mapping[str, Any], *, type_: str, reason: str, message: str
    ) -> None:
        """A core/v1 Event about `obj`; repeats are aggregated (count, lastTimestamp)."""
        ...
