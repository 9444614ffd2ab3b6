"""Fast paths for the repeated parts of a decide document: pods, pod metrics, metric samples,
and history recommendations.

A document has one of each per pod, so these dominate `decide --jsonl`; a controller's pass sends
a stabilization window of recommendations (about 20 at the defaults). Each fast parser accepts
only plainly well-formed input and raises `Slow` at the first surprise; the caller then runs the
validating parser in document.py, which produces the same value or the precise error. So the
fast path never accepts anything the validating one rejects.
"""

from __future__ import annotations

from typing import Any

from autoscaler.core.fields import (
    _MILLI_CACHE,
    _TIME_CACHE,
    DocumentError,
    duration_ns,
    milli,
    time_ns,
)
from autoscaler.core.model import (
    ZERO_TIME,
    ContainerRequests,
    ContainerUsage,
    MetricSample,
    Pod,
    PodMetrics,
    Recommendation,
)
from autoscaler.core.numeric import MAX_INT32

__all__ = ["Slow", "metric_sample", "pod", "pod_metrics", "recommendations"]


class Slow(Exception):
    """The fast path gives up; use the validating parser."""


_SLOW = Slow()
_EMPTY: dict[str, Any] = {}


def _obj(value: Any) -> dict[str, Any]:
    if value is None:
        return _EMPTY
    if type(value) is not dict:
        raise _SLOW
    return value


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    if type(value) is not list:
        raise _SLOW
    return value


def _str(value: Any) -> str:
    if value is None:
        return ""
    if type(value) is not str:
        raise _SLOW
    return value


def _quantities(value: Any) -> dict[str, int]:
    if not value:
        return {}
    if type(value) is not dict:
        raise _SLOW
    out = {}
    cache = _MILLI_CACHE
    for k, v in value.items():
        m = cache.get(v) if type(v) is str else None
        if m is None:
            try:
                m = milli(v, "")
            except DocumentError:
                raise _SLOW from None
        out[k] = m
    return out


def _time(value: Any) -> int:
    cached = _TIME_CACHE.get(value) if type(value) is str else None
    if cached is not None:
        return cached
    try:
        return time_ns(value, "")
    except DocumentError:
        raise _SLOW from None


def _container(c: Any, init: bool) -> ContainerRequests:
    c = _obj(c)
    if c is _EMPTY:
        raise _SLOW
    requests = _quantities(_obj(c.get("resources")).get("requests"))
    return ContainerRequests(
        _str(c.get("name")), requests, init and c.get("restartPolicy") == "Always"
    )


def pod(obj: Any) -> Pod:
    if type(obj) is not dict:
        raise _SLOW
    meta = obj.get("metadata")
    if type(meta) is not dict:
        raise _SLOW
    name = meta.get("name")
    if type(name) is not str:
        raise _SLOW
    spec = _obj(obj.get("spec"))
    status = _obj(obj.get("status"))
    ready = ready_ltt = None
    for c in _list(status.get("conditions")):
        if type(c) is dict and c.get("type") == "Ready":
            ready = _str(c.get("status"))
            ltt = c.get("lastTransitionTime")
            ready_ltt = None if ltt is None else _time(ltt)
            break
    start = status.get("startTime")
    pod_requests = _obj(spec.get("resources")).get("requests")
    return Pod(
        name=name,
        phase=_str(status.get("phase")),
        deleting=meta.get("deletionTimestamp") is not None,
        ready=ready,
        ready_transition=ready_ltt,
        start_time=None if start is None else _time(start),
        containers=tuple([_container(c, False) for c in _list(spec.get("containers"))]),
        init_containers=_inits(spec.get("initContainers")),
        pod_requests=_quantities(pod_requests) if pod_requests else None,
        overhead=_quantities(spec.get("overhead")),
    )


def _inits(value: Any) -> tuple[ContainerRequests, ...]:
    if not value:
        return ()
    return tuple([_container(c, True) for c in _list(value)])


def pod_metrics(obj: Any) -> PodMetrics:
    if type(obj) is not dict:
        raise _SLOW
    meta = obj.get("metadata")
    if type(meta) is not dict or type(meta.get("name")) is not str:
        raise _SLOW
    containers = []
    for c in _list(obj.get("containers")):
        if type(c) is not dict:
            raise _SLOW
        containers.append(ContainerUsage(_str(c.get("name")), _quantities(c.get("usage"))))
    ts = obj.get("timestamp")
    window = obj.get("window")
    try:
        window_ns = 0 if window is None else duration_ns(window, "")
    except DocumentError:
        raise _SLOW from None
    return PodMetrics(
        meta["name"], ZERO_TIME if ts is None else _time(ts), window_ns, tuple(containers)
    )


def metric_sample(obj: Any) -> MetricSample:
    if type(obj) is not dict:
        raise _SLOW
    value = obj.get("value")
    if value is None:
        raise _SLOW
    described = obj.get("describedObject")
    name = _str(described.get("name")) if type(described) is dict else ""
    window = obj.get("windowSeconds")
    if window is not None and (type(window) is not int or window < 0):
        raise _SLOW
    ts = obj.get("timestamp")
    try:
        milli_value = milli(value, "")
    except DocumentError:
        raise _SLOW from None
    return MetricSample(milli_value, ZERO_TIME if ts is None else _time(ts), name, window)


def recommendations(raw: list[Any]) -> tuple[Recommendation, ...]:
    """`history.recommendations`: each an object with an int32 `replicas` and a time."""
    out = []
    for r in raw:
        if type(r) is not dict:
            raise _SLOW
        replicas = r.get("replicas")
        if type(replicas) is not int or not -MAX_INT32 - 1 <= replicas <= MAX_INT32:
            raise _SLOW
        out.append(Recommendation(replicas, _time(r.get("timestamp"))))
    return tuple(out)
