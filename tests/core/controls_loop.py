"""A pass-by-pass driver for the controls: feeds `decide_document` one pass at a time, passing
back the status and history and applying each write to the scale, as the controller does."""

from __future__ import annotations

import copy
from typing import Any

from autoscaler.core import decide_document
from common.kubetime import format_time_ns, parse_time_ns

T0 = parse_time_ns("2026-03-02T06:00:00Z")  # a Monday
NS = 1_000_000_000


def external(threshold: str | None = "5", *, average: str = "10") -> dict[str, Any]:
    """An External metric with an AverageValue target (no pods needed) and an activation."""
    m: dict[str, Any] = {
        "type": "External",
        "external": {
            "metric": {"name": "queue_depth"},
            "target": {"type": "AverageValue", "averageValue": average},
        },
    }
    if threshold is not None:
        m["activation"] = {"threshold": threshold}
    return m


def fast_down(window: int = 0) -> dict[str, Any]:
    """scaleDown: stabilization `window` s, at most 2 pods per 15 s (so N -> 1 takes steps)."""
    return {
        "scaleDown": {
            "stabilizationWindowSeconds": window,
            "policies": [{"type": "Pods", "value": 2, "periodSeconds": 15}],
        }
    }


class Loop:
    """One Autoscaler and its target, pass after pass."""

    def __init__(
        self,
        spec: dict[str, Any],
        *,
        replicas: int,
        now: int = T0,
        period: int = 15,
        created: int | None = None,
        annotations: dict[str, str] | None = None,
        status: dict[str, Any] | None = None,
    ) -> None:
        self.spec = spec
        self.replicas = replicas
        self.now = now
        self.period = period
        self.metadata: dict[str, Any] = {}
        if created is not None:
            self.metadata["creationTimestamp"] = format_time_ns(created)
        if annotations is not None:
            self.metadata["annotations"] = annotations
        self.status: dict[str, Any] = status or {}
        self.history: dict[str, Any] | None = None
        self.results: list[dict[str, Any]] = []
        self.writes: list[int] = []

    def document(self, values: list[Any], conflict: str | None = None) -> dict[str, Any]:
        metrics = [
            {"error": "metric unavailable", "reason": "Unavailable"}
            if v is None
            else {"items": [{"value": str(v)}]}
            for v in values
        ]
        doc: dict[str, Any] = {
            "now": format_time_ns(self.now),
            "autoscaler": {
                "metadata": copy.deepcopy(self.metadata),
                "spec": copy.deepcopy(self.spec),
                "status": copy.deepcopy(self.status),
            },
            "scale": {
                "spec": {"replicas": self.replicas},
                "status": {"replicas": self.replicas, "selector": "app=web"},
            },
            "pods": [],
            "metrics": metrics,
        }
        if self.history is not None:
            doc["history"] = self.history
        if conflict is not None:
            doc["conflict"] = {"message": conflict}
        return doc

    def step(self, *values: Any, conflict: str | None = None) -> dict[str, Any]:
        """One pass with these metric values (None: the metric failed), then time moves on."""
        result = decide_document(self.document(list(values), conflict))
        self.results.append(result)
        self.status = result["status"]
        self.history = result["history"]
        if result["rescale"]:
            self.replicas = result["desiredReplicas"]
            self.writes.append(self.replicas)
        self.now += self.period * NS
        return result

    def run(self, values: list[Any], **kw: Any) -> list[int]:
        """Passes with one metric's values; the replicas after each."""
        out = []
        for v in values:
            self.step(v, **kw)
            out.append(self.replicas)
        return out


def reasons(result: dict[str, Any]) -> list[str]:
    return [e["reason"] for e in result.get("events", [])]


def condition(result: dict[str, Any], type_: str) -> tuple[str, str] | None:
    for c in result["status"]["conditions"]:
        if c["type"] == type_:
            return c["status"], c["reason"]
    return None


def parse(text: str) -> int:
    return parse_time_ns(text)
