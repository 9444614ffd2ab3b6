"""Structural-schema support for custom resources: defaults, and `type`/`required`/`enum`
validation (a useful subset of what kube-apiserver enforces for a CRD's openAPIV3Schema)."""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

import orjson

from sandbox.celrules import cel_causes

Cause = tuple[str, str, str]  # (reason, field, message) as in metav1.StatusCause

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _describe(value: Any) -> str:
    for name, kinds in _TYPES.items():
        if isinstance(value, kinds) and not (isinstance(value, bool) and name != "boolean"):
            return name
    return "null" if value is None else type(value).__name__


def apply_defaults(schema: dict[str, Any] | None, value: Any) -> Any:
    """Fill `default`s of absent properties, recursively, on a copy of `value`."""
    if not schema or not isinstance(value, dict | list):
        return value
    if isinstance(value, list):
        items = schema.get("items")
        return [apply_defaults(items, v) for v in value] if isinstance(items, dict) else value
    result = dict(value)
    for name, prop in (schema.get("properties") or {}).items():
        if name not in result and "default" in prop:
            result[name] = copy.deepcopy(prop["default"])
        if name in result:
            result[name] = apply_defaults(prop, result[name])
    return result


def _type_ok(expected: str, value: Any) -> bool:
    if isinstance(value, bool) and expected != "boolean":
        return False
    return isinstance(value, _TYPES.get(expected, (object,)))


# no old value: a create, or a field the update added (nothing to ratchet against)
ABSENT: Any = object()


