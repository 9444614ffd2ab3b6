"""What the real server refuses before any processing, as its Go decoding would: wrong JSON
types in metadata and in the top-level fields of built-in kinds (400, upstream's wording), and
field selectors on fields a kind does not index."""

from __future__ import annotations

from typing import Any

from common.selectors import FieldRequirement
from sandbox import errors, strategies
from sandbox.errors import ApiError
from sandbox.resources import ResourceType

__all__ = ["check_field_selector", "check_shape", "matches_fields"]

Obj = dict[str, Any]

_META_STRINGS = ("name", "generateName", "namespace", "resourceVersion", "uid")
_META_MAPS = ("labels", "annotations")


def decode_error(rt: ResourceType, field: str, want: str, value: Any) -> ApiError:
    # the wording of the real server's JSON decoding errors
    got = type(value).__name__.replace("str", "string").replace("dict", "object")
    return errors.bad_request(
        f"json: cannot unmarshal {got} into Go struct field {rt.kind}.{field} of type {want}"
    )


def check_shape(rt: ResourceType, obj: Obj) -> None:
    """Types the Go structs would refuse to decode: 400, as upstream, before any processing."""
    meta = obj["metadata"]
    for field in _META_STRINGS:
        if field in meta and meta[field] is not None and not isinstance(meta[field], str):
            raise decode_error(rt, f"metadata.{field}", "string", meta[field])
    for field in _META_MAPS:
        value = meta.get(field)
        if value is not None and not isinstance(value, dict):
            raise decode_error(rt, f"metadata.{field}", "map[string]string", value)
    for field in ("finalizers", "ownerReferences"):
        value = meta.get(field)
        if value is not None and not isinstance(value, list):
            raise decode_error(rt, f"metadata.{field}", "[]", value)
    if rt.custom:
        return  # the CRD schema speaks for custom resources
    for field in ("spec", "status", "data", "stringData", "binaryData"):
        value = obj.get(field)
        if value is not None and not isinstance(value, dict):
            raise decode_error(rt, field, "object", value)


def matches_fields(rt: ResourceType, obj: Obj, fields: tuple[FieldRequirement, ...]) -> bool:
    values = strategies.field_values(rt, obj)
    return all(r.matches(values) for r in fields)


def check_field_selector(rt: ResourceType, fields: tuple[FieldRequirement, ...]) -> None:
    allowed = {"metadata.name", *rt.field_labels}
    if rt.namespaced:
        allowed.add("metadata.namespace")
    for r in fields:
        if r.field not in allowed:
            if rt.custom:
                raise errors.bad_request(
                    f'"{r.field}" is not a known field selector: only "metadata.name", '
                    '"metadata.namespace"'
                )
            raise errors.bad_request(f"field label not supported: {r.field}")
