"""Defaults and validation of the kinds users' rules touch beyond the workloads: ingresses,
persistent volumes and claims, jobs, daemonsets and horizontal pod autoscalers.

Each mirrors what upstream's defaulting (`pkg/apis/*/v*/defaults.go`), registry strategy
(`PrepareForCreate`) and validation say about the fields this project reads; the rest of an
object is stored as sent. Causes are (reason, field, message) as in `strategies`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from common.quantity import QuantityError, parse_quantity
from common.selectors import SelectorError, selector_from_label_selector

Cause = tuple[str, str, str]
Obj = dict[str, Any]

INGRESSES = ("networking.k8s.io", "ingresses")
PVS = ("", "persistentvolumes")
PVCS = ("", "persistentvolumeclaims")
JOBS = ("batch", "jobs")
DAEMONSETS = ("apps", "daemonsets")
HPAS = ("autoscaling", "horizontalpodautoscalers")
KEYS = frozenset({INGRESSES, PVS, PVCS, JOBS, DAEMONSETS, HPAS})
# kinds whose spec changes bump metadata.generation (their strategies do it)
WITH_GENERATION = frozenset({JOBS, DAEMONSETS, INGRESSES})

_ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
_PV_SOURCES = (
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "csi",
    "fc",
    "flexVolume",
    "flocker",
    "gcePersistentDisk",
    "glusterfs",
    "hostPath",
    "iscsi",
    "local",
    "nfs",
    "photonPersistentDisk",
    "portworxVolume",
    "quobyte",
    "rbd",
    "scaleIO",
    "storageos",
    "vsphereVolume",
)
_PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
_METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
_SOURCES = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}


def _required(field: str) -> Cause:
    return ("FieldValueRequired", field, "Required value")


def _invalid(field: str, value: Any, why: str) -> Cause:
    shown = f'"{value}"' if isinstance(value, str) else value
    return ("FieldValueInvalid", field, f"Invalid value: {shown}: {why}")


def _unsupported(field: str, value: Any, allowed: tuple[str, ...]) -> Cause:
    options = ", ".join(f'"{a}"' for a in allowed)
    return (
        "FieldValueNotSupported",
        field,
        f'Unsupported value: "{value}": supported values: {options}',
    )


def _quantity(field: str, value: Any) -> list[Cause]:
    try:
        parse_quantity(str(value))
    except QuantityError:
        return [_invalid(field, value, "must be a valid quantity")]
    return []


# ---- defaults ------------------------------------------------------------------------------


def prepare(key: tuple[str, str], obj: Obj, *, now: str) -> Obj:
    """Defaults and initial status of a new object of one of these kinds."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    _DEFAULTS[key](obj, spec, now)
    return obj


def _ingress(obj: Obj, spec: Obj, now: str) -> None:
    obj["status"] = {"loadBalancer": {}}


def _pv(obj: Obj, spec: Obj, now: str) -> None:
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    # the PV controller makes it Available; the API server starts it Pending
    obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": now}


def _pvc(obj: Obj, spec: Obj, now: str) -> None:
    spec.setdefault("volumeMode", "Filesystem")
    obj["status"] = {"phase": "Pending"}


def _job(obj: Obj, spec: Obj, now: str) -> None:
    uid = obj["metadata"]["uid"]
    name = obj["metadata"]["name"]
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1  # both unset: one pod to completion; else completions stays unset
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    if not spec.get("manualSelector"):
        # the job strategy generates the selector and labels the template with the job's uid
        generated = {"batch.kubernetes.io/controller-uid": uid}
        spec["selector"] = {"matchLabels": generated}
        template = spec.setdefault("template", {})
        meta = template.setdefault("metadata", {})
        meta["labels"] = {
            **(meta.get("labels") or {}),
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": uid,
            "job-name": name,
        }
    obj["status"] = {}


def _daemonset(obj: Obj, spec: Obj, now: str) -> None:
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault(
        "updateStrategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
    )
    # no nodes in the sandbox: nothing is scheduled
    obj["status"] = {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    }


def _hpa(obj: Obj, spec: Obj, now: str) -> None:
    default_hpa_spec(spec)
    # v2's status: desiredReplicas and currentMetrics are not omitempty
    obj["status"] = {"currentMetrics": None, "desiredReplicas": 0}


_DEFAULTS: dict[tuple[str, str], Callable[[Obj, Obj, str], None]] = {
    INGRESSES: _ingress,
    PVS: _pv,
    PVCS: _pvc,
    JOBS: _job,
    DAEMONSETS: _daemonset,
    HPAS: _hpa,
}

_SCALE_UP = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
# no stabilizationWindowSeconds: the controller's --horizontal-pod-autoscaler-downscale-
# stabilization applies
_SCALE_DOWN = {
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}


def default_hpa_spec(spec: Obj) -> None:
    """`SetDefaults_HorizontalPodAutoscaler` of autoscaling/v2."""
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        for key, base in (("scaleUp", _SCALE_UP), ("scaleDown", _SCALE_DOWN)):
            rules = copy.deepcopy(base)
            given = behavior.get(key)
            if isinstance(given, dict):
                rules.update({k: v for k, v in given.items() if v is not None})
            behavior[key] = rules


# ---- validation ----------------------------------------------------------------------------


def validate(key: tuple[str, str], obj: Obj) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [] if key == INGRESSES else [_required("spec")]
    return _VALIDATORS[key](spec)


