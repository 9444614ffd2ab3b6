"""A local stand-in for the API server's CRD validation: defaulting, the structural OpenAPI
schema (through jsonschema) and the CEL rules (through cel-python), for the Autoscaler CRD."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import yaml

CRD_PATH = Path(__file__).parents[2] / "charts/promscaler/crds/autoscalers.promscaler.dev.yaml"


def load_crd() -> dict[str, Any]:
    return yaml.safe_load(CRD_PATH.read_text())


def schema_of(crd: dict[str, Any]) -> dict[str, Any]:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def _json_schema(node: Any) -> Any:
    """OpenAPI v3 -> JSON Schema: `nullable` becomes a null type; x- keys are dropped."""
    if isinstance(node, list):
        return [_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: _json_schema(v) for k, v in node.items() if not k.startswith("x-") and k != "nullable"
    }
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if node.get("type") == "object" and "properties" in node and "additionalProperties" not in node:
        out["additionalProperties"] = False  # structural schemas prune unknown fields; we reject
    return out


def apply_defaults(schema: dict[str, Any], value: Any) -> Any:
    """The API server's defaulting: absent properties with a `default` get it, recursively."""
    if isinstance(value, dict):
        for name, sub in (schema.get("properties") or {}).items():
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                value[name] = apply_defaults(sub, value[name])
    elif isinstance(value, list) and "items" in schema:
        return [apply_defaults(schema["items"], v) for v in value]
    return value


_ENV = celpy.Environment()


@functools.cache
def _program(rule: str) -> Any:
    return _ENV.program(_ENV.compile(rule))


def cel_errors(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """Messages of the x-kubernetes-validations rules that `value` breaks."""
    errors = []
    for rule in schema.get("x-kubernetes-validations") or []:
        result = _program(rule["rule"]).evaluate({"self": celpy.json_to_cel(value)})
        if result is not True and not (isinstance(result, celpy.celtypes.BoolType) and result):
            errors.append(f"{path or '<root>'}: {rule['message']}")
    if isinstance(value, dict):
        for name, sub in (schema.get("properties") or {}).items():
            if name in value:
                errors += cel_errors(sub, value[name], f"{path}.{name}")
    elif isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errors += cel_errors(schema["items"], v, f"{path}[{i}]")
    return errors


def validate(
    obj: dict[str, Any], crd: dict[str, Any] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """(defaulted object, errors) as an API server with this CRD would answer a create."""
    schema = schema_of(crd or load_crd())
    obj = apply_defaults(schema, copy.deepcopy(obj))
    validator = jsonschema.Draft7Validator(_json_schema(schema))
    errors = [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)
    ]
    if not errors:
        errors = cel_errors(schema, obj)
    return obj, errors
