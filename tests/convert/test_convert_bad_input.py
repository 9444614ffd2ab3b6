"""Whatever a user feeds `convert`, the answer is a conversion or a ConvertError naming the
place: never another exception (a traceback on the command line)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autoscaler.convert import ConvertError, convert
from tests.convert import examples as ex
from tests.convert.keda_docs import DOCS

TEXTS = [getattr(ex, n) for n in dir(ex) if n.startswith(("KEDA_", "HPA_"))] + list(DOCS.values())
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            found += paths(value, (*prefix, i))
    return found


def replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_value_anywhere_is_converted_or_named(data):
    doc = ex.load(data.draw(st.sampled_from(TEXTS)))
    path = data.draw(st.sampled_from(paths(doc)))
    doc = replaced(doc, path, data.draw(VALUES))
    try:
        result = convert(doc)
    except ConvertError:
        return
    yaml.safe_dump(result.autoscaler)  # the output is writable as YAML
