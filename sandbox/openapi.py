"""A minimal OpenAPI v3 index and per-group-version documents.

kubectl 1.32 `apply` asks /openapi/v3 whether the server supports the `fieldValidation` query
parameter for a kind (PATCH operations tagged with x-kubernetes-group-version-kind); when it
does, kubectl validates on the server instead of downloading schemas. Without request-body
media types kubectl builds its patches from its compiled-in types (strategic merge for built-in
kinds, JSON merge patch for custom resources), exactly what this sandbox understands.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sandbox.resources import Registry, ResourceType


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _doc_hash(doc: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()


def index(registry: Registry) -> dict[str, Any]:
    gvs = {(rt.group, rt.version) for rt in registry.all()}
    paths = {}
    for group, version in sorted(gvs):
        path = _gv_path(group, version)
        digest = _doc_hash(group_version(registry, group, version) or {})
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


def _operation(rt: ResourceType, action: str) -> dict[str, Any]:
    return {
        "operationId": f"{action}{rt.kind}",
        "parameters": [
            {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
            {
                "name": "fieldManager",
                "in": "query",
                "schema": {"type": "string", "uniqueItems": True},
            },
            {
                "name": "fieldValidation",
                "in": "query",
                "schema": {"type": "string", "uniqueItems": True},
            },
        ],
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": rt.group,
            "version": rt.version,
            "kind": rt.kind,
        },
    }


def group_version(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    types = registry.in_group_version(group, version)
    if not types:
        return None
    prefix = "/" + _gv_path(group, version)
    paths: dict[str, Any] = {}
    for rt in sorted(types, key=lambda t: t.plural):
        scope = (
            f"{prefix}/namespaces/{{namespace}}/{rt.plural}"
            if rt.namespaced
            else f"{prefix}/{rt.plural}"
        )
        paths[scope] = {"post": _operation(rt, "post")}
        if "patch" in rt.verbs:
            paths[f"{scope}/{{name}}"] = {
                "patch": _operation(rt, "patch"),
                "put": _operation(rt, "put"),
            }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": {}},
    }
