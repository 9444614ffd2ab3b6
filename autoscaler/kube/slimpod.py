"""What the controller keeps of each pod it watches: the fields a decision reads (client-go's
informer transform, as kube-controller-manager's own pod caches drop what they do not need).

A pod in a real cluster carries environment, volumes, probes and container statuses: several KB
and dozens of dicts, held for every pod of every namespace with a Pods or Resource metric, and
walked by Python's cycle collector. A decision reads only the name, labels and deletion mark,
the containers' (and the pod's) resource requests, the phase, the start time and the Ready
condition (`autoscaler.core.inputs.parse_pod`), so that is what stays, with one annotation,
`controller.kubernetes.io/pod-deletion-cost` (a scale-down with podDeletionCost writes only the
costs that changed); the decision log records the same slim pods.

Anything not shaped as a pod should be (a container that is not an object, `spec.containers`
that is not a list, ...) is kept as it came, so a malformed pod fails to parse with the same
message as before; `tests/controller/test_slimpod.py` checks that parsing a slim pod gives what
parsing the whole one gives, or the same error.
"""

from __future__ import annotations

from typing import Any

from autoscaler.core.deletioncost import ANNOTATION

__all__ = ["slim_pod"]

JSON = dict[str, Any]

_METADATA = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "labels",
)
_CONTAINER = ("name", "restartPolicy")
_COST = ANNOTATION  # the one annotation a decision may need (busy-aware scale-in)


def slim_pod(obj: JSON) -> JSON:
    """The parts of a core/v1 Pod the controller reads; the rest of `obj` is left out."""
    out: JSON = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    if "metadata" in obj:
        out["metadata"] = meta = _pick(obj["metadata"], _METADATA)
        kept = _annotations(obj["metadata"])
        if kept:
            meta["annotations"] = kept
    if "spec" in obj:
        out["spec"] = _spec(obj["spec"])
    if "status" in obj:
        out["status"] = _status(obj["status"])
    return out


def _annotations(meta: Any) -> JSON:
    """Of the annotations, only the pod-deletion-cost: a scale-down with podDeletionCost writes
    it only where it changes (autoscaler/deletioncost.py)."""
    annotations = meta.get("annotations") if type(meta) is dict else None
    if type(annotations) is not dict or _COST not in annotations:
        return {}
    return {_COST: annotations[_COST]}


def _pick(value: Any, keys: tuple[str, ...]) -> Any:
    if type(value) is not dict:
        return value
    return {k: value[k] for k in keys if k in value}


def _spec(spec: Any) -> Any:
    if type(spec) is not dict:
        return spec
    out: JSON = {}
    for key in ("containers", "initContainers"):
        if key in spec:
            out[key] = _containers(spec[key])
    if "resources" in spec:
        out["resources"] = _requests(spec["resources"])
    if "overhead" in spec:
        out["overhead"] = spec["overhead"]
    return out


def _containers(value: Any) -> Any:
    if type(value) is not list:
        return value
    return [_container(c) for c in value]


def _container(c: Any) -> Any:
    if type(c) is not dict:
        return c
    out = _pick(c, _CONTAINER)
    if "resources" in c:
        out["resources"] = _requests(c["resources"])
    return out


def _requests(resources: Any) -> Any:
    return _pick(resources, ("requests",))


def _status(status: Any) -> Any:
    if type(status) is not dict:
        return status
    out = _pick(status, ("phase", "startTime"))
    if "conditions" in status:
        conditions = status["conditions"]
        if type(conditions) is list:
            # up to the first Ready condition, the one a decision reads; the ones before it
            # keep their places (their types only), so an error in it names the same index
            kept: list[Any] = []
            for c in conditions:
                if type(c) is dict and c.get("type") == "Ready":
                    kept.append(c)
                    break
                kept.append({"type": c.get("type")} if type(c) is dict else c)
            else:
                kept = []
            conditions = kept
        out["conditions"] = conditions
    return out
