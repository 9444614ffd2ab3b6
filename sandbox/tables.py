"""`meta.k8s.io/v1 Table` answers for `kubectl get` (server-side printing)."""

from __future__ import annotations

import re
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


def _node_cells(obj: Obj) -> list[Any]:
    conditions = (obj.get("status") or {}).get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    status = "Ready" if ready else "NotReady"
    if (obj.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    prefix = "node-role.kubernetes.io/"
    roles = sorted(
        k[len(prefix) :] for k in obj["metadata"].get("labels") or {} if k.startswith(prefix)
    )
    return [status, ",".join(roles) or "<none>"]


_EXTRA: dict[tuple[str, str], tuple[list[dict[str, Any]], Any]] = {
    ("", "nodes"): (
        [
            {"name": "Status", "type": "string", "format": "", "description": "", "priority": 0},
            {"name": "Roles", "type": "string", "format": "", "description": "", "priority": 0},
        ],
        _node_cells,
    ),
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


_STEP = re.compile(
    r'\.([A-Za-z0-9_-]+)|\[(\d+)\]|\[\?\(@\.([A-Za-z0-9_]+)==["\']([^"\']*)["\']\)\]'
)


def json_path(obj: Any, path: str) -> Any:
    """The value at a CRD printer column's jsonPath (fields, [n], [?(@.f=="v")]); None if absent."""
    pos = 0
    node = obj
    while pos < len(path) and node is not None:
        m = _STEP.match(path, pos)
        if m is None:
            return None
        field, index, key, value = m.groups()
        if field is not None:
            node = node.get(field) if isinstance(node, dict) else None
        elif index is not None:
            node = node[int(index)] if isinstance(node, list) and int(index) < len(node) else None
        else:
            found = [n for n in node or [] if isinstance(n, dict) and str(n.get(key)) == value]
            node = found[0] if found else None
        pos = m.end()
    return node


def _custom_columns(rt: ResourceType, now: datetime) -> tuple[list[Obj], Any]:
    columns = [c for c in rt.printer_columns if c.get("name") and c.get("jsonPath")]

    def cells(obj: Obj) -> list[Any]:
        out = []
        for c in columns:
            value = json_path(obj, c["jsonPath"])
            if c.get("type") == "date" and isinstance(value, str):
                value = _age({"metadata": {"creationTimestamp": value}}, now)
            out.append(value)
        return out

    definitions = [
        {
            "name": c["name"],
            "type": "string" if c.get("type") == "date" else c.get("type", "string"),
            "format": c.get("format", ""),
            "description": c.get("description", ""),
            "priority": c.get("priority", 0),
        }
        for c in columns
    ]
    return definitions, cells


def table(rt: ResourceType, items: list[Obj], *, include: str, now: datetime) -> Obj:
    """kubectl's default columns: Name, a few per-type cells, Age; rows carry the metadata."""
    extra_cols, cells = _EXTRA.get(rt.key, ([], None))
    age = True
    if rt.custom and rt.printer_columns:
        # a CRD's additionalPrinterColumns replace the defaults (Age only if it lists one)
        extra_cols, cells = _custom_columns(rt, now)
        age = False
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
            "cells": [
                obj["metadata"]["name"],
                *(cells(obj) if cells else []),
                *([_age(obj, now)] if age else []),
            ]
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
        "columnDefinitions": [_NAME, *extra_cols, *([_AGE] if age else [])],
        "rows": rows,
    }
