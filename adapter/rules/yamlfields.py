"""Strict YAML for the rule file and the field readers every part of it uses.

The peer loads its file with yaml.v2's `UnmarshalStrict`: duplicate keys are errors and plain
scalars fill string fields with their text. `Place` names a position in the document so every
error says where it is (`config: rules[3].name.matches: ...`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from adapter.rules.errors import RuleError

__all__ = [
    "ANY_KEYS",
    "Place",
    "StrictLoader",
    "boolean",
    "mapping",
    "sequence",
    "string",
    "type_name",
]


# ---- YAML with duplicate-key detection ----------------------------------------------------------


# libyaml's parser when PyYAML was built with it (PyPI wheels are): parsing is most of a rule
# file's load time, about 4x faster in C, which keeps a reload of a few hundred rules short
_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StrictLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """A safe loader that rejects duplicate mapping keys (as the peer's UnmarshalStrict does)."""


def _strict_mapping(loader: StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    built: dict[Any, Any] = loader.construct_mapping(node)
    return built


class _Scalar(str):
    """A plain scalar YAML would type (int, float, bool, timestamp), kept as its text: the
    peer's yaml.v2 fills string fields with the scalar's text (`as: 2xx`, `matches: 123`)."""

    tag: str = ""


def _text_scalar(loader: StrictLoader, node: yaml.ScalarNode) -> _Scalar:
    scalar = _Scalar(loader.construct_scalar(node))
    scalar.tag = node.tag
    return scalar


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _strict_mapping)
for _tag in ("bool", "int", "float", "timestamp"):
    StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _text_scalar)
_TRUE = frozenset({"true", "yes", "on"})  # YAML 1.1 booleans, as yaml.v2 reads them


def boolean(value: Any, place: Place, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, _Scalar) and value.tag.endswith(":bool"):
        return value.lower() in _TRUE
    raise place.error(f"must be true or false, not {type_name(value)}")


class Place:
    """A position in the document, for messages: `config: rules[3].name`."""

    def __init__(self, source: str, rel: str = "") -> None:
        self.source = source
        self.rel = rel

    @property
    def path(self) -> str:
        return f"{self.source}: {self.rel}" if self.rel else self.source

    def __truediv__(self, key: str | int) -> Place:
        if isinstance(key, int):
            return Place(self.source, f"{self.rel}[{key}]")
        return Place(self.source, f"{self.rel}.{key}" if self.rel else key)

    def error(self, problem: str) -> RuleError:
        return RuleError(self.path, problem)


def mapping(value: Any, place: Place, allowed: frozenset[str]) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise place.error(f"must be a mapping, not {type_name(value)}")
    for key in value:
        if key not in allowed:
            raise (place / str(key)).error(
                f"unknown key {key!r} (allowed: {', '.join(sorted(allowed))})"
            )
    return value


def string(value: Any, place: Place, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise place.error(f"must be a string, not {type_name(value)}")
    if required and not value.strip():
        raise place.error("is required and must not be empty")
    return str(value)


def sequence(value: Any, place: Place) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise place.error(f"must be a list, not {type_name(value)}")
    return value


def type_name(value: Any) -> str:
    if isinstance(value, _Scalar):
        return {"bool": "a boolean", "timestamp": "a timestamp"}.get(
            value.tag.rpartition(":")[2], "a number"
        )
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return "a string" if isinstance(value, str) else "null"


class _AnyKeys(frozenset[str]):
    """Allows every key (maps whose keys are data, such as label overrides or headers)."""

    def __contains__(self, key: object) -> bool:
        return True


ANY_KEYS = _AnyKeys()
