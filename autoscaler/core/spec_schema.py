"""The Autoscaler CRD's structural schema of `spec`, applied as the API server applies it.

The schema is the CRD's own, so a bound or a pattern added to the CRD reaches the offline tools
without a second copy by hand. Types, required fields, enums, numeric bounds, lengths, item
counts and patterns are checked; a field the schema does not know is refused (kubectl's strict
field validation refuses it too). The CRD's CEL rules are in spec_rules.py.

Where the schema comes from: the core does no I/O, so it is plain data in a Python module
(autoscaler_spec_schema.py), written from the chart's CRD by scripts/crd_spec_schema.py. The CRD
stays the one source of truth and tests/convert/test_convert_strict.py fails when the module
and the CRD differ. The alternatives were worse: a packaged JSON file read with
importlib.resources is I/O in the core at first use (and a file the packaging must not drop);
loading it in each CLI and passing it in would make every caller of `check_spec` carry the
schema, and the core's tests read a file to test a pure function.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from autoscaler.core.autoscaler_spec_schema import SPEC_SCHEMA
from autoscaler.core.fields import DocumentError

__all__ = ["check_schema", "spec_schema"]


def spec_schema() -> dict[str, Any]:
    """The CRD's schema of `spec` (shared: do not change it)."""
    return SPEC_SCHEMA


def check_schema(value: Any, schema: dict[str, Any], path: str) -> None:
    """Raise DocumentError at the first place `value` breaks `schema`."""
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise DocumentError(path, f"must be an integer or a string, not {_kind(value)}")
    else:
        _type(value, schema.get("type"), path)
    _bounds(value, schema, path)
    if isinstance(value, dict):
        _object(value, schema, path)
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            check_schema(item, schema["items"], f"{path}[{i}]")


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _type(value: Any, kind: str | None, path: str) -> None:
    if kind is None:
        return
    ok = isinstance(value, _TYPES[kind]) and (kind == "boolean" or not isinstance(value, bool))
    if not ok:
        raise DocumentError(path, f"must be of type {kind}, not {_kind(value)}")


def _bounds(value: Any, schema: dict[str, Any], path: str) -> None:
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(e) for e in schema["enum"])
        raise DocumentError(
            path, f"Unsupported value: {json.dumps(value)}: supported values: {allowed}"
        )
    if isinstance(value, int) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise DocumentError(path, f"should be greater than or equal to {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise DocumentError(path, f"should be less than or equal to {schema['maximum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            raise DocumentError(path, f"should be at least {schema['minLength']} chars long")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise DocumentError(path, f"may not be more than {schema['maxLength']} bytes")
        if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            raise DocumentError(path, f"should match '{schema['pattern']}'")
    if isinstance(value, list) and "maxItems" in schema and len(value) > schema["maxItems"]:
        raise DocumentError(path, f"must have at most {schema['maxItems']} items")


def _object(value: dict[str, Any], schema: dict[str, Any], path: str) -> None:
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    for key in schema.get("required", ()):
        if key not in value:
            raise DocumentError(f"{path}.{key}", "Required value")
    for key, item in value.items():
        where = f"{path}.{key}"
        if props is not None and key in props:
            check_schema(item, props[key], where)
        elif isinstance(extra, dict):
            check_schema(item, extra, where)
        elif props is not None:
            raise DocumentError(where, "field not declared in schema")


@functools.cache
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), type(value).__name__
    )
