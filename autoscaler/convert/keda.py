"""A KEDA ScaledObject to an Autoscaler and the adapter rules its queries need.

Field by field, as docs/migrating.md tabulates: what KEDA does in the operator (0 <-> 1,
activation, cooldown, fallback, pause, force-activation) maps onto the Autoscaler's controls;
what it hands to its HPA (min/max, behavior) maps onto the same HPA fields. The triggers (and a
scalingModifiers formula) are keda_metrics.py's; cron triggers keda_cron.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autoscaler.convert.keda_metrics import convert_triggers
from autoscaler.convert.model import (
    API_VERSION,
    Conversion,
    ConvertError,
    Note,
    as_int,
    as_mapping,
    where,
)

__all__ = ["from_scaled_object"]

SPEC_FIELDS = frozenset(
    {
        "scaleTargetRef",
        "pollingInterval",
        "cooldownPeriod",
        "initialCooldownPeriod",
        "idleReplicaCount",
        "minReplicaCount",
        "maxReplicaCount",
        "fallback",
        "advanced",
        "triggers",
    }
)
DEFAULT_MIN, DEFAULT_MAX, DEFAULT_COOLDOWN = 0, 100, 300  # KEDA's defaults
FALLBACK_BEHAVIORS = {
    "static": "Static",
    "currentReplicas": "CurrentReplicas",
    "currentReplicasIfHigher": "CurrentReplicasIfHigher",
    "currentReplicasIfLower": "CurrentReplicasIfLower",
}
PAUSE = {
    "autoscaling.keda.sh/paused": "promscaler.dev/paused",
    "autoscaling.keda.sh/paused-replicas": "promscaler.dev/paused-replicas",
}
# one-direction pauses are the HPA's own selectPolicy: Disabled
PAUSE_DIRECTION = {
    "autoscaling.keda.sh/paused-scale-in": "scaleDown",
    "autoscaling.keda.sh/paused-scale-out": "scaleUp",
}
KEDA_ONLY_ANNOTATIONS = (
    "scaledobject.keda.sh/transfer-hpa-ownership",
    "scaledobject.keda.sh/hpa-excluded-labels",
    "validations.keda.sh/hpa-ownership",
)
# KEDA treats the ScaledObject as active whatever its triggers say: woken from 0, never put
# back to 0 (pkg/scaling/executor/scale_scaledobjects.go); here that is minReplicas >= 1
FORCE_ACTIVATION = "autoscaling.keda.sh/force-activation"
SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def from_scaled_object(doc: Mapping[str, Any]) -> Conversion:
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        raise ConvertError(f"{where(doc)}: spec: expected an object")
    name = as_mapping(doc.get("metadata"), f"{where(doc)}: metadata").get("name")
    if not isinstance(name, str) or not name:
        raise ConvertError(f"{where(doc)}: metadata.name: required")
    try:
        return _convert(doc, spec, str(name))
    except ConvertError as err:
        raise ConvertError(f"{where(doc)}: {err}") from err


def _convert(doc: Mapping[str, Any], spec: Mapping[str, Any], name: str) -> Conversion:
    notes: list[Note] = [_unknown(f"spec.{k}") for k in spec if k not in SPEC_FIELDS]
    forced = _forced(doc)
    minimum, to_zero = _min_replicas(spec, notes, forced=forced)
    new: dict[str, Any] = {
        "scaleTargetRef": _target_ref(spec, notes),
        "minReplicas": minimum,
        "maxReplicas": as_int(spec.get("maxReplicaCount", DEFAULT_MAX), "spec.maxReplicaCount"),
    }
    got = convert_triggers(
        spec, owner=name, to_zero=to_zero, max_replicas=new["maxReplicas"], notes=notes
    )
    if got.always_active:
        to_zero = False
        _never_idle(spec, new, notes)
    new["metrics"] = got.metrics
    if got.schedules:
        new["schedules"] = got.schedules
    rules = got.rules
    if not forced:
        _cooldowns(spec, new, to_zero, notes)
    if "fallback" in spec:
        new["fallback"] = _fallback(spec["fallback"])
    behavior = _advanced(as_mapping(spec.get("advanced"), "spec.advanced"), notes)
    metadata = _metadata(doc, behavior, notes)
    if behavior:
        new["behavior"] = behavior
    _polling(spec, notes)
    autoscaler = {"apiVersion": API_VERSION, "kind": "Autoscaler", "metadata": metadata}
    autoscaler["spec"] = new
    return Conversion(where(doc), autoscaler, tuple(rules), tuple(notes))


def _never_idle(spec: Mapping[str, Any], new: dict[str, Any], notes: list[Note]) -> None:
    """cpu/memory triggers alone: KEDA counts them always active, so its target never rests
    below max(minReplicaCount, 1) and idleReplicaCount never applies."""
    keda_min = as_int(spec.get("minReplicaCount", DEFAULT_MIN), "spec.minReplicaCount")
    new["minReplicas"] = max(keda_min, 1)
    notes[:] = [n for n in notes if n.field != "spec.idleReplicaCount"]
    if "idleReplicaCount" in spec:
        notes.append(Note("spec.idleReplicaCount", "KEDA never idles it: no effect", False))


def _unknown(field: str) -> Note:
    return Note(field, "not a ScaledObject field this converter knows: not carried over", True)


def _target_ref(spec: Mapping[str, Any], notes: list[Note]) -> dict[str, Any]:
    ref = spec.get("scaleTargetRef")
    if not isinstance(ref, Mapping) or not ref.get("name"):
        raise ConvertError("spec.scaleTargetRef.name: required")
    if ref.get("envSourceContainerName"):
        notes.append(
            Note(
                "spec.scaleTargetRef.envSourceContainerName",
                "only KEDA reads trigger settings from a container's environment: dropped",
                False,
            )
        )
    return {
        "apiVersion": ref.get("apiVersion", "apps/v1"),
        "kind": ref.get("kind", "Deployment"),
        "name": ref["name"],
    }


def _forced(doc: Mapping[str, Any]) -> bool:
    meta = as_mapping(doc.get("metadata"), "metadata")
    value = as_mapping(meta.get("annotations"), "metadata.annotations").get(FORCE_ACTIVATION)
    return str(value).strip().lower() == "true"


def _min_replicas(spec: Mapping[str, Any], notes: list[Note], *, forced: bool) -> tuple[int, bool]:
    """(minReplicas, scales to zero). idleReplicaCount 0 below minReplicaCount N is KEDA's
    "0 when idle, at least N when active"; the Autoscaler's floor when active is 1."""
    minimum = as_int(spec.get("minReplicaCount", DEFAULT_MIN), "spec.minReplicaCount")
    if forced:
        notes.append(Note(f"metadata.annotations[{FORCE_ACTIVATION}]", _FORCED, False))
        for key in ("idleReplicaCount", "cooldownPeriod", "initialCooldownPeriod"):
            if key in spec:
                notes.append(Note(f"spec.{key}", "no effect while activation is forced", False))
        return max(minimum, 1), False
    idle = spec.get("idleReplicaCount")
    if idle is None or minimum == 0:
        if idle is not None:
            notes.append(Note("spec.idleReplicaCount", "no effect with minReplicaCount 0", False))
        return minimum, minimum == 0
    if as_int(idle, "spec.idleReplicaCount") == 0:
        notes.append(
            Note(
                "spec.idleReplicaCount",
                f"0 when idle is carried (minReplicas: 0), but not KEDA's jump to "
                f"minReplicaCount ({minimum}) on activation: the Autoscaler wakes to the "
                "metrics' recommendation (at least 1)",
                True,
            )
        )
        return 0, True
    notes.append(
        Note("spec.idleReplicaCount", "only 0 is supported (as in KEDA): not carried over", True)
    )
    return minimum, False


