"""The series a KEDA query reads, as a selector the adapter's discovery can list.

Parsed with promql-parser (GreptimeTeam's Rust parser), so that a selector is found by the
grammar, never by a regular expression over the query's text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["QueryError", "Selector", "first_selector"]

_OPS = {"Equal": "=", "NotEqual": "!=", "Re": "=~", "NotRe": "!~"}


class QueryError(ValueError):
    """The query is not valid PromQL."""


@dataclass(frozen=True)
class Selector:
    """A vector selector: `name` ("" when the selector has none) and its text."""

    name: str
    text: str


def first_selector(query: str) -> Selector | None:
    """The first vector selector of `query` in reading order, or None if it reads no series
    (`vector(1)`)."""
    import promql_parser  # a tools dependency: imported only when converting

    try:
        expr = promql_parser.parse(query)
    except (ValueError, RuntimeError) as err:
        raise QueryError(str(err)) from err
    found: list[Selector] = []

    def visit(node: Any) -> bool:
        if isinstance(node, promql_parser.VectorSelector):
            found.append(_selector(node))
            return False  # the first is enough: stop the walk
        return True

    promql_parser.walk(expr, visit)
    return found[0] if found else None


def _selector(node: Any) -> Selector:
    name = node.name or ""
    matchers = [
        f"{m.name}{_op(m.op)}{json.dumps(m.value)}"
        for m in node.matchers.matchers
        if m.name != "__name__" or not name
    ]
    return Selector(name, name + ("{" + ",".join(matchers) + "}" if matchers else ""))


def _op(op: Any) -> str:
    # MatchOp prints as `Equal`, `NotEqual`, `Re(...)`, `NotRe(...)`
    return _OPS[str(op).split("(", 1)[0].split(".")[-1]]
