"""The `/scale` subresource: a workload seen as an `autoscaling/v1` Scale.

Built-in workloads keep their selector as a LabelSelector object in `spec.selector`; custom
resources name their fields with the CRD's `specReplicasPath`, `statusReplicasPath` and
`labelSelectorPath` (whose value is already a selector string).
"""

from __future__ import annotations

import json
from typing import Any

from common.selectors import SelectorError, selector_from_label_selector
from sandbox import errors
from sandbox.operations import Api
from sandbox.patchbody import apply_patch
from sandbox.resources import ResourceType, ScalePaths
from sandbox.store import Obj

SCALE = ResourceType("autoscaling", "v1", "scale", "Scale", True)


def _path(path: str) -> list[str]:
    return [p for p in path.split(".") if p]


def read_path(obj: Any, path: str) -> Any:
    for part in _path(path):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def write_path(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    parts = _path(path)
    result = dict(obj)
    node = result
    for part in parts[:-1]:
        child = node.get(part)
        node[part] = dict(child) if isinstance(child, dict) else {}
        node = node[part]
    node[parts[-1]] = value
    return result


def selector_string(paths: ScalePaths, obj: Obj) -> str:
    if paths.label_selector is not None:
        value = read_path(obj, paths.label_selector)
        return value if isinstance(value, str) else ""
    try:
        return str(selector_from_label_selector((obj.get("spec") or {}).get("selector")))
    except SelectorError:
        return ""


def to_scale(rt: ResourceType, obj: Obj) -> Obj:
    paths = rt.scale or ScalePaths()
    meta = obj["metadata"]
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": int(read_path(obj, paths.spec_replicas) or 0)},
        "status": {
            "replicas": int(read_path(obj, paths.status_replicas) or 0),
            "selector": selector_string(paths, obj),
        },
    }


def _replicas(rt: ResourceType, name: str, body: Any) -> int:
    replicas = (body.get("spec") or {}).get("replicas", 0) if isinstance(body, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid(
            "Scale",
            "autoscaling",
            name,
            [
                (
                    "FieldValueInvalid",
                    "spec.replicas",
                    f"Invalid value: {replicas}: must be greater than or equal to 0",
                )
            ],
        )
    return replicas


def get_scale(api: Api, rt: ResourceType, namespace: str, name: str) -> Obj:
    return to_scale(rt, api.get(rt, namespace, name))


def update_scale(
    api: Api, rt: ResourceType, namespace: str, name: str, body: Any, *, dry_run: bool = False
) -> Obj:
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a Scale object")
    obj = api.get(rt, namespace, name)
    meta = body.get("metadata") or {}
    if meta.get("name", name) != name:
        raise errors.bad_request(
            f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
        )
    sent_rv = meta.get("resourceVersion")
    if sent_rv and sent_rv != obj["metadata"]["resourceVersion"]:
        raise errors.conflict(rt.plural, rt.group, name, errors.STALE)
    replicas = _replicas(rt, name, body)
    paths = rt.scale or ScalePaths()
    updated = write_path(obj, paths.spec_replicas, replicas)
    updated["metadata"] = {**obj["metadata"]}
    result, _ = api.update(rt, namespace, name, updated, dry_run=dry_run)
    return to_scale(rt, result)


def patch_scale(
    api: Api,
    rt: ResourceType,
    namespace: str,
    name: str,
    content_type: str,
    raw: bytes,
    *,
    dry_run: bool = False,
) -> Obj:
    current = get_scale(api, rt, namespace, name)
    patched = apply_patch(SCALE, current, content_type, raw)
    return update_scale(api, rt, namespace, name, json.loads(json.dumps(patched)), dry_run=dry_run)
