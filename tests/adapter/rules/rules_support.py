"""Helpers for the rule engine tests: fixtures on disk and a PromQL matcher-list parser.

The parser is deliberately independent of `adapter.rules.matchers`: it reads matchers the way
Prometheus' lexer does (Go string escapes), so the tests can check that rendered queries mean
exactly what was intended.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from adapter.rules import RulesConfig, load_rules
from adapter.rules.resources import STATIC_RESOLVER, ResourceInfo

DATA = Path(__file__).parent / "data"


def resource(name: str) -> ResourceInfo:
    """A built-in resource's info (the static resolver knows it)."""
    info = STATIC_RESOLVER.resolve(name)
    assert info is not None, name
    return info


def load_fixture(name: str) -> RulesConfig:
    return load_rules((DATA / name).read_text(), source=name)


@dataclass(frozen=True)
class ParsedMatcher:
    label: str
    op: str
    value: str


_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_OPS = ("=~", "!~", "!=", "=")
_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class PromQLSyntaxError(ValueError):
    pass


def _string(text: str, pos: int) -> tuple[str, int]:
    """A double-quoted PromQL string starting at `pos`; returns (value, position after)."""
    if text[pos : pos + 1] != '"':
        raise PromQLSyntaxError(f"expected a string at {pos}: {text[pos : pos + 20]!r}")
    out: list[str] = []
    pos += 1
    while True:
        if pos >= len(text):
            raise PromQLSyntaxError("unterminated string")
        char = text[pos]
        if char == '"':
            return "".join(out), pos + 1
        if char == "\n":
            raise PromQLSyntaxError("newline in string")
        if char != "\\":
            out.append(char)
            pos += 1
            continue
        code = text[pos + 1]
        if code in _SIMPLE:
            out.append(_SIMPLE[code])
            pos += 2
        elif code in '\\"':
            out.append(code)
            pos += 2
        elif code in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[code]
            out.append(chr(int(text[pos + 2 : pos + 2 + width], 16)))
            pos += 2 + width
        else:
            raise PromQLSyntaxError(f"unknown escape \\{code}")


def parse_matchers(text: str, pos: int = 0) -> tuple[list[ParsedMatcher], int]:
    """Parse `label op "value", ...` from `pos` up to a closing `}`; returns (matchers, index
    of the `}`)."""
    matchers: list[ParsedMatcher] = []
    while True:
        if text[pos : pos + 1] == "}":
            return matchers, pos
        label = _LABEL.match(text, pos)
        if label is None:
            raise PromQLSyntaxError(f"expected a label name at {pos}: {text[pos : pos + 20]!r}")
        pos = label.end()
        op = next((op for op in _OPS if text.startswith(op, pos)), None)
        if op is None:
            raise PromQLSyntaxError(f"expected an operator at {pos}")
        value, pos = _string(text, pos + len(op))
        matchers.append(ParsedMatcher(label.group(0), op, value))
        if text[pos : pos + 1] == ",":
            pos += 1
        elif text[pos : pos + 1] != "}":
            raise PromQLSyntaxError(f"expected , or }} at {pos}: {text[pos : pos + 20]!r}")


def parse_selector_query(query: str, prefix: str, suffix: str) -> list[ParsedMatcher]:
    """Check `query` is exactly `prefix{matchers}suffix` and return the matchers."""
    assert query.startswith(prefix + "{"), query
    matchers, end = parse_matchers(query, len(prefix) + 1)
    assert query[end + 1 :] == suffix, query[end + 1 :]
    return matchers


def split_regex_union(regex: str) -> list[str]:
    """The literal alternatives of an escaped union `a|b\\.c` (inverse of regex_union)."""
    parts, current, pos = [], [], 0
    while pos < len(regex):
        char = regex[pos]
        if char == "\\":
            current.append(regex[pos + 1])
            pos += 2
            continue
        if char == "|":
            parts.append("".join(current))
            current = []
        else:
            assert char not in ".+*?()[]{}^$", f"unescaped metacharacter {char!r} in {regex!r}"
            current.append(char)
        pos += 1
    parts.append("".join(current))
    return parts