_FORCED = (
    "carried as minReplicas of at least 1 (KEDA keeps a forced ScaledObject active: woken from "
    "0 and never put back to 0); to scale to zero again, set minReplicas: 0 and scaleToZero, "
    "or convert the ScaledObject without the annotation"
)


def _cooldowns(
    spec: Mapping[str, Any], new: dict[str, Any], to_zero: bool, notes: list[Note]
) -> None:
    if not to_zero:
        for key in ("cooldownPeriod", "initialCooldownPeriod"):
            if key in spec:
                notes.append(Note(f"spec.{key}", "no effect without scale to zero", False))
        return
    cooldown = as_int(spec.get("cooldownPeriod", DEFAULT_COOLDOWN), "spec.cooldownPeriod")
    stz = {"cooldownSeconds": cooldown}
    if spec.get("initialCooldownPeriod"):
        initial = as_int(spec["initialCooldownPeriod"], "spec.initialCooldownPeriod")
        stz["initialCooldownSeconds"] = initial
    new["scaleToZero"] = stz
    notes.append(
        Note(
            "spec.cooldownPeriod",
            "carried as scaleToZero.cooldownSeconds, which governs only the last step: the "
            "Autoscaler goes N -> 1 under spec.behavior, then 1 -> 0 after the cooldown "
            "(KEDA drops from N to 0 at once)",
            False,
        )
    )


