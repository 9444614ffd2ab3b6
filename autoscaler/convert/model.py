"""What a conversion produces, and the dispatch by kind."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "API_VERSION",
    "Conversion",
    "ConvertError",
    "NotConverted",
    "Note",
    "as_int",
    "as_mapping",
    "convert",
    "where",
]

API_VERSION = "promscaler.dev/v1alpha1"


class ConvertError(ValueError):
    """The input cannot be converted at all; the message names the object and the field."""


class NotConverted(ConvertError):
    """A well-formed object of a kind this converter leaves alone (a KEDA ScaledJob): the
    others are still converted, and the command exits 1."""


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


def as_int(value: Any, field: str) -> int:
    """An integer field (KEDA and kubectl write some as strings), or a ConvertError."""
    if isinstance(value, bool):
        raise ConvertError(f"{field}: expected an integer, got {value!r}")
    try:
        number = int(str(value), 10)
    except ValueError as err:
        raise ConvertError(f"{field}: expected an integer, got {value!r}") from err
    return number


def as_mapping(value: Any, field: str) -> Mapping[str, Any]:
    """An object field (None reads as empty), or a ConvertError."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConvertError(f"{field}: expected an object, got {type(value).__name__}")
    return value


def where(doc: Mapping[str, Any]) -> str:
    """`Kind namespace/name` of a manifest, for messages."""
    meta = doc.get("metadata")
    if not isinstance(meta, Mapping):
        meta = {}
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
    if kind == "ScaledJob":
        raise NotConverted(
            f"{where(doc)}: not converted: a ScaledJob starts Jobs per event, which an "
            "Autoscaler (replicas of one /scale target) cannot do; keep it on KEDA"
        )
    if not isinstance(kind, str) or kind not in by_kind:
        raise ConvertError(
            f"{where(doc)}: kind {kind!r} cannot be converted "
            "(expected ScaledObject or HorizontalPodAutoscaler)"
        )
    conversion = by_kind[kind](doc)
    _check(conversion)
    return conversion


def _check(conversion: Conversion) -> None:
    """Refuse to hand out an Autoscaler the API server would refuse (the CRD's schema and CEL
    rules, as `check_autoscaler` judges them): a conversion is either applicable or an error."""
    from autoscaler.core.fields import DocumentError
    from autoscaler.core.spec_rules import check_autoscaler

    try:
        check_autoscaler(conversion.autoscaler)
    except DocumentError as err:
        raise ConvertError(
            f"{conversion.source}: the Autoscaler it converts to would be refused by the API "
            f"server: {err}"
        ) from err
