"""Server-side field validation: `fieldValidation=Strict|Warn|Ignore` on create, update, patch.

What kube-apiserver's strict decoding finds, with its texts: fields the kind's schema does not
know (`unknown field "spec.foo"`) and fields given twice (`duplicate field "spec.replicas"`, or
for YAML `line 5: key "replicas" already set in map`). Strict: 400 `strict decoding error: ...`;
Warn (the default when the parameter is absent, as upstream): one `Warning` header per finding;
Ignore: nothing. Unknown fields never reach the store: built-in kinds drop them as Go decoding
does, custom resources are pruned by their schema (`schema.prune`).

Order of findings, as upstream's: a JSON create or update lists them in document order; YAML
and patches list the duplicates first, then unknown fields depth first with sorted keys (the
object went through a map). For custom resources, duplicates first, then unknown fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from sandbox import bodies, errors, k8sschemas
from sandbox.resources import ResourceType

STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"
_DIRECTIVES = (IGNORE, STRICT, WARN)
_JSON_PATCH_FIELDS = ("op", "path", "value", "from")
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")
Dups = dict[int, list[str]]  # id(a parsed mapping) -> keys it had more than once, in order


@dataclass(frozen=True)
class Findings:
    """What strict decoding found, as upstream words each item."""

    messages: tuple[str, ...] = ()
    # YAML duplicate keys, reported as one "yaml: unmarshal errors" item in a strict error
    yaml_lines: tuple[str, ...] = ()

    def warnings(self) -> list[str]:
        return [*self.yaml_lines, *self.messages]

    def strict_text(self) -> str:
        items = list(self.messages)
        if self.yaml_lines:
            lines = "\n".join(f"  {line}" for line in self.yaml_lines)
            items.insert(0, f"yaml: unmarshal errors:\n{lines}")
        return "strict decoding error: " + ", ".join(items)

    def __bool__(self) -> bool:
        return bool(self.messages or self.yaml_lines)


def directive(query: Mapping[str, str], options_kind: str) -> str:
    """The request's fieldValidation (Warn when absent); 422 for a value upstream refuses."""
    value = query.get("fieldValidation", "")
    if value == "":
        return WARN
    if value not in _DIRECTIVES:
        supported = ", ".join(f'"{d}"' for d in _DIRECTIVES)
        cause = ("FieldValueNotSupported", "fieldValidation", "")
        message = f'Unsupported value: "{value}": supported values: {supported}'
        raise errors.invalid(options_kind, "meta.k8s.io", "", [(*cause[:2], message)])
    return value


# ---- parsing that remembers duplicate keys ---------------------------------------------------


def load_json(raw: bytes) -> tuple[Any, Dups]:
    dups: Dups = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                dups.setdefault(id(out), []).append(key)
            out[key] = value  # the last one wins, as in Go
        return out

    return json.loads(raw, object_pairs_hook=pairs), dups


