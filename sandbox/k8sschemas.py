"""The Kubernetes object schemas of one pinned release, in OpenAPI v2 form.

They come from the JSON-schema copy of upstream's `swagger.json` definitions that the
kubernetes-validate package ships (`kubernetes-json-schema/v1.37.0-local/_definitions.json`),
turned back into the OpenAPI shape kube-apiserver serves: one `type` per schema instead of
`[type, "null"]`, `#/definitions/...` references, int-or-string and quantity as upstream writes
them, and without the `apiVersion`/`kind` enums that the JSON-schema copy adds. Loaded once per
process on first use (about 1.3 MB of JSON), never at sandbox start.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

# v1.37, the newest release kubernetes-validate ships: the sandbox's HPA semantics are 1.37's
# (behavior tolerances, HPAScaleToZero), and a v1.32 schema would drop `behavior.*.tolerance`
# as an unknown field. /version still says v1.32, the kubectl this machine has (skew policy).
PINNED = "v1.37.0"
_PACKAGE = "kubernetes_validate"
_PATH = f"kubernetes-json-schema/{PINNED}-local/_definitions.json"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# upstream's v2 form of these two: a string with a format (v2 has no oneOf)
_SPECIAL = {_INT_OR_STRING: "int-or-string", _QUANTITY: ""}
# and their v3 form: oneOf and no type, which `kubectl explain` shows by name (<IntOrString>)
V3_FORMS: dict[str, dict[str, Any]] = {
    _INT_OR_STRING: {"oneOf": [{"type": "integer"}, {"type": "string"}]},
    _QUANTITY: {"oneOf": [{"type": "string"}, {"type": "number"}]},
}
OBJECT_META = _META


class SchemasUnavailable(RuntimeError):
    """kubernetes-validate (the `sandbox` extra) is not installed."""


def _ref(text: str) -> str:
    return "#/definitions/" + text.rsplit("/", 1)[-1]


def _convert(node: Any) -> Any:
    if isinstance(node, list):
        return [_convert(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, list):
            out[key] = next(t for t in value if t != "null")
        elif key == "$ref" and isinstance(value, str):
            out[key] = _ref(value)
        elif key in ("properties", "x-kubernetes-group-version-kind", "enum", "required"):
            out[key] = {k: _convert(v) for k, v in value.items()} if key == "properties" else value
        else:
            out[key] = _convert(value)
    return out


def _definition(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    if name in _SPECIAL:
        plain = {"description": raw.get("description", ""), "type": "string"}
        return {**plain, "format": _SPECIAL[name]} if _SPECIAL[name] else plain
    schema: dict[str, Any] = _convert(raw)
    for field in ("apiVersion", "kind"):  # added by the JSON-schema copy, not upstream's
        prop = schema.get("properties", {}).get(field)
        if prop is not None and "x-kubernetes-group-version-kind" in schema:
            prop.pop("enum", None)
    return schema


class _Definitions(Mapping[str, dict[str, Any]]):
    """The definitions, each converted on first use (a kind needs a few dozen of 638)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self._raw = raw
        self._done: dict[str, dict[str, Any]] = {}

    def __getitem__(self, name: str) -> dict[str, Any]:
        if name not in self._done:
            self._done[name] = _definition(name, self._raw[name])
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def raw(self) -> dict[str, Any]:
        return self._raw


@functools.cache
def definitions() -> _Definitions:
    """Definition name -> OpenAPI v2 schema, for every type of the pinned release."""
    # find the file without importing kubernetes_validate (its imports cost ~0.25 s)
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SchemasUnavailable(
            f"the Kubernetes {PINNED} schemas come from the kubernetes-validate package "
            "(pip install 'promscaler[sandbox]'); it is not installed"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / _PATH
    try:
        raw = json.loads(path.read_text())["$defs"]
    except (OSError, ValueError, KeyError) as err:
        raise SchemasUnavailable(f"cannot read the Kubernetes schemas at {path}: {err}") from err
    return _Definitions(raw)


@functools.cache
def by_kind() -> dict[tuple[str, str, str], str]:
    """(group, version, kind) -> definition name, from `x-kubernetes-group-version-kind`."""
    found: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().raw().items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            # a kind listed by several definitions (DeleteOptions, WatchEvent): the first wins
            found.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return found


def definition_for(group: str, version: str, kind: str) -> str | None:
    return by_kind().get((group, version, kind))


def closure(roots: list[str], defs: Mapping[str, dict[str, Any]]) -> list[str]:
    """`roots` and every definition they reference, transitively, sorted."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        stack.extend(_refs(defs[name]))
    return sorted(seen)


def _refs(node: Any) -> list[str]:
    if isinstance(node, list):
        return [r for n in node for r in _refs(n)]
    if not isinstance(node, dict):
        return []
    ref = node.get("$ref")
    found = [ref.rsplit("/", 1)[-1]] if isinstance(ref, str) else []
    for key, value in node.items():
        if key == "properties":  # property names are data: one may be called "$ref"
            found.extend(r for prop in value.values() for r in _refs(prop))
        elif key not in ("$ref", "enum", "x-kubernetes-group-version-kind", "default", "example"):
            found.extend(_refs(value))
    return found