def _v_ingress(spec: Obj) -> list[Cause]:
    causes: list[Cause] = []
    if not spec.get("rules") and not spec.get("defaultBackend"):
        causes.append(
            _invalid("spec", spec, "either `defaultBackend` or `rules` must be specified")
        )
    for i, rule in enumerate(spec.get("rules") or []):
        for j, path in enumerate(((rule or {}).get("http") or {}).get("paths") or []):
            where = f"spec.rules[{i}].http.paths[{j}]"
            kind = path.get("pathType")
            if not kind:
                causes.append(_required(f"{where}.pathType"))
            elif kind not in _PATH_TYPES:
                causes.append(_unsupported(f"{where}.pathType", kind, _PATH_TYPES))
            service = (path.get("backend") or {}).get("service")
            if service is not None and not service.get("name"):
                causes.append(_required(f"{where}.backend.service.name"))
    return causes


def _v_access_modes(spec: Obj) -> list[Cause]:
    modes = spec.get("accessModes") or []
    if not modes:
        return [_required("spec.accessModes")]
    return [
        _unsupported("spec.accessModes", m, _ACCESS_MODES) for m in modes if m not in _ACCESS_MODES
    ]


def _v_pv(spec: Obj) -> list[Cause]:
    causes = _v_access_modes(spec)
    storage = (spec.get("capacity") or {}).get("storage")
    if storage is None:
        causes.append(_required("spec.capacity"))
    else:
        causes += _quantity("spec.capacity.storage", storage)
    if not any(k in spec for k in _PV_SOURCES):
        causes.append(("FieldValueRequired", "spec", "Required value: must specify a volume type"))
    return causes


def _v_pvc(spec: Obj) -> list[Cause]:
    causes = _v_access_modes(spec)
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is None:
        causes.append(_required("spec.resources[storage]"))
    else:
        causes += _quantity("spec.resources.requests[storage]", storage)
    return causes


def _template_labels_match(spec: Obj) -> list[Cause]:
    try:
        selector = selector_from_label_selector(spec.get("selector") or {})
    except SelectorError as err:
        return [_invalid("spec.selector", "", str(err))]
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not selector.matches(labels):
        return [
            _invalid(
                "spec.template.metadata.labels",
                labels,
                "`selector` does not match template `labels`",
            )
        ]
    return []


def _containers(spec: Obj) -> list[Cause]:
    pod = (spec.get("template") or {}).get("spec") or {}
    containers = pod.get("containers") or []
    if not containers:
        return [_required("spec.template.spec.containers")]
    return [
        _required(f"spec.template.spec.containers[{i}].{field}")
        for i, c in enumerate(containers)
        for field in ("name", "image")
        if not (c or {}).get(field)
    ]


def _v_job(spec: Obj) -> list[Cause]:
    causes = _template_labels_match(spec) + _containers(spec)
    policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
    if policy not in ("Never", "OnFailure"):
        causes.append(
            _unsupported("spec.template.spec.restartPolicy", policy or "", ("Never", "OnFailure"))
        )
    for field in ("parallelism", "completions", "backoffLimit"):
        value = spec.get(field)
        if isinstance(value, int) and value < 0:
            causes.append(_invalid(f"spec.{field}", value, "must be greater than or equal to 0"))
    return causes


def _v_daemonset(spec: Obj) -> list[Cause]:
    if not spec.get("selector"):
        return [_required("spec.selector")]
    return _template_labels_match(spec) + _containers(spec)


def _v_hpa(spec: Obj) -> list[Cause]:
    causes: list[Cause] = []
    ref = spec.get("scaleTargetRef") or {}
    for field in ("kind", "name"):
        if not ref.get(field):
            causes.append(_required(f"spec.scaleTargetRef.{field}"))
    low, high = spec.get("minReplicas"), spec.get("maxReplicas")
    if not isinstance(high, int) or high < 1:
        causes.append(_invalid("spec.maxReplicas", high, "must be greater than 0"))
    if isinstance(low, int) and low < 0:
        # HPAScaleToZero (beta, on): 0 is allowed, with an Object or External metric
        causes.append(_invalid("spec.minReplicas", low, "must be greater than or equal to 0"))
    if isinstance(low, int) and isinstance(high, int) and high < low:
        causes.append(
            _invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`")
        )
    metrics = spec.get("metrics") or []
    causes += [c for i, m in enumerate(metrics) for c in _v_metric(m, f"spec.metrics[{i}]")]
    if low == 0 and not any((m or {}).get("type") in ("Object", "External") for m in metrics):
        causes.append(
            (
                "FieldValueForbidden",
                "spec.metrics",
                "Forbidden: must specify at least one Object or External metric to support "
                "scaling to zero replicas",
            )
        )
    return causes


def _v_metric(metric: Any, where: str) -> list[Cause]:
    kind = (metric or {}).get("type")
    if not kind:
        return [_required(f"{where}.type")]
    if kind not in _METRIC_TYPES:
        return [_unsupported(f"{where}.type", kind, _METRIC_TYPES)]
    source = metric.get(_SOURCES[kind])
    if not isinstance(source, dict):
        return [
            (
                "FieldValueRequired",
                f"{where}.{_SOURCES[kind]}",
                "Required value: must populate information for the given metric source",
            )
        ]
    target = source.get("target") or {}
    if not target.get("type"):
        return [_required(f"{where}.{_SOURCES[kind]}.target.type")]
    causes: list[Cause] = []
    for field in ("value", "averageValue"):
        if target.get(field) is not None:
            causes += _quantity(f"{where}.{_SOURCES[kind]}.target.{field}", target[field])
    return causes


_VALIDATORS: dict[tuple[str, str], Callable[[Obj], list[Cause]]] = {
    INGRESSES: _v_ingress,
    PVS: _v_pv,
    PVCS: _v_pvc,
    JOBS: _v_job,
    DAEMONSETS: _v_daemonset,
    HPAS: _v_hpa,
}
