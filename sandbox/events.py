"""core/v1 Events and events.k8s.io/v1 Events are one resource seen two ways, as upstream.

Objects are stored in the core/v1 shape; the events.k8s.io/v1 view renames fields
(`regarding` <-> `involvedObject`, `note` <-> `message`, `deprecatedCount` <-> `count`...).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

# events.k8s.io/v1 field -> core/v1 field (k8s.io/kubernetes/pkg/apis/events/v1 conversion)
RENAMES = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_BACK = {core: new for new, core in RENAMES.items()}


def to_core(obj: Obj) -> Obj:
    """An events.k8s.io/v1 Event as core/v1."""
    out = {RENAMES.get(k, k): v for k, v in obj.items()}
    out["apiVersion"], out["kind"] = "v1", "Event"
    return out


def from_core(obj: Obj) -> Obj:
    """A core/v1 Event as events.k8s.io/v1."""
    out = {_BACK.get(k, k): v for k, v in obj.items()}
    out["apiVersion"], out["kind"] = "events.k8s.io/v1", "Event"
    return out
