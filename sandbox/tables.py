"""`meta.k8s.io/v1 Table` answers for `kubectl get` (server-side printing)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from common.kubetime import parse_time
from sandbox.resources import ResourceType
from sandbox.store import Obj

_NAME = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "description": "Name must be unique within a namespace.",
    "priority": 0,
}
_AGE = {
    "name": "Age",
    "type": "string",
    "format": "",
    "description": "CreationTimestamp of the object.",
    "priority": 0,
}


def _age(obj: Obj, now: datetime) -> str:
    created = obj["metadata"].get("creationTimestamp")
    if not created:
        return "<unknown>"
    seconds = int((now - parse_time(created)).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size or (unit == "m" and seconds >= size):
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def _pod_cells(obj: Obj) -> list[Any]:
    status = obj.get("status") or {}
    containers = (obj.get("spec") or {}).get("containers") or []
    ready = sum(1 for c in status.get("containerStatuses") or [] if c.get("ready"))
    restarts = sum(int(c.get("restartCount", 0)) for c in status.get("containerStatuses") or [])
    return [f"{ready}/{len(containers)}", status.get("phase", ""), restarts]


def _workload_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}"]


_EXTRA: dict[tuple[str, str], tuple[list[dict[str, Any]], Any]] = {
    ("", "pods"): (
        [
            {"name": "Ready", "type": "string", "format": "", "description": "", "priority": 0},
            {"name": "Status", "type": "string", "format": "", "description": "", "priority": 0},
            {"name": "Restarts", "type": "integer", "format": "", "description": "", "priority": 0},
        ],
        _pod_cells,
    ),
    ("apps", "deployments"): (
        [{"name": "Ready", "type": "string", "format": "", "description": "", "priority": 0}],
        _workload_cells,
    ),
    ("apps", "statefulsets"): (
        [{"name": "Ready", "type": "string", "format": "", "description": "", "priority": 0}],
        _workload_cells,
    ),
}


def table(rt: ResourceType, items: list[Obj], *, include: str, now: datetime) -> Obj:
    """kubectl's default columns: Name, a few per-type cells, Age; rows carry the metadata."""
    extra_cols, cells = _EXTRA.get(rt.key, ([], None))
    rows = []
    for obj in items:
        row_obj: Obj | None
        if include == "Object":
            row_obj = obj
        elif include == "None":
            row_obj = None
        else:
            row_obj = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj["metadata"],
            }
        row: dict[str, Any] = {
            "cells": [obj["metadata"]["name"], *(cells(obj) if cells else []), _age(obj, now)]
        }
        if row_obj is not None:
            row["object"] = row_obj
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {
            "resourceVersion": max(
                (o["metadata"].get("resourceVersion", "0") for o in items), key=int, default="0"
            )
        },
        "columnDefinitions": [_NAME, *extra_cols, _AGE],
        "rows": rows,
    }