def validate(
    schema: dict[str, Any] | None, value: Any, path: str = "", old: Any = ABSENT
) -> list[Cause]:
    """Type, required, enum, min/max checks; metadata/apiVersion/kind at the root are skipped.

    `old` is the value at the same place before an update. CRD validation ratcheting
    (KEP-4008, on by default since Kubernetes v1.30, GA in v1.33) ignores the errors of a value
    the update left unchanged, except `required` (and transition rules, which the sandbox does
    not evaluate): an object stored before its schema was tightened can still be written.
    Lists are compared whole: an item of a changed list is validated as new (the API server
    also correlates the items of `map` lists by key, so there it is laxer)."""
    if not schema:
        return []
    if old is not ABSENT and _unchanged(old, value):
        return _required(schema, value, path)
    causes: list[Cause] = []
    expected = schema.get("type")
    if value is None:
        if not schema.get("nullable"):
            causes.append(
                (
                    "FieldValueTypeInvalid",
                    path,
                    (
                        f'Invalid value: "null": {path} in body must be of type '
                        f'{expected or "object"}: "null"'
                    ),
                )
            )
        return causes
    if isinstance(expected, str) and not _type_ok(expected, value):
        return [
            (
                "FieldValueTypeInvalid",
                path,
                (
                    f'Invalid value: "{_describe(value)}": {path} in body must be of type '
                    f'{expected}: "{_describe(value)}"'
                ),
            )
        ]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(f'"{v}"' for v in schema["enum"])
        causes.append(
            (
                "FieldValueNotSupported",
                path,
                f"Unsupported value: {value!r}: supported values: {allowed}",
            )
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            causes.append(
                (
                    "FieldValueInvalid",
                    path,
                    (
                        f"Invalid value: {value}: {path} in body should be greater than or "
                        f"equal to {schema['minimum']}"
                    ),
                )
            )
        if "maximum" in schema and value > schema["maximum"]:
            causes.append(
                (
                    "FieldValueInvalid",
                    path,
                    (
                        f"Invalid value: {value}: {path} in body should be less than or equal "
                        f"to {schema['maximum']}"
                    ),
                )
            )
    causes.extend(_bounds(schema, value, path))
    if isinstance(value, dict):
        causes.extend(_validate_object(schema, value, path, old if isinstance(old, dict) else {}))
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            causes.extend(validate(schema["items"], item, f"{path}[{i}]"))
    if not causes:  # like the API server: rules see only values of the right shape
        causes.extend(cel_causes(schema, value, path))
    return causes


def _bounds(schema: dict[str, Any], value: Any, path: str) -> list[Cause]:
    """pattern, minLength/maxLength and minItems/maxItems, worded as the API server words them."""
    causes: list[Cause] = []
    if isinstance(value, str):
        pattern = schema.get("pattern")
        if pattern is not None and _regex(pattern).search(value) is None:
            message = f"Invalid value: \"{value}\": {path} in body should match '{pattern}'"
            causes.append(("FieldValueInvalid", path, message))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            message = f"Too long: may not be more than {schema['maxLength']} bytes"
            causes.append(("FieldValueTooLong", path, message))
        if "minLength" in schema and len(value) < schema["minLength"]:
            message = f'Invalid value: "{value}": {path} in body should be at least '
            causes.append(
                ("FieldValueInvalid", path, message + f"{schema['minLength']} chars long")
            )
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            message = f"Too many: {len(value)}: must have at most {schema['maxItems']} items"
            causes.append(("FieldValueTooMany", path, message))
        if "minItems" in schema and len(value) < schema["minItems"]:
            message = f"Invalid value: {len(value)}: {path} in body should have at least "
            causes.append(("FieldValueInvalid", path, message + f"{schema['minItems']} items"))
    return causes


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _validate_object(
    schema: dict[str, Any], value: dict[str, Any], path: str, old: dict[str, Any]
) -> list[Cause]:
    causes: list[Cause] = []
    props = schema.get("properties") or {}
    root = path == ""
    for name in schema.get("required") or []:
        if name not in value:
            field = f"{path}.{name}" if path else name
            causes.append(("FieldValueRequired", field, "Required value"))
    for name, item in value.items():
        if root and name in ("apiVersion", "kind", "metadata"):
            continue
        field = f"{path}.{name}" if path else name
        if name in props:
            causes.extend(validate(props[name], item, field, old.get(name, ABSENT)))
        elif isinstance(schema.get("additionalProperties"), dict):
            causes.extend(
                validate(schema["additionalProperties"], item, field, old.get(name, ABSENT))
            )
    return causes


def _unchanged(old: Any, new: Any) -> bool:
    """Equal as JSON values (Go's DeepEqual of the decoded objects): Python's == alone takes
    `true` for `1` and `1.0` for `1`, so a type change would pass for no change."""
    if old != new:
        return False
    try:
        return bool(orjson.dumps(old, option=_SORTED) == orjson.dumps(new, option=_SORTED))
    except TypeError:  # beyond what orjson writes (a 65-bit integer): count it as changed
        return False


_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _required(schema: dict[str, Any] | None, value: Any, path: str) -> list[Cause]:
    """The `required` errors `validate` finds in `value`, and no others: what ratcheting still
    reports for an unchanged value. It descends where `validate` does (values of the right
    type), so its causes are a subset of `validate`'s, in the same order."""
    if not schema or value is None:
        return []
    expected = schema.get("type")
    if isinstance(expected, str) and not _type_ok(expected, value):
        return []
    causes: list[Cause] = []
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for name in schema.get("required") or []:
            if name not in value:
                field = f"{path}.{name}" if path else name
                causes.append(("FieldValueRequired", field, "Required value"))
        for name, item in value.items():
            if path == "" and name in ("apiVersion", "kind", "metadata"):
                continue
            field = f"{path}.{name}" if path else name
            if name in props:
                causes.extend(_required(props[name], item, field))
            elif isinstance(extra, dict):
                causes.extend(_required(extra, item, field))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            causes.extend(_required(schema["items"], item, f"{path}[{i}]"))
    return causes


def prune(schema: dict[str, Any] | None, value: Any, *, root: bool = True) -> Any:
    """Drop fields the structural schema does not know (upstream pruning), keeping metadata."""
    if not schema or schema.get("x-kubernetes-preserve-unknown-fields"):
        return value
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [prune(schema["items"], v, root=False) for v in value]
    if not isinstance(value, dict):
        return value
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    if props is None and extra is None:
        return value if schema.get("type") != "object" or root else {}
    result: dict[str, Any] = {}
    for name, item in value.items():
        if root and name in ("apiVersion", "kind", "metadata"):
            result[name] = item
        elif props and name in props:
            result[name] = prune(props[name], item, root=False)
        elif isinstance(extra, dict):
            result[name] = prune(extra, item, root=False)
        elif extra is True:
            result[name] = item
    return result