class _DupLoader(yaml.SafeLoader):
    """PyYAML's safe loader, noting keys set twice in a mapping (with their line)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicate_lines: list[str] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str) and key in seen:
                line = key_node.start_mark.line + 1
                self.duplicate_lines.append(f'line {line}: key "{key}" already set in map')
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> tuple[Any, list[str]]:
    loader = _DupLoader(text)
    try:
        return loader.get_single_data(), loader.duplicate_lines
    finally:
        loader.dispose()


# ---- walking an object against its schema ----------------------------------------------------


@dataclass
class _Walk:
    defs: Mapping[str, dict[str, Any]]
    dups: Dups
    interleave: bool  # JSON create/update: duplicates where they occur, unknown-and-dup once
    sort: bool
    found: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    build: bool = True  # False: only find, do not build the object without unknown fields

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while isinstance(ref := schema.get("$ref"), str):
            schema = self.defs.get(ref.rsplit("/", 1)[-1], {})
        return schema

    def value(self, schema: dict[str, Any] | None, value: Any, path: str, seen: Any = None) -> Any:
        """`value` at `path` without unknown fields (when building). `seen`: the value at the
        same path in an object already judged; a dict or list that *is* one of its parts is not
        walked again (what it holds was found then; only with `build` off)."""
        if schema is None:
            return value
        schema = self.resolve(schema)
        if isinstance(value, list) and isinstance(schema.get("items"), dict):
            return [self.value(schema["items"], v, f"{path}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict):
            return self.mapping(schema, value, path, seen)
        return value

    def mapping(
        self, schema: dict[str, Any], value: dict[str, Any], path: str, seen: Any = None
    ) -> Any:
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if schema.get("x-kubernetes-preserve-unknown-fields") or (props is None and extra is None):
            return value  # free-form (RawExtension, JSON, preserved): anything goes
        twice = set(self.dups.get(id(value), ()))
        before = seen if isinstance(seen, dict) and not self.build else None
        out: dict[str, Any] = {}
        for key in sorted(value) if self.sort else value:
            child = (props or {}).get(key)
            if child is None and isinstance(extra, dict):
                child = extra
            if child is None and extra is not True:
                where = f"{path}.{key}" if path else key
                self.unknown.append(where)
                self.found.append(f'unknown field "{where}"')
                continue
            if self.interleave and key in twice:
                self.found.append(
                    f'duplicate field "{path}.{key}"' if path else f'duplicate field "{key}"'
                )
            item = value[key]
            if child is None or not isinstance(item, dict | list):
                out[key] = item  # a scalar has no fields to find
                continue
            was = before.get(key) if before is not None else None
            if was is item:
                continue  # the patch left this part as stored: nothing new in it
            out[key] = self.value(child, item, f"{path}.{key}" if path else key, was)
        return out if self.build else value


def _duplicates(value: Any, dups: Dups, path: str = "") -> list[str]:
    """Every duplicate key in a parsed document, in document order."""
    found: list[str] = []
    if isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(_duplicates(item, dups, f"{path}[{i}]"))
    elif isinstance(value, dict):
        twice = dups.get(id(value), [])
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            if key in twice:
                found.append(f'duplicate field "{where}"')
            found.extend(_duplicates(item, dups, where))
    return found


def _root_schema(rt: ResourceType) -> tuple[dict[str, Any] | None, Mapping[str, Any]]:
    defs = k8sschemas.definitions()
    if rt.custom:
        if not rt.schema:
            return None, defs
        props = dict(rt.schema.get("properties") or {})
        props["metadata"] = {"$ref": k8sschemas.OBJECT_META}
        for field_name in ("apiVersion", "kind"):
            props[field_name] = {"type": "string"}
        return {**rt.schema, "properties": props}, defs
    name = k8sschemas.definition_for(rt.group, rt.version, rt.kind)
    return (defs[name] if name else None), defs


def check(
    rt: ResourceType,
    body: Any,
    *,
    dups: Dups,
    yaml_lines: list[str] | None = None,
    document_order: bool,
    stored: Any = None,
) -> tuple[Any, Findings]:
    """The body without unknown fields (built-in kinds), and what strict decoding found.

    `stored` (custom resources only): the object `body` was patched from. Parts of `body` that
    are the very objects of `stored` are not walked: their findings are the stored object's own,
    which a patch does not report (`unknown_after_patch`)."""
    yaml_lines = yaml_lines or []
    schema, defs = _root_schema(rt)
    interleave = document_order and not rt.custom and not yaml_lines
    walk = _Walk(defs, dups, interleave=interleave, sort=not document_order or bool(yaml_lines))
    walk.build = not rt.custom  # a custom resource is kept whole and pruned later
    if yaml_lines:
        walk.dups = {}
    cleaned = walk.value(schema, body, "", stored if rt.custom else None)
    if interleave:
        messages = walk.found
    else:
        # no mapping had a key twice (a patch's result, YAML): nothing to look for
        dup_messages = _duplicates(body, dups) if dups and not yaml_lines else []
        messages = [*dup_messages, *(f'unknown field "{p}"' for p in walk.unknown)]
    result = body if rt.custom else cleaned  # custom resources are pruned by their schema later
    return result, Findings(tuple(messages), tuple(yaml_lines))


def json_patch_findings(ops: Any, dups: Dups) -> list[str]:
    """Unknown and duplicate fields of the operations of a JSON patch (upstream checks both)."""
    found: list[str] = []
    for i, op in enumerate(ops if isinstance(ops, list) else []):
        if not isinstance(op, dict):
            continue
        found.extend(
            f'json patch unknown field "[{i}].{k}"' for k in op if k not in _JSON_PATCH_FIELDS
        )
        found.extend(f'json patch duplicate field "[{i}].{k}"' for k in dups.get(id(op), []))
    return found


def strict_error(rt: ResourceType, findings: Findings, *, decoding: bool) -> errors.ApiError:
    """400 with upstream's text; a create or update names the kind it could not decode."""
    text = findings.strict_text()
    if decoding:
        text = f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {text}'
    return errors.bad_request(text)


def warning_header(text: str) -> str:
    """A `Warning` header value as kube-apiserver writes it (code 299, agent "-")."""
    return f"299 - {json.dumps(text)}"


# ---- request bodies --------------------------------------------------------------------------


def decode_object(rt: ResourceType, raw: bytes, content_type: str) -> tuple[Any, Findings]:
    """A JSON or YAML create/update body, without unknown fields, and the findings."""
    ctype = content_type.split(";")[0].strip().lower()
    try:
        if "yaml" in ctype:
            body, lines = load_yaml(raw.decode())
            return check(rt, body, dups={}, yaml_lines=lines, document_order=False)
        body, dups = load_json(raw)
    except (ValueError, yaml.YAMLError, UnicodeDecodeError):
        return bodies.decode(raw, content_type), Findings()  # raises upstream's 400
    return check(rt, body, dups=dups, document_order=True)


def patch_findings(ctype: str, raw: bytes) -> list[str]:
    """Duplicates in a merge or strategic merge patch, or a JSON patch's bad operations."""
    try:
        doc, dups = load_json(raw)
    except ValueError:
        return []  # applying the patch reports the broken JSON
    if ctype.startswith("application/json-patch"):
        return json_patch_findings(doc, dups)
    return _duplicates(doc, dups)


def unknown_after_patch(rt: ResourceType, old: Any, patched: Any) -> tuple[Any, list[str]]:
    """The patched object cleaned, and unknown fields the patch brought (not already stored)."""
    cleaned, found = check(rt, patched, dups={}, document_order=False, stored=old)
    if not found.messages:  # the usual patch: nothing unknown, so no need to walk the old object
        return cleaned, []
    _, before = check(rt, old, dups={}, document_order=False)
    known = set(before.messages)
    return cleaned, [m for m in found.messages if m not in known]
