"""OpenAPI as kube-apiserver serves it: /openapi/v2 and /openapi/v3 (+ per group-version).

Schemas of built-in kinds come from the pinned Kubernetes release (`k8sschemas`); a custom
resource's from its CRD's `openAPIV3Schema`, rebuilt whenever the served types change. Which
kinds appear is read from the `Registry`, so a kind another module registers gets its schema
with no change here: a built-in kind needs only its (group, version, kind) to exist in the pinned
definitions, a custom one only its schema.

kubectl 1.32 reads /openapi/v3 for `explain` and for whether a kind's PATCH takes the
`fieldValidation` parameter (then it validates on the server), and /openapi/v2 (as protobuf,
see `gnostic`) for client-side validation of what the server cannot validate, such as a `v1 List`.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from typing import Any

from aiohttp import web

from sandbox import errors, gnostic, k8sschemas
from sandbox.bodies import respond
from sandbox.resources import Registry, ResourceType

V2_REF = "#/definitions/"
V3_REF = "#/components/schemas/"
_QUERY = ("dryRun", "fieldManager", "fieldValidation")
# CRD schema keywords that OpenAPI v2 cannot say; upstream drops them from the v2 document too
_V3_ONLY = ("nullable", "oneOf", "anyOf", "not", "x-kubernetes-validations")


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def definition_name(rt: ResourceType) -> str | None:
    """The schema's name: upstream's for built-in kinds, reversed group for custom ones."""
    if rt.custom:
        return ".".join([*reversed(rt.group.split(".")), rt.version, rt.kind])
    return k8sschemas.definition_for(rt.group, rt.version, rt.kind)


def _custom_schema(rt: ResourceType) -> dict[str, Any]:
    schema: dict[str, Any] = copy.deepcopy(rt.schema) if rt.schema else {"type": "object"}
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": "APIVersion of this object."}
    props["kind"] = {"type": "string", "description": "Kind of this object."}
    props["metadata"] = {"$ref": V2_REF + k8sschemas.OBJECT_META}
    schema["x-kubernetes-group-version-kind"] = [
        {"group": rt.group, "version": rt.version, "kind": rt.kind}
    ]
    return schema


def _schemas(types: tuple[ResourceType, ...]) -> dict[str, dict[str, Any]]:
    """Definition name -> v2 schema for the served kinds and all they reference."""
    defs = k8sschemas.definitions()
    custom = {
        name: _custom_schema(rt) for rt in types if rt.custom and (name := definition_name(rt))
    }
    roots = [n for rt in types if not rt.custom and (n := definition_name(rt))]
    pool = {**defs, **custom}
    names = k8sschemas.closure([*roots, *custom], pool)
    return {name: pool[name] for name in names}


def _key(registry: Registry) -> tuple[Any, ...]:
    # ResourceType equality ignores the schema, so a changed CRD schema must be in the key
    return tuple(
        sorted(
            (
                (rt, json.dumps(rt.schema, sort_keys=True) if rt.custom else "")
                for rt in registry.all()
            ),
            key=lambda p: (p[0].group, p[0].version, p[0].plural),
        )
    )


@functools.lru_cache(maxsize=16)
def _documents(key: tuple[Any, ...]) -> dict[str, Any]:
    types = tuple(rt for rt, _ in key)
    schemas = _schemas(types)
    gvs = sorted({(rt.group, rt.version) for rt in types})
    v3 = {_gv_path(g, v): _v3_document(types, schemas, g, v) for g, v in gvs}
    return {"v2": _v2_document(types, schemas), "v3": v3}


def documents(registry: Registry) -> dict[str, Any]:
    return _documents(_key(registry))


def index(registry: Registry) -> dict[str, Any]:
    paths = {
        path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={_doc_hash(doc)}"}
        for path, doc in documents(registry)["v3"].items()
    }
    return {"paths": paths}


def group_version(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    doc: dict[str, Any] | None = documents(registry)["v3"].get(_gv_path(group, version))
    return doc


def v2(registry: Registry) -> dict[str, Any]:
    return documents(registry)["v2"]  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=16)
def _v2_protobuf(key: tuple[Any, ...]) -> bytes:
    return gnostic.document(_documents(key)["v2"])


def v2_protobuf(registry: Registry) -> bytes:
    return _v2_protobuf(_key(registry))


def _doc_hash(doc: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()


def _rewrite_refs(node: Any, *, v3: bool) -> Any:
    if isinstance(node, list):
        return [_rewrite_refs(n, v3=v3) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":  # names, not keywords: a property may be called "nullable"
            out[key] = {k: _rewrite_refs(v, v3=v3) for k, v in value.items()}
        elif key == "$ref" and v3 and isinstance(value, str):
            out[key] = V3_REF + value[len(V2_REF) :]
        elif not v3 and key in _V3_ONLY:
            continue
        elif key in ("enum", "default", "example", "x-kubernetes-group-version-kind"):
            out[key] = value
        else:
            out[key] = _rewrite_refs(value, v3=v3)
    return out


def _operation(rt: ResourceType, action: str, *, v3: bool) -> dict[str, Any]:
    params = [
        {"name": name, "in": "query", "uniqueItems": True, "type": "string"} for name in _QUERY
    ]
    if v3:
        params = [
            {"name": p["name"], "in": "query", "schema": {"type": "string", "uniqueItems": True}}
            for p in params
        ]
    return {
        "operationId": f"{action}{rt.kind}",
        "parameters": params,
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": rt.group,
            "version": rt.version,
            "kind": rt.kind,
        },
    }


def _paths(types: tuple[ResourceType, ...], *, v3: bool) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for rt in sorted(types, key=lambda t: (t.group, t.version, t.plural)):
        prefix = "/" + _gv_path(rt.group, rt.version)
        scope = (
            f"{prefix}/namespaces/{{namespace}}/{rt.plural}"
            if rt.namespaced
            else f"{prefix}/{rt.plural}"
        )
        paths[scope] = {"post": _operation(rt, "post", v3=v3)}
        if "patch" in rt.verbs:
            paths[f"{scope}/{{name}}"] = {
                "patch": _operation(rt, "patch", v3=v3),
                "put": _operation(rt, "put", v3=v3),
            }
    return paths


def _v3_document(
    types: tuple[ResourceType, ...], schemas: dict[str, Any], group: str, version: str
) -> dict[str, Any]:
    mine = tuple(rt for rt in types if (rt.group, rt.version) == (group, version))
    roots = [n for rt in mine if (n := definition_name(rt))]
    names = k8sschemas.closure(roots, schemas)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": k8sschemas.PINNED},
        "paths": _paths(mine, v3=True),
        "components": {"schemas": {n: _v3_schema(n, schemas[n]) for n in names}},
    }


def _v3_schema(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    form = k8sschemas.V3_FORMS.get(name)
    if form is not None:
        return {"description": schema.get("description", ""), **form}
    return _rewrite_refs(schema, v3=True)  # type: ignore[no-any-return]


def _v2_document(types: tuple[ResourceType, ...], schemas: dict[str, Any]) -> dict[str, Any]:
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": k8sschemas.PINNED},
        "paths": _paths(types, v3=False),
        "definitions": {n: _rewrite_refs(s, v3=False) for n, s in schemas.items()},
    }


def answer(registry: Any, segs: list[str], accept: str) -> web.Response:
    """The answer to GET /openapi/v2 or /openapi/v3[/api/<v>|/apis/<g>/<v>] (404 otherwise)."""
    if segs == ["openapi", "v2"]:
        if gnostic.MEDIA_TYPE in accept:  # what client-go's discovery asks for
            return web.Response(body=v2_protobuf(registry), content_type=gnostic.CONTENT_TYPE)
        return respond(v2(registry))
    if segs[:2] == ["openapi", "v3"]:
        doc = index(registry) if len(segs) == 2 else group_version(registry, *_openapi_gv(segs[2:]))
        if doc is not None:
            return respond(doc)
    raise errors.path_not_found()


def _openapi_gv(segs: list[str]) -> tuple[str, str]:
    if segs[:1] == ["api"] and len(segs) == 2:
        return "", segs[1]
    if segs[:1] == ["apis"] and len(segs) == 3:
        return segs[1], segs[2]
    return "-", "-"
