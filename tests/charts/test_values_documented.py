"""values.yaml documents every value, and values.schema.json knows every value."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import yaml

from tests.charts.helm import CHART

VALUES_TEXT = (CHART / "values.yaml").read_text()
SCHEMA = json.loads((CHART / "values.schema.json").read_text())
KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z][\w-]*):")


def commented_keys(text: str) -> dict[tuple[str, ...], bool]:
    """Each mapping key's path -> whether a comment line sits right above it."""
    stack: list[tuple[int, str]] = []
    result: dict[tuple[str, ...], bool] = {}
    previous = ""
    for line in text.splitlines():
        match = KEY.match(line)
        if match:
            indent = len(match["indent"])
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, match["key"]))
            result[tuple(k for _, k in stack)] = previous.lstrip().startswith("#")
        if line.strip():
            previous = line
    return result


def schema_leaves(schema: dict[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Paths the schema describes value by value (free-form objects count as one value)."""
    props = schema.get("properties")
    if schema.get("additionalProperties") is False and props:
        for key, sub in props.items():
            yield from schema_leaves(sub, (*path, key))
    else:
        yield path


def test_every_value_has_a_comment() -> None:
    keys = commented_keys(VALUES_TEXT)
    values = yaml.safe_load(VALUES_TEXT)
    missing = []
    for path in schema_leaves(SCHEMA):
        node: Any = values
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if node is None and path not in keys:
            continue  # optional in the schema, absent from values.yaml
        if not keys.get(path):
            missing.append(".".join(path))
    assert not missing, f"values without a comment: {missing}"


def test_every_value_in_values_yaml_is_in_the_schema() -> None:
    def walk(values: Any, schema: dict[str, Any], path: str) -> Iterator[str]:
        if not isinstance(values, dict) or schema.get("additionalProperties") is not False:
            return
        for key, value in values.items():
            sub = schema.get("properties", {}).get(key)
            if sub is None:
                yield f"{path}{key}"
            else:
                yield from walk(value, sub, f"{path}{key}.")

    assert list(walk(yaml.safe_load(VALUES_TEXT), SCHEMA, "")) == []


def test_the_helper_reads_comments_and_nesting() -> None:
    text = "# a\na: 1\nb:\n  # c\n  c: 2\n  d: 3\n"
    assert commented_keys(text) == {
        ("a",): True,
        ("b",): False,
        ("b", "c"): True,
        ("b", "d"): False,
    }
