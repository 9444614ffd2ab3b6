"""A native HorizontalPodAutoscaler (autoscaling/v2, v2beta2 or v1) to an Autoscaler.

The Autoscaler's spec is the autoscaling/v2 spec, so v2 carries over field for field; v1's
single CPU target becomes the equivalent v2 Resource metric.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autoscaler.convert.model import (
    API_VERSION,
    Conversion,
    ConvertError,
    Note,
    as_int,
    as_mapping,
    where,
)

__all__ = ["from_hpa"]

V2_FIELDS = ("scaleTargetRef", "minReplicas", "maxReplicas", "metrics", "behavior")
V1_FIELDS = ("scaleTargetRef", "minReplicas", "maxReplicas", "targetCPUUtilizationPercentage")
# the HPA controller's CPU target when a v1 HPA names none
V1_DEFAULT_CPU_PERCENT = 80
# set by kubectl or the API server, never by a user: dropped without a note
SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
# v1 HPAs served by old API servers carried v2 fields here
V1_ALPHA_ANNOTATIONS = (
    "autoscaling.alpha.kubernetes.io/metrics",
    "autoscaling.alpha.kubernetes.io/behavior",
)


def from_hpa(doc: Mapping[str, Any]) -> Conversion:
    api = doc.get("apiVersion")
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        raise ConvertError(f"{where(doc)}: spec: expected an object")
    if api in ("autoscaling/v2", "autoscaling/v2beta2"):
        new_spec, notes = _v2_spec(spec)
    elif api == "autoscaling/v1":
        new_spec, notes = _v1_spec(spec)
    else:
        raise ConvertError(
            f"{where(doc)}: apiVersion {api!r} is not supported (autoscaling/v2, v2beta2 or v1; "
            "`kubectl get hpa.v2.autoscaling NAME -o yaml` reads any HPA as v2)"
        )
    metadata, meta_notes = _metadata(doc)
    autoscaler = {"apiVersion": API_VERSION, "kind": "Autoscaler", "metadata": metadata}
    autoscaler["spec"] = new_spec
    return Conversion(where(doc), autoscaler, (), (*meta_notes, *notes))


def _v2_spec(spec: Mapping[str, Any]) -> tuple[dict[str, Any], list[Note]]:
    new = {k: spec[k] for k in V2_FIELDS if k in spec}
    notes = [_unknown(f"spec.{k}") for k in spec if k not in V2_FIELDS]
    return new, notes


def _v1_spec(spec: Mapping[str, Any]) -> tuple[dict[str, Any], list[Note]]:
    new = {k: spec[k] for k in V1_FIELDS[:3] if k in spec}
    raw = spec.get("targetCPUUtilizationPercentage", V1_DEFAULT_CPU_PERCENT)
    percent = as_int(raw, "spec.targetCPUUtilizationPercentage")
    target = {"type": "Utilization", "averageUtilization": percent}
    new["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    notes = [_unknown(f"spec.{k}") for k in spec if k not in V1_FIELDS]
    return new, notes


def _unknown(field: str) -> Note:
    return Note(field, "not an HPA field this converter knows: not carried over", True)


def _metadata(doc: Mapping[str, Any]) -> tuple[dict[str, Any], list[Note]]:
    meta = as_mapping(doc.get("metadata"), f"{where(doc)}: metadata")
    if not isinstance(meta.get("name"), str) or not meta.get("name"):
        raise ConvertError(f"{where(doc)}: metadata.name: required")
    new: dict[str, Any] = {"name": meta["name"]}
    if meta.get("namespace"):
        new["namespace"] = meta["namespace"]
    if meta.get("labels"):
        new["labels"] = dict(as_mapping(meta["labels"], f"{where(doc)}: metadata.labels"))
    notes: list[Note] = []
    kept: dict[str, str] = {}
    annotations = as_mapping(meta.get("annotations"), f"{where(doc)}: metadata.annotations")
    for key, value in annotations.items():
        if key in V1_ALPHA_ANNOTATIONS:
            notes.append(Note(f"metadata.annotations[{key}]", _ALPHA, True))
        elif key not in SERVER_ANNOTATIONS:
            kept[key] = value
    if kept:
        new["annotations"] = kept
    return new, notes


_ALPHA = (
    "v2 fields stored on a v1 object: not read; convert the v2 form instead "
    "(`kubectl get hpa.v2.autoscaling NAME -o yaml`)"
)
