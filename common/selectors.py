"""Kubernetes label and field selectors: parsing, validation, matching.

The string grammar and validation follow `k8s.io/apimachinery/pkg/labels/selector.go`:
requirements separated by commas; `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`,
`!k`, `k>1`, `k<1`; keys are qualified names, values are label values. As upstream, parsed
requirements are sorted by key.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FieldRequirement",
    "Operator",
    "Requirement",
    "Selector",
    "SelectorError",
    "parse_field_selector",
    "parse_selector",
    "selector_from_label_selector",
]


class SelectorError(ValueError):
    """A selector that the Kubernetes API would reject; the message says why."""


class Operator(enum.Enum):
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GT = "gt"
    LT = "lt"


_EQUALS, _DOUBLE_EQUALS, _IN = Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN
_NOT_EQUALS, _NOT_IN = Operator.NOT_EQUALS, Operator.NOT_IN
_EXISTS, _DOES_NOT_EXIST = Operator.EXISTS, Operator.DOES_NOT_EXIST

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_NAME_RE = re.compile(rf"^{_NAME}$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_INTEGER_RE = re.compile(r"^[+-]?[0-9]+$")


def validate_label_key(key: str) -> None:
    """Raise SelectorError unless `key` is a qualified name (`[prefix/]name`)."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.match(prefix)):
        raise SelectorError(f"invalid label key {key!r}: prefix must be a DNS-1123 subdomain")
    if not name or len(name) > 63 or not _NAME_RE.match(name):
        raise SelectorError(
            f"invalid label key {key!r}: name part must be 63 characters or less, begin and "
            "end with an alphanumeric character, with '-', '_' or '.' between"
        )


def validate_label_value(value: str) -> None:
    """Raise SelectorError unless `value` is a valid label value (may be empty)."""
    if value and (len(value) > 63 or not _NAME_RE.match(value)):
        raise SelectorError(
            f"invalid label value {value!r}: must be 63 characters or less, empty or begin "
            "and end with an alphanumeric character, with '-', '_' or '.' between"
        )


@dataclass(frozen=True)
class Requirement:
    """One clause of a selector. `values` is sorted for set operators, empty for (not) exists."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        # identity tests on module-level aliases: a selector is matched against every object
        # of a wildcard request, and enum attribute look-ups showed in that profile
        op = self.operator
        if op is _EQUALS or op is _IN or op is _DOUBLE_EQUALS:
            return labels.get(self.key) in self.values  # an absent label (None) is no value
        if op is _NOT_EQUALS or op is _NOT_IN:
            return labels.get(self.key) not in self.values
        if op is _EXISTS:
            return self.key in labels
        if op is _DOES_NOT_EXIST:
            return self.key not in labels
        # gt / lt: the label must hold an integer (upstream parses it as int64)
        if self.key not in labels or not _INTEGER_RE.match(labels[self.key]):
            return False
        have, want = int(labels[self.key]), int(self.values[0])
        return have > want if op is Operator.GT else have < want

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({','.join(self.values)})"
        symbol = {Operator.GT: ">", Operator.LT: "<"}.get(op, op.value)
        return f"{self.key}{symbol}{self.values[0]}"


@dataclass(frozen=True)
class Selector:
    """A conjunction of requirements; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        for requirement in self.requirements:  # noqa: SIM110 - all() of a generator cost 2x here
            if not requirement.matches(labels):
                return False
        return True

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = Selector()


def make_requirement(key: str, operator: Operator, values: tuple[str, ...] = ()) -> Requirement:
    """Validate one requirement as upstream's `NewRequirement` does."""
    validate_label_key(key)
    if operator in (Operator.IN, Operator.NOT_IN):
        if not values:
            raise SelectorError(f"{key}: for 'in', 'notin' operators, values set can't be empty")
        values = tuple(sorted(set(values)))
    elif operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS):
        if len(values) != 1:
            raise SelectorError(f"{key}: exact-match compatibility requires one single value")
    elif operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if values:
            raise SelectorError(f"{key}: values set must be empty for exists and does not exist")
    elif len(values) != 1 or not _INTEGER_RE.match(values[0]):
        raise SelectorError(f"{key}: for 'gt', 'lt' operators, exactly one integer value required")
    if operator not in (Operator.GT, Operator.LT):
        for value in values:
            validate_label_value(value)
    return Requirement(key, operator, values)


# ---- the string grammar -------------------------------------------------------------------

