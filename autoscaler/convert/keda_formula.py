"""KEDA's `advanced.scalingModifiers.formula` over prometheus triggers, as one PromQL query.

KEDA evaluates the formula with expr-lang (github.com/expr-lang/expr) over each trigger's value
by trigger name, and scales on the result alone (its triggers' own metrics are not given to the
HPA). Here the formula becomes one adapter rule: each trigger's query becomes a scalar
(`scalar(QUERY)`, with `or vector(0)` where KEDA reads an empty result as 0), and the
formula's operators become PromQL's on scalars. Only a safe subset of expr-lang is taken:
decimal numbers, trigger names, parentheses, unary minus, `+ - * / ^ **`, comparisons,
`&& || !` (and `and or not`) and `cond ? a : b`; anything else (functions, `%`, `??`,
strings, member access) is refused naming the token. The formula's text never reaches the
query: it is parsed, and the query is written from the parse.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from autoscaler.convert.model import ConvertError

__all__ = ["formula_names", "formula_promql"]

_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|==|!=|<=|>=|&&|\|\||\?\?|[-+*/^()<>!?:,.]))"
)
_WORDS = {"and": "&&", "or": "||", "not": "!"}
# expr-lang's precedences (parser/operator/operator.go): an operator binds while its
# precedence is at least the floor; `**` and `^` are right-associative
_BINARY = {
    "||": 10,
    "&&": 15,
    "==": 20,
    "!=": 20,
    "<": 20,
    ">": 20,
    "<=": 20,
    ">=": 20,
    "+": 30,
    "-": 30,
    "*": 60,
    "/": 60,
    "^": 100,
    "**": 100,
}
_UNARY = {"-": 90, "+": 90, "!": 50}
_COMPARE = {"==", "!=", "<", ">", "<=", ">="}


@dataclass(frozen=True)
class _Tokens:
    items: tuple[tuple[str, str], ...]  # (kind, text)


def formula_promql(formula: str, scalars: Mapping[str, str], *, at: str) -> str:
    """The PromQL scalar expression of `formula`; `scalars` maps each usable trigger name to
    its value as a PromQL scalar expression. Raises ConvertError naming what cannot be said."""
    parser = _Parser(_tokens(formula, at), scalars, at)
    expr = parser.expression(0)
    if parser.pos != len(parser.tokens):
        raise ConvertError(f"{at}: unexpected {parser.tokens[parser.pos][1]!r}")
    return expr


def formula_names(formula: str, *, at: str) -> set[str]:
    """The names the formula reads (trigger names, if it is valid)."""
    return {text for kind, text in _tokens(formula, at) if kind == "name"}


def _tokens(formula: str, at: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = formula.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ConvertError(
                f"{at}: {text[pos:].strip()[:20]!r} is not in the subset of expr-lang converted "
                "(numbers, trigger names, + - * / ^, comparisons, && || !, ?:)"
            )
        kind = match.lastgroup or ""
        value = match.group(kind)
        if kind == "name" and value in _WORDS:
            kind, value = "op", _WORDS[value]
        out.append((kind, value))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], scalars: Mapping[str, str], at: str):
        self.tokens, self.scalars, self.at, self.pos = tokens, scalars, at, 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, text: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (text is not None and token[1] != text):
            want = repr(text) if text else "an operand"
            raise ConvertError(
                f"{self.at}: expected {want} at the end of the formula"
                if token is None
                else f"{self.at}: expected {want}, not {token[1]!r}"
            )
        self.pos += 1
        return token

    def expression(self, floor: int) -> str:
        """expr-lang's parseExpression: operators of precedence >= floor, then (at the top
        of an expression) `cond ? a : b`, which chains."""
        left = self.operand()
        compared = False
        while (token := self.peek()) is not None and token[0] == "op":
            op = token[1]
            if op == "??":
                raise ConvertError(
                    f"{self.at}: `??` (KEDA's per-trigger fallback) is not converted"
                )
            power = _BINARY.get(op)
            if power is None or power < floor:
                break
            if op in _COMPARE and compared:  # expr-lang reads a < b < c as a < b && b < c
                raise ConvertError(f"{self.at}: a chained comparison is not converted")
            compared = op in _COMPARE
            self.take()
            right = self.expression(power if op in ("^", "**") else power + 1)
            left = _binary(op, left, right)
        while floor == 0 and self.peek() == ("op", "?"):
            self.take("?")
            then = self.expression(0)
            self.take(":")
            left = _ternary(left, then, self.expression(0))
        return left

    def operand(self) -> str:
        kind, text = self.take()
        if kind == "num":
            return repr(float(text.replace("_", "")))
        if kind == "name":
            if self.peek() == ("op", "("):
                raise ConvertError(f"{self.at}: function {text}() is not converted")
            if text not in self.scalars:
                raise ConvertError(
                    f"{self.at}: {text!r} is not the name of a prometheus trigger of this "
                    f"ScaledObject (names: {', '.join(sorted(self.scalars)) or 'none'})"
                )
            return self.scalars[text]
        if text == "(":
            inner = self.expression(0)
            self.take(")")
            return inner
        if text in _UNARY:
            operand = self.expression(_UNARY[text])
            if text == "-":
                return f"(-{operand})"
            return operand if text == "+" else f"(1 - {_truth(operand)})"
        raise ConvertError(f"{self.at}: unexpected {text!r}")


def _truth(expr: str) -> str:
    """A number as expr-lang's bool would read a comparison: 1 or 0."""
    return f"({expr} != bool 0)"


def _binary(op: str, left: str, right: str) -> str:
    if op in _COMPARE:
        return f"({left} {op} bool {right})"
    if op == "&&":
        return f"({_truth(left)} * {_truth(right)})"
    if op == "||":
        return f"(({_truth(left)} + {_truth(right)}) > bool 0)"
    return f"({left} {'^' if op == '**' else op} {right})"


def _ternary(cond: str, then: str, otherwise: str) -> str:
    # vectors without labels: `and` keeps `then` while the condition holds, `or` falls back
    return f"scalar((vector({then}) and (vector({_truth(cond)}) > 0)) or vector({otherwise}))"
