"""PromQL label matchers built from request input, safe by construction.

Every value that comes from a request (namespace, object names, selector values) is quoted as a
PromQL string the way the peer's Go `%q` does (so the common cases render byte-for-byte alike),
and values placed in regex matchers are first regex-escaped (a documented fix of the peer,
which used them as regexes). Label names must be Prometheus label names; anything else is a
`BadRequest`, so request input can never change a query's structure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from adapter.errors import BadRequest
from common.selectors import Operator, Requirement, Selector

__all__ = [
    "Matcher",
    "is_label_name",
    "quote",
    "regex_escape",
    "regex_union",
    "selector_matchers",
]

_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_SIMPLE_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}
_NON_PRINTING = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})


def is_label_name(name: str) -> bool:
    """Whether `name` is a Prometheus label name (`[a-zA-Z_][a-zA-Z0-9_]*`)."""
    return _LABEL_NAME.fullmatch(name) is not None


def _printable(char: str) -> bool:
    # Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and ASCII space
    return char == " " or unicodedata.category(char) not in _NON_PRINTING


_PLAIN = re.compile(r"[ !#-\[\]-~]*")  # printable ASCII except `"` and `\`: no escaping
_RE2_META_RE = re.compile(r"[\\.+*?()|\[\]{}^$]")


def quote(value: str) -> str:
    """`value` as a double-quoted PromQL string, escaped like Go's `strconv.Quote`."""
    if _PLAIN.fullmatch(value):  # the common case, kept fast
        return f'"{value}"'
    out = ['"']
    for char in value:
        code = ord(char)
        if char in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[char])
        elif 0xD800 <= code <= 0xDFFF:
            raise BadRequest(f"invalid character U+{code:04X} in {value!r}: not valid UTF-8")
        elif _printable(char):
            out.append(char)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def regex_escape(value: str) -> str:
    """`value` as an RE2 regex matching exactly itself (metacharacters backslash-escaped)."""
    return _RE2_META_RE.sub(r"\\\g<0>", value)


def regex_union(values: Iterable[str]) -> str:
    """A regex matching exactly the given literal values: escaped and joined with `|`."""
    values = list(values)
    if _RE2_META_RE.search("".join(values)) is None:  # the common case: nothing to escape
        return "|".join(values)
    return "|".join(regex_escape(value) for value in values)


@dataclass(frozen=True)
class Matcher:
    """One PromQL label matcher; `str()` renders it with the value quoted."""

    label: str
    op: str  # one of = != =~ !~
    value: str  # the unquoted value (a regex for =~ and !~)

    def __str__(self) -> str:
        return f"{self.label}{self.op}{quote(self.value)}"


_EQUALITY = {
    Operator.EQUALS: "=",
    Operator.DOUBLE_EQUALS: "=",
    Operator.NOT_EQUALS: "!=",
}


def requirement_matcher(requirement: Requirement) -> tuple[Matcher, str]:
    """The matcher for one selector requirement, and its `LabelValuesByName` regex.

    Raises BadRequest for `gt`/`lt` (PromQL cannot compare label values as numbers) and for
    keys that are not Prometheus label names.
    """
    key, op, values = requirement.key, requirement.operator, requirement.values
    if op in (Operator.GT, Operator.LT):
        raise BadRequest(
            f"unsupported operator {'>' if op is Operator.GT else '<'} in selector "
            f"requirement {str(requirement)!r}: only =, ==, !=, in, notin, exists and ! are "
            "supported for metric selectors"
        )
    if not is_label_name(key):
        raise BadRequest(
            f"invalid label name {key!r} in selector: metric labels must match "
            "[a-zA-Z_][a-zA-Z0-9_]*"
        )
    union = regex_union(sorted(values))
    if op is Operator.EXISTS:
        return Matcher(key, "!=", ""), union
    if op is Operator.DOES_NOT_EXIST:
        return Matcher(key, "=", ""), union
    if op in _EQUALITY and len(values) == 1:
        return Matcher(key, _EQUALITY[op], values[0]), union
    if op in (Operator.IN, Operator.NOT_IN) and values:
        return Matcher(key, "=~" if op is Operator.IN else "!~", union), union
    raise BadRequest(f"malformed selector requirement {str(requirement)!r}")


def selector_matchers(selector: Selector) -> list[tuple[Matcher, str]]:
    """Matchers for every requirement, sorted by key (as upstream's parsed selectors are)."""
    ordered = sorted(selector.requirements, key=lambda requirement: requirement.key)
    return [requirement_matcher(requirement) for requirement in ordered]