def _fallback(fallback: Any) -> dict[str, Any]:
    if not isinstance(fallback, Mapping):
        raise ConvertError("spec.fallback: expected an object")
    behavior = fallback.get("behavior", "static")
    if not isinstance(behavior, str) or behavior not in FALLBACK_BEHAVIORS:
        raise ConvertError(
            f"spec.fallback.behavior: {behavior!r} "
            f"(expected one of {', '.join(FALLBACK_BEHAVIORS)})"
        )
    for key in ("failureThreshold", "replicas"):
        if key not in fallback:
            raise ConvertError(f"spec.fallback.{key}: required")
    return {
        "failureThreshold": as_int(fallback["failureThreshold"], "spec.fallback.failureThreshold"),
        # KEDA leaves fallback on the first good read: one good pass, no hysteresis
        "recoveryThreshold": 1,
        "replicas": as_int(fallback["replicas"], "spec.fallback.replicas"),
        "behavior": FALLBACK_BEHAVIORS[behavior],
    }


def _advanced(advanced: Mapping[str, Any], notes: list[Note]) -> dict[str, Any]:
    behavior: dict[str, Any] = {}
    for key, value in advanced.items():
        at = f"spec.advanced.{key}"
        if key == "horizontalPodAutoscalerConfig":
            value = as_mapping(value, at)
            behavior = dict(as_mapping(value.get("behavior"), f"{at}.behavior"))
            if value.get("name"):
                notes.append(Note(f"{at}.name", "no HPA is created: dropped", False))
        elif key == "restoreToOriginalReplicaCount":
            if value:
                notes.append(Note(at, _RESTORE, True))
        elif key == "scalingModifiers":
            if not as_mapping(value, at).get("formula"):
                notes.append(Note(at, _MODIFIERS, True))
        else:
            notes.append(_unknown(at))
    return behavior


_RESTORE = "the Autoscaler leaves the replicas as they are when deleted: not carried over"
_MODIFIERS = "no formula: KEDA refuses scalingModifiers without one; not carried over"


def _metadata(
    doc: Mapping[str, Any], behavior: dict[str, Any], notes: list[Note]
) -> dict[str, Any]:
    meta = as_mapping(doc.get("metadata"), "metadata")
    new: dict[str, Any] = {"name": meta["name"]}
    if meta.get("namespace"):
        new["namespace"] = meta["namespace"]
    if meta.get("labels"):
        new["labels"] = dict(as_mapping(meta["labels"], "metadata.labels"))
    kept: dict[str, str] = {}
    for key, value in as_mapping(meta.get("annotations"), "metadata.annotations").items():
        at = f"metadata.annotations[{key}]"
        if key in PAUSE:
            kept[PAUSE[key]] = str(value)
        elif key in PAUSE_DIRECTION:
            if str(value).lower() == "true":
                direction = PAUSE_DIRECTION[key]
                rules = dict(as_mapping(behavior.get(direction), f"spec.behavior.{direction}"))
                rules["selectPolicy"] = "Disabled"
                behavior[direction] = rules
                direction = PAUSE_DIRECTION[key]
                notes.append(
                    Note(at, f"carried as spec.behavior.{direction}.selectPolicy: Disabled", False)
                )
        elif key == FORCE_ACTIVATION:
            if str(value).strip().lower() != "true":  # "true" is read by _min_replicas
                notes.append(Note(at, 'not "true": no effect in KEDA either; dropped', False))
        elif key in KEDA_ONLY_ANNOTATIONS:
            notes.append(Note(at, "about KEDA's own HPA: dropped", False))
        elif key.split("/", 1)[0].endswith("keda.sh"):  # KEDA's, but not one it documents
            notes.append(Note(at, "a KEDA annotation this converter does not know: dropped", True))
        elif key not in SERVER_ANNOTATIONS:
            kept[key] = value  # a non-string is refused by check_autoscaler, never guessed
    if kept:
        new["annotations"] = kept
    return new


def _polling(spec: Mapping[str, Any], notes: list[Note]) -> None:
    if "pollingInterval" in spec:
        notes.append(
            Note(
                "spec.pollingInterval",
                "the controller's --sync-period (15s, as the HPA) and --zero-poll-interval (1s "
                "at zero replicas) apply to every Autoscaler: dropped",
                False,
            )
        )
