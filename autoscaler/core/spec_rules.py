"""An Autoscaler object judged as the API server judges it with our CRD, for the offline tools.

`parse_spec` and `parse_controls` read what the decision needs and refuse what it cannot use;
the CRD refuses more (its schema's bounds and patterns, and its CEL rules). `check_autoscaler`
runs both parsers and then the CRD's remaining rules, so that a tool that writes an Autoscaler
(`convert`) never prints one that `kubectl apply` would refuse. Errors are DocumentError naming
the field, worded as the CRD's messages.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from autoscaler.core.controls_document import parse_controls
from autoscaler.core.document import parse_spec
from autoscaler.core.fields import DocumentError, as_list, as_obj
from autoscaler.core.spec_schema import check_schema, spec_schema

__all__ = ["check_autoscaler", "check_spec"]

# metav1 ObjectMeta: a name is a DNS subdomain, a namespace a DNS label
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# the CRD's CEL patterns of a schedule
_CRON = re.compile(
    r"^\s*[0-9*,/-]+\s+[0-9*,/-]+\s+[0-9*,/?LW-]+\s+[0-9A-Za-z*,/-]+\s+[0-9A-Za-z*,/?L#-]+\s*$"
)
_ZONE = re.compile(r"^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$")
_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$")
_SOURCES = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "External": "external",
}
_TARGET_KEY = {
    "Utilization": "averageUtilization",
    "Value": "value",
    "AverageValue": "averageValue",
}
# the target kinds each source's CEL rule accepts
_TARGET_KINDS = {
    "object": ("value", "averageValue"),
    "external": ("value", "averageValue"),
    "pods": ("averageValue",),
    "resource": ("averageUtilization", "averageValue"),
    "containerResource": ("averageUtilization", "averageValue"),
}


def check_autoscaler(obj: Mapping[str, Any]) -> None:
    """Raise DocumentError (the path starts at the object: `spec.metrics[0]...`) for what the
    API server would refuse in this Autoscaler."""
    if not isinstance(obj, dict):
        raise DocumentError("(object)", "must be an object")
    _metadata(as_obj(obj, "metadata", "", required=True))
    _spec(obj, spec_schema())


def check_spec(obj: Mapping[str, Any], *, where: str = "") -> None:
    """The same judgement of `obj`'s spec and its metadata's labels and annotations, for a tool
    that reads a spec without the object's identity (`decide`, `simulate`): `where` is put in
    front of every path (`autoscaler.` names a decide document's fields). One difference: the
    spec may leave out `scaleTargetRef`, which neither tool reads (docs/decision-document.md
    says so of a decide document; simulate reads a bare spec); one that is there is judged."""
    try:
        _spec(obj, _without_target())
    except DocumentError as err:
        if not where:
            raise
        raise DocumentError(where + err.path, err.problem) from err


@functools.cache
def _without_target() -> dict[str, Any]:
    schema = spec_schema()
    return {**schema, "required": [k for k in schema["required"] if k != "scaleTargetRef"]}


def _spec(obj: Mapping[str, Any], schema: dict[str, Any]) -> None:
    _labels(as_obj(obj, "metadata", ""))
    spec = as_obj(obj, "spec", "", required=True)
    check_schema(spec, schema, "spec")
    try:
        parse_spec(spec, "spec")
        parse_controls({}, {**obj, "spec": spec})
    except DocumentError as err:  # parse_controls names its fields from `autoscaler.`
        path = err.path.removeprefix("autoscaler.")
        raise DocumentError(path, err.problem) from err
    metrics = as_list(spec, "metrics", "spec")
    for i, metric in enumerate(metrics):
        _metric(metric, f"spec.metrics[{i}]")
    if spec.get("minReplicas") == 0 and not any(
        isinstance(m, dict) and m.get("type") in ("Object", "External") for m in metrics
    ):
        raise DocumentError(
            "spec.minReplicas",
            "minReplicas may be 0 only when at least one metric is of type Object or External",
        )
    behavior = as_obj(spec, "behavior", "spec")
    for direction in ("scaleUp", "scaleDown"):
        _rules(as_obj(behavior, direction, "spec.behavior"), f"spec.behavior.{direction}")
    for i, schedule in enumerate(as_list(spec, "schedules", "spec")):
        _schedule(schedule, f"spec.schedules[{i}]")


def _metadata(meta: Mapping[str, Any]) -> None:
    name = meta.get("name")
    if not isinstance(name, str) or len(name) > 253 or not _SUBDOMAIN.match(name):
        raise DocumentError(
            "metadata.name", f"must be a lowercase RFC 1123 subdomain, not {name!r}"
        )
    namespace = meta.get("namespace")
    if namespace is not None and (
        not isinstance(namespace, str) or len(namespace) > 63 or not _LABEL.match(namespace)
    ):
        raise DocumentError(
            "metadata.namespace", f"must be a lowercase RFC 1123 label, not {namespace!r}"
        )


def _labels(meta: Mapping[str, Any]) -> None:
    for key in ("labels", "annotations"):
        for k, v in as_obj(meta, key, "metadata").items():
            if not isinstance(v, str):
                raise DocumentError(f"metadata.{key}[{k}]", "must be a string")


def _metric(metric: Any, path: str) -> None:
    kind = metric.get("type")
    key = _SOURCES.get(kind)
    if key is None:
        raise DocumentError(f"{path}.type", f"must be one of {', '.join(_SOURCES)}, not {kind!r}")
    for other_kind, other in _SOURCES.items():
        if other != key and other in metric:
            raise DocumentError(
                f"{path}.{other}",
                f"{other} must be set when type is {other_kind}, and only then",
            )
    target = metric[key]["target"]
    tkind = target["type"]
    if target.get(_TARGET_KEY[tkind]) is None:
        raise DocumentError(
            f"{path}.{key}.target.{_TARGET_KEY[tkind]}", f"is required when type is {tkind}"
        )
    allowed = _TARGET_KINDS[key]
    if _TARGET_KEY[tkind] not in allowed:
        raise DocumentError(
            f"{path}.{key}.target.type", f"must set one of {', '.join(allowed)}, not {tkind}"
        )
    if key in ("resource", "containerResource") and all(t in target for t in allowed):
        raise DocumentError(
            f"{path}.{key}.target",
            "may not set both a target raw value and a target utilization",
        )


def _rules(rules: Mapping[str, Any], path: str) -> None:
    if rules.get("policies") == [] and rules.get("selectPolicy") != "Disabled":
        raise DocumentError(
            f"{path}.policies", "must specify at least one policy unless selectPolicy is Disabled"
        )


def _schedule(schedule: dict[str, Any], path: str) -> None:
    if not _CRON.match(schedule["schedule"]):
        raise DocumentError(
            f"{path}.schedule",
            "must be a five-field cron expression (minute hour day-of-month month day-of-week)",
        )
    zone = schedule.get("timeZone", "UTC")
    if not _ZONE.match(zone):
        raise DocumentError(
            f"{path}.timeZone", "must be an IANA time zone name such as Europe/Berlin"
        )
    duration = schedule.get("duration")
    if not isinstance(duration, str) or not _DURATION.match(duration):
        raise DocumentError(f"{path}.duration", "must be a duration such as 30s, 90m or 10h")
