"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), strategic merge patch.

Strategic merge covers what kubectl's client-side apply and `kubectl patch` send for the
built-in types used here: lists merged by key (containers by name, conditions by type, ...),
`$patch: replace|delete|merge`, `$retainKeys`, `$deleteFromPrimitiveList/<f>` and
`$setElementOrder/<f>` directives. Malformed patches raise `PatchError` (a 400 or 422).
"""

from __future__ import annotations

import copy
from typing import Any


class PatchError(ValueError):
    """The patch cannot be applied (bad document, failed test op, missing path)."""


# list fields merged by a key in strategic merge patch (patchMergeKey of the Go types)
MERGE_KEYS: dict[str, tuple[str, ...]] = {
    "containers": ("name",),
    "initContainers": ("name",),
    "ephemeralContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",),
    "conditions": ("type",),
    "imagePullSecrets": ("name",),
    "ports": ("containerPort", "port"),  # container ports vs service ports
    "hostAliases": ("ip",),
    "ownerReferences": ("uid",),
    "topologySpreadConstraints": ("topologyKey",),
    "resourceClaims": ("name",),
    "containerStatuses": ("name",),
    "initContainerStatuses": ("name",),
}
# primitive lists with patchStrategy=merge (union instead of replace)
MERGE_PRIMITIVES = {"finalizers"}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return _copied(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _copied(value: Any) -> Any:
    """A JSON value's own copy (what `copy.deepcopy` gives for one, in a fraction of the time:
    strings, numbers, booleans and null are immutable, so only lists and objects are rebuilt)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


# ---- JSON patch ----------------------------------------------------------------------------


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}: must start with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list[Any], token: str, *, insert: bool) -> int:
    if insert and token == "-":
        return len(container)
    if not token.isdigit():
        raise PatchError(f"invalid array index {token!r}")
    i = int(token)
    if i > len(container) or (not insert and i == len(container)):
        raise PatchError(f"array index {i} out of bounds")
    return i


def _parent(doc: Any, tokens: list[str]) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"path element {token!r} not found")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, insert=False)]
        else:
            raise PatchError(f"cannot descend into a scalar at {token!r}")
    return node


def _get(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path {path!r} not found")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, insert=False)]
    raise PatchError(f"path {path!r} not found")


def _remove(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens)
    if isinstance(parent, dict):
        if tokens[-1] not in parent:
            raise PatchError(f"path {path!r} not found")
        return parent.pop(tokens[-1])
    if isinstance(parent, list):
        return parent.pop(_index(parent, tokens[-1], insert=False))
    raise PatchError(f"path {path!r} not found")


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens)
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, tokens[-1], insert=True), value)
    else:
        raise PatchError(f"path {path!r} not found")
    return doc


def json_patch(target: Any, operations: Any) -> Any:
    """Apply an RFC 6902 operation list to a copy of `target`."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for i, op in enumerate(operations):
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            raise PatchError(f"operation {i}: must be an object with a string 'path'")
        kind, path = op.get("op"), op["path"]
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"operation {i} ({kind}): missing 'value'")
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            _get(doc, path)  # must exist
            if _pointer(path):
                _remove(doc, path)
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind in ("move", "copy"):
            if not isinstance(op.get("from"), str):
                raise PatchError(f"operation {i} ({kind}): missing 'from'")
            value = (
                _remove(doc, op["from"]) if kind == "move" else copy.deepcopy(_get(doc, op["from"]))
            )
            doc = _add(doc, path, value)
        elif kind == "test":
            if _get(doc, path) != op["value"]:
                raise PatchError(f"testing value {path} failed")
        else:
            raise PatchError(f"operation {i}: unknown op {kind!r}")
    return doc


# ---- strategic merge patch ------------------------------------------------------------------


def _merge_key(field: str, items: list[Any]) -> str | None:
    candidates = MERGE_KEYS.get(field)
    if not candidates:
        return None
    for key in candidates:
        if any(isinstance(i, dict) and key in i for i in items):
            return key
    return candidates[0]


def _merge_list(field: str, current: list[Any], patch: list[Any]) -> list[Any]:
    key = _merge_key(field, [*current, *patch])
    if key is None:
        if field in MERGE_PRIMITIVES:
            return [*current, *(v for v in patch if v not in current)]
        # no merge strategy: the patch list replaces (after dropping directive items)
        return [strategic_merge(None, v) if isinstance(v, dict) else v for v in patch]
    if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
        return [i for i in patch if not (isinstance(i, dict) and "$patch" in i)]
    result = [copy.deepcopy(i) for i in current]
    for item in patch:
        if not isinstance(item, dict):
            raise PatchError(f"{field}: expected objects merged by {key!r}")
        directive = item.get("$patch")
        pos = next((n for n, c in enumerate(result) if c.get(key) == item.get(key)), None)
        if directive == "delete":
            if pos is not None:
                result.pop(pos)
        elif pos is None:
            result.append(strategic_merge(None, item))
        else:
            result[pos] = strategic_merge(result[pos], item)
    return result


def strategic_merge(target: Any, patch: Any) -> Any:
    """Apply a strategic merge patch (object level) to a copy of `target`."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    base = dict(target) if isinstance(target, dict) and directive != "replace" else {}
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            base[name] = [v for v in base.get(name) or [] if v not in (value or [])]
            continue
        if value is None:
            base.pop(key, None)
        elif isinstance(value, list) and isinstance(base.get(key), list):
            base[key] = _merge_list(key, base[key], value)
        elif isinstance(value, list):
            base[key] = _merge_list(key, [], value)
        elif isinstance(value, dict):
            merged = strategic_merge(base.get(key), value)
            if merged is None:
                base.pop(key, None)
            else:
                base[key] = merged
        else:
            base[key] = copy.deepcopy(value)
    if isinstance(retain, list):
        base = {k: v for k, v in base.items() if k in retain}
    return base
