"""What a conversion produces, and the dispatch by kind."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["API_VERSION", "Conversion", "ConvertError", "Note", "convert", "where"]

API_VERSION = "promscaler.dev/v1alpha1"


class ConvertError(ValueError):
    """The input cannot be converted at all; the message names the object and the field."""


@dataclass(frozen=True)
class Note:
    """A field of the input that was not carried over as it was.

    field: its path in the input (`spec.advanced.scalingModifiers`).
    message: what happened to it and why.
    changes_behaviour: True when the Autoscaler will act differently from the input because
        of it (the command then exits non-zero); False for a field with no effect here.
    """

    field: str
    message: str
    changes_behaviour: bool


@dataclass(frozen=True)
class Conversion:
    """One input object converted.

    source: `Kind namespace/name` of the input, for messages.
    autoscaler: the Autoscaler manifest.
    external_rules: prometheus-adapter `externalRules` entries the Autoscaler's metrics need.
    notes: every field not carried over as it was.
    """

    source: str
    autoscaler: dict[str, Any]
    external_rules: tuple[dict[str, Any], ...]
    notes: tuple[Note, ...]

    @property
    def changes_behaviour(self) -> bool:
        return any(n.changes_behaviour for n in self.notes)


def where(doc: Mapping[str, Any]) -> str:
    """`Kind namespace/name` of a manifest, for messages."""
    meta = doc.get("metadata") or {}
    return f"{doc.get('kind')} {meta.get('namespace') or 'default'}/{meta.get('name')}"


def convert(doc: Mapping[str, Any]) -> Conversion:
    """Convert one ScaledObject or HorizontalPodAutoscaler manifest."""
    from autoscaler.convert.hpa import from_hpa
    from autoscaler.convert.keda import from_scaled_object

    if not isinstance(doc, Mapping):
        raise ConvertError(f"expected a Kubernetes object, got {type(doc).__name__}")
    by_kind: dict[str, Callable[[Mapping[str, Any]], Conversion]] = {
        "ScaledObject": from_scaled_object,
        "HorizontalPodAutoscaler": from_hpa,
    }
    kind = doc.get("kind")
    if kind not in by_kind:
        raise ConvertError(
            f"{where(doc)}: kind {kind!r} cannot be converted "
            "(expected ScaledObject or HorizontalPodAutoscaler)"
        )
    return by_kind[str(kind)](doc)
