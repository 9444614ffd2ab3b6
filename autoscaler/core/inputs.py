"""The per-pod parts of a decide document: pods and the metric inputs (validating parsers; the
fast paths are in fastparse.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autoscaler.core import fastparse
from autoscaler.core.fields import (
    DocumentError,
    as_int,
    as_list,
    as_obj,
    as_str,
    duration_ns,
    milli,
    time_ns,
)
from autoscaler.core.model import (
    CONTAINER_RESOURCE,
    EXTERNAL,
    OBJECT,
    PODS,
    RESOURCE,
    ZERO_TIME,
    ContainerRequests,
    ContainerUsage,
    MetricError,
    MetricInput,
    MetricItems,
    MetricSample,
    MetricSpec,
    Pod,
    PodMetrics,
    ResourceMetrics,
)

__all__ = ["as_dict", "metric_input", "parse_pod", "required"]


def as_dict(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DocumentError(path, "must be an object")
    return value


def required(obj: Mapping[str, Any], key: str, path: str) -> Any:
    value = obj.get(key)
    if value is None:
        raise DocumentError(f"{path}.{key}", "is required")
    return value


# ---- pods ---------------------------------------------------------------------------------


def parse_pod(obj: Any, path: str) -> Pod:
    """The fields of a core/v1 Pod that a decision reads."""
    try:
        return fastparse.pod(obj)
    except fastparse.Slow:
        return _parse_pod(obj, path)


def _parse_pod(obj: Any, path: str) -> Pod:
    obj = as_dict(obj, path)
    meta = as_obj(obj, "metadata", path, required=True)
    name = as_str(meta, "name", f"{path}.metadata", required=True)
    spec = as_obj(obj, "spec", path)
    status = as_obj(obj, "status", path)
    ready = ready_ltt = None
    for i, c in enumerate(as_list(status, "conditions", f"{path}.status")):
        if isinstance(c, dict) and c.get("type") == "Ready":  # the first Ready condition
            ready = as_str(c, "status", f"{path}.status.conditions[{i}]", default="")
            ltt = c.get("lastTransitionTime")
            ready_ltt = (
                None
                if ltt is None
                else time_ns(ltt, f"{path}.status.conditions[{i}].lastTransitionTime")
            )
            break
    start = status.get("startTime")
    spath = f"{path}.spec"
    pod_res = as_obj(spec, "resources", spath)
    return Pod(
        name=name,
        phase=as_str(status, "phase", f"{path}.status"),
        deleting=meta.get("deletionTimestamp") is not None,
        ready=ready,
        ready_transition=ready_ltt,
        start_time=None if start is None else time_ns(start, f"{path}.status.startTime"),
        containers=tuple(
            _container(c, f"{spath}.containers[{i}]", False)
            for i, c in enumerate(as_list(spec, "containers", spath))
        ),
        init_containers=tuple(
            _container(c, f"{spath}.initContainers[{i}]", True)
            for i, c in enumerate(as_list(spec, "initContainers", spath))
        ),
        pod_requests=_quantities(pod_res, "requests", f"{spath}.resources")
        if pod_res.get("requests")
        else None,
        overhead=_quantities(spec, "overhead", spath),
    )


def _container(obj: Any, path: str, init: bool) -> ContainerRequests:
    obj = as_dict(obj, path)
    resources = as_obj(obj, "resources", path)
    return ContainerRequests(
        name=as_str(obj, "name", path),
        requests=_quantities(resources, "requests", f"{path}.resources"),
        restartable_init=init and obj.get("restartPolicy") == "Always",
    )


def _quantities(obj: Mapping[str, Any], key: str, path: str) -> dict[str, int]:
    raw = as_obj(obj, key, path)
    return {k: milli(v, f"{path}.{key}.{k}") for k, v in raw.items()}


# ---- metric inputs -------------------------------------------------------------------------


def metric_input(obj: Any, spec: MetricSpec, path: str) -> MetricInput:
    obj = as_dict(obj, path)
    if obj.get("error") is not None:
        return MetricError(as_str(obj, "error", path), as_str(obj, "reason", path))
    if spec.type in (RESOURCE, CONTAINER_RESOURCE):
        if obj.get("podMetrics") is None:
            raise DocumentError(path, f"a {spec.type} metric needs podMetrics (or error)")
        items = as_list(obj, "podMetrics", path)
        return ResourceMetrics(
            tuple(_pod_metrics(p, f"{path}.podMetrics[{i}]") for i, p in enumerate(items))
        )
    if spec.type in (PODS, OBJECT, EXTERNAL):
        if obj.get("items") is None:
            raise DocumentError(path, f"a {spec.type} metric needs items (or error)")
        items = as_list(obj, "items", path)
        return MetricItems(tuple(_sample(m, f"{path}.items[{i}]") for i, m in enumerate(items)))
    return MetricError(f"unknown metric source type {spec.type!r}")


def _pod_metrics(obj: Any, path: str) -> PodMetrics:
    try:
        return fastparse.pod_metrics(obj)
    except fastparse.Slow:
        return _pod_metrics_checked(obj, path)


def _pod_metrics_checked(obj: Any, path: str) -> PodMetrics:
    obj = as_dict(obj, path)
    meta = as_obj(obj, "metadata", path, required=True)
    containers = []
    for i, c in enumerate(as_list(obj, "containers", path)):
        cpath = f"{path}.containers[{i}]"
        c = as_dict(c, cpath)
        containers.append(ContainerUsage(as_str(c, "name", cpath), _quantities(c, "usage", cpath)))
    ts = obj.get("timestamp")
    window = obj.get("window")
    return PodMetrics(
        pod=as_str(meta, "name", f"{path}.metadata", required=True),
        timestamp=ZERO_TIME if ts is None else time_ns(ts, f"{path}.timestamp"),
        window=0 if window is None else duration_ns(window, f"{path}.window"),
        containers=tuple(containers),
    )


def _sample(obj: Any, path: str) -> MetricSample:
    try:
        return fastparse.metric_sample(obj)
    except fastparse.Slow:
        return _sample_checked(obj, path)


def _sample_checked(obj: Any, path: str) -> MetricSample:
    obj = as_dict(obj, path)
    if obj.get("value") is None:
        raise DocumentError(f"{path}.value", "is required")
    described = obj.get("describedObject")
    name = ""
    if isinstance(described, dict):
        name = as_str(described, "name", f"{path}.describedObject")
    ts = obj.get("timestamp")
    return MetricSample(
        value=milli(obj["value"], f"{path}.value"),
        timestamp=ZERO_TIME if ts is None else time_ns(ts, f"{path}.timestamp"),
        name=name,
        window_seconds=as_int(obj, "windowSeconds", path, minimum=0),
    )