_SPECIAL = frozenset("=!(),<>")
_TOKEN_RE = re.compile(r"\s*(==|!=|=|!|\(|\)|,|<|>|[^\s=!(),<>]+)")


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN_RE.match(text, pos)
        if match is None:  # only trailing whitespace is left
            break
        tokens.append(match.group(1))
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.pos += 1
        return token

    def fail(self, what: str) -> SelectorError:
        return SelectorError(f"unable to parse requirement {self.text!r}: {what}")

    def identifier(self, what: str) -> str:
        token = self.take()
        if token is None or token in _SPECIAL or token in ("==", "!="):
            raise self.fail(f"found {token!r}, expected: {what}")
        return token

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.take()
            return make_requirement(self.identifier("identifier"), Operator.DOES_NOT_EXIST)
        key = self.identifier("identifier")
        if key in ("in", "notin"):
            raise self.fail(f"found {key!r}, expected: identifier")
        op_token = self.peek()
        if op_token in (None, ","):
            return make_requirement(key, Operator.EXISTS)
        self.take()
        operators = {"=": Operator.EQUALS, "==": Operator.DOUBLE_EQUALS, "!=": Operator.NOT_EQUALS}
        operators |= {">": Operator.GT, "<": Operator.LT, "in": Operator.IN}
        operators |= {"notin": Operator.NOT_IN}
        if op_token not in operators:
            raise self.fail(f"found {op_token!r}, expected: in, notin, =, ==, !=, gt, lt")
        operator = operators[op_token]
        if operator in (Operator.IN, Operator.NOT_IN):
            return make_requirement(key, operator, self.value_set())
        value = self.peek()
        if value is None or value == "," or value in _SPECIAL:
            if operator in (Operator.GT, Operator.LT) or (value is not None and value != ","):
                raise self.fail(f"found {value!r}, expected: identifier after '{op_token}'")
            return make_requirement(key, operator, ("",))  # `k=` selects the empty value
        self.take()
        return make_requirement(key, operator, (value,))

    def value_set(self) -> tuple[str, ...]:
        if self.take() != "(":
            raise self.fail("expected '(' after in/notin")
        values: list[str] = []
        expect_value = True
        while True:
            token = self.take()
            if token is None:
                raise self.fail("found end of string, expected ')'")
            if token == ")":
                if expect_value and values:  # `(a,)` means a trailing empty value
                    values.append("")
                return tuple(values)
            if token == ",":
                if expect_value:
                    values.append("")
                expect_value = True
                continue
            if token in _SPECIAL or not expect_value:
                raise self.fail(f"found {token!r}, expected ',' or ')'")
            values.append(token)
            expect_value = False

    def parse(self) -> Selector:
        requirements: list[Requirement] = []
        while self.peek() is not None:
            requirements.append(self.requirement())
            token = self.take()
            if token is None:
                break
            if token != ",":
                raise self.fail(f"found {token!r}, expected ','")
            if self.peek() is None:
                raise self.fail("found end of string after ',', expected: identifier")
        requirements.sort(key=lambda r: r.key)
        return Selector(tuple(requirements))


def parse_selector(text: str) -> Selector:
    """Parse a label-selector string; the empty string selects everything."""
    if not text.strip():
        return EVERYTHING
    return _Parser(text).parse()


def selector_from_label_selector(obj: Mapping[str, Any] | None) -> Selector:
    """A `metav1.LabelSelector` object (matchLabels, matchExpressions) as a Selector.

    None and `{}` select everything, as the metrics APIs treat an absent metric selector.
    """
    if obj is None:
        return EVERYTHING
    if not isinstance(obj, Mapping):
        raise SelectorError("selector must be an object with matchLabels/matchExpressions")
    unknown = set(obj) - {"matchLabels", "matchExpressions"}
    if unknown:
        raise SelectorError(f"selector: unknown field {sorted(unknown)[0]!r}")
    requirements: list[Requirement] = []
    for key, value in (obj.get("matchLabels") or {}).items():
        if not isinstance(value, str):
            raise SelectorError(f"selector.matchLabels[{key!r}]: value must be a string")
        requirements.append(make_requirement(str(key), Operator.EQUALS, (value,)))
    ops = {"In": Operator.IN, "NotIn": Operator.NOT_IN, "Exists": Operator.EXISTS}
    ops["DoesNotExist"] = Operator.DOES_NOT_EXIST
    for i, expr in enumerate(obj.get("matchExpressions") or []):
        where = f"selector.matchExpressions[{i}]"
        if not isinstance(expr, Mapping) or expr.get("operator") not in ops:
            raise SelectorError(f"{where}.operator: must be one of In, NotIn, Exists, DoesNotExist")
        values = expr.get("values") or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise SelectorError(f"{where}.values: must be a list of strings")
        try:
            requirements.append(
                make_requirement(str(expr.get("key", "")), ops[expr["operator"]], tuple(values))
            )
        except SelectorError as err:
            raise SelectorError(f"{where}: {err}") from err
    requirements.sort(key=lambda r: r.key)
    return Selector(tuple(requirements))


# ---- field selectors ----------------------------------------------------------------------


@dataclass(frozen=True)
class FieldRequirement:
    """`field=value` (equal=True) or `field!=value` (equal=False)."""

    field: str
    value: str
    equal: bool = True

    def matches(self, fields: Mapping[str, str]) -> bool:
        return (fields.get(self.field) == self.value) is self.equal


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def parse_field_selector(text: str) -> tuple[FieldRequirement, ...]:
    """Parse `a=b,c!=d` (also `a==b`); backslash escapes `,`, `=`, `!` and itself in values."""
    requirements = []
    for part in _split_unescaped(text, ","):
        if not part.strip():
            continue
        symbol = next((s for s in ("!=", "==", "=") if s in part), None)
        if symbol is None:
            raise SelectorError(f"invalid field selector {part!r}: expected field=value")
        field, _, value = part.partition(symbol)
        equal = symbol != "!="
        field = field.strip()
        if not field:
            raise SelectorError(f"invalid field selector {part!r}: empty field name")
        requirements.append(FieldRequirement(field, value.replace("\\", ""), equal))
    return tuple(requirements)
