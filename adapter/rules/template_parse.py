"""Parsing the Go text/template subset rule files use, with `<<` `>>` delimiters.

Supported: text; actions printing a pipeline; `if`/`else if`/`else`/`end`; `with`/`else`/`end`;
`range` (with
`$v :=` or `$k, $v :=`, and `else`); variables (`$`, `$x := ...`, `$x = ...`); fields
(`.A.B`, `$x.A`); string, integer and boolean literals; parenthesised pipelines; `|` chains;
the functions `index`, `len`, `not`, `and`, `or`, `eq`, `ne`, `lt`, `le`, `gt`, `ge`; comments
`<</* ... */>>`; trim markers `<<- ` and ` ->>`. Everything else is rejected with a
`TemplateError` naming it, at load time. `templating.py` evaluates the tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from adapter.rules.errors import TemplateError

LEFT, RIGHT = "<<", ">>"
FUNCTIONS = frozenset({"index", "len", "not", "and", "or", "eq", "ne", "lt", "le", "gt", "ge"})
_GO_ONLY_FUNCTIONS = frozenset(
    {"print", "printf", "println", "html", "js", "urlquery", "slice", "call"}
)
_UNSUPPORTED_ACTIONS = frozenset({"define", "template", "block", "break", "continue"})
_SPACE = " \t\r\n"
_TOKEN = re.compile(
    r"""(?P<space>[ \t\r\n]+)
      | (?P<string>"(?:[^"\\\n]|\\.)*")
      | (?P<raw>`[^`]*`)
      | (?P<char>'(?:[^'\\\n]|\\.)*')
      | (?P<declare>:=)
      | (?P<punct>[()|,=])
      | (?P<variable>\$[A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
      | (?P<field>(?:\.[A-Za-z_][A-Za-z0-9_]*)+)
      | (?P<dot>\.)
      | (?P<number>[-+]?[0-9][0-9A-Za-z_.+-]*)
      | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    """,
    re.VERBOSE,
)


# ---- the tree -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """`.A.B` on dot (receiver None) or on a variable (`$x.A`)."""

    variable: str | None
    names: tuple[str, ...]


@dataclass(frozen=True)
class Literal:
    value: str | int | bool | None


@dataclass(frozen=True)
class Function:
    name: str


@dataclass(frozen=True)
class Pipeline:
    declare: tuple[str, ...]  # variables set by `:=` / `=`
    assign: bool  # True for `=`, False for `:=`
    commands: tuple[tuple[Arg, ...], ...]


Arg = Field | Literal | Function | Pipeline


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Action:
    pipeline: Pipeline


@dataclass(frozen=True)
class If:
    """`if` (or `with`, which also sets dot to the pipeline's value in `then`)."""

    pipeline: Pipeline
    then: tuple[Node, ...]
    otherwise: tuple[Node, ...]
    with_: bool = False


@dataclass(frozen=True)
class Range:
    pipeline: Pipeline
    body: tuple[Node, ...]
    otherwise: tuple[Node, ...]


Node = Text | Action | If | Range


# ---- lexing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    """One action's tokens, or a text run."""

    text: str | None
    tokens: tuple[tuple[str, str], ...]
    offset: int


def _unquote(token: str) -> str:
    if token.startswith("`"):
        return token[1:-1]
    out: list[str] = []
    body, pos = token[1:-1], 0
    simple = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
    while pos < len(body):
        char = body[pos]
        if char != "\\":
            out.append(char)
            pos += 1
            continue
        code = body[pos + 1]
        width = {"x": 2, "u": 4, "U": 8}.get(code)
        if code in simple:
            out.append(simple[code])
        elif code in '\\"':
            out.append(code)
        elif width is not None:
            digits = body[pos + 2 : pos + 2 + width]
            if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise TemplateError(f"invalid escape in string {token}")
            out.append(chr(int(digits, 16)))
            pos += width
        elif code in "01234567":
            digits = body[pos + 1 : pos + 4]
            if len(digits) != 3 or not all(c in "01234567" for c in digits):
                raise TemplateError(f"invalid escape in string {token}")
            out.append(chr(int(digits, 8)))
            pos += 2
        else:
            raise TemplateError(f"invalid escape \\{code} in string {token}")
        pos += 2
    return "".join(out)


def _lex(source: str) -> list[_Item]:
    items: list[_Item] = []
    pos, trim_next = 0, False
    while pos < len(source):
        start = source.find(LEFT, pos)
        text = source[pos:] if start < 0 else source[pos:start]
        if trim_next:
            text = text.lstrip(_SPACE)
        inner = start + len(LEFT)
        trims_left = (
            start >= 0
            and source[inner : inner + 1] == "-"
            and (source[inner + 1 : inner + 2] in tuple(_SPACE))
        )
        if trims_left:
            text = text.rstrip(_SPACE)
            inner += 2
        if text:
            items.append(_Item(text, (), pos))
        if start < 0:
            break
        tokens, pos, trim_next = _lex_action(source, inner, start)
        if tokens is not None:
            items.append(_Item(None, tokens, start))
    return items


def _lex_action(
    source: str, pos: int, start: int
) -> tuple[tuple[tuple[str, str], ...] | None, int, bool]:
    """Tokens of one action (None for a comment), the position after it, and its right trim."""
    if source.startswith("/*", pos):
        end = source.find("*/", pos + 2)
        if end < 0:
            raise TemplateError(f"offset {start}: unclosed comment")
        after = end + 2
        trim = source.startswith(" -" + RIGHT, after)
        after += 2 if trim else 0
        if not source.startswith(RIGHT, after):
            raise TemplateError(f"offset {start}: comment ends before closing delimiter")
        return None, after + len(RIGHT), trim
    tokens: list[tuple[str, str]] = []
    while True:
        if source.startswith(" -" + RIGHT, pos) or source.startswith("\t-" + RIGHT, pos):
            return tuple(tokens), pos + 2 + len(RIGHT), True
        if source.startswith(RIGHT, pos):
            return tuple(tokens), pos + len(RIGHT), False
        match = _TOKEN.match(source, pos)
        if match is None or pos >= len(source):
            what = "unclosed action" if pos >= len(source) else f"unexpected {source[pos]!r}"
            raise TemplateError(f"offset {start}: {what}")
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append((kind, match.group(0)))
        pos = match.end()


# ---- parsing --------------------------------------------------------------------------------


class _Parser:
    def __init__(self, items: list[_Item], fields: frozenset[str]) -> None:
        self.items = items
        self.pos = 0
        self.fields = fields  # the root's field names, checked where dot is the root
        self.scopes: list[set[str]] = [{"$"}]
        self.dot_is_root = [True]

    def parse(self) -> tuple[Node, ...]:
        nodes, closer = self.nodes()
        if closer is not None:
            raise TemplateError(f"offset {closer.offset}: unexpected {closer.tokens[0][1]}")
        return nodes

    def nodes(self) -> tuple[tuple[Node, ...], _Item | None]:
        """Nodes up to an `else`/`end` (returned as the closer) or the end of input."""
        nodes: list[Node] = []
        while self.pos < len(self.items):
            item = self.items[self.pos]
            self.pos += 1
            if item.text is not None:
                nodes.append(Text(item.text))
                continue
            if not item.tokens:
                raise TemplateError(f"offset {item.offset}: missing value for command")
            keyword = item.tokens[0][1] if item.tokens[0][0] == "ident" else ""
            if keyword in ("else", "end"):
                return tuple(nodes), item
            if keyword in ("if", "with", "range"):
                nodes.append(self.control(keyword, item))
            elif keyword in _UNSUPPORTED_ACTIONS:
                raise TemplateError(f"offset {item.offset}: unsupported action {keyword!r}")
            else:
                nodes.append(Action(self.pipeline(list(item.tokens), item.offset)))
        return tuple(nodes), None

    def control(self, keyword: str, item: _Item) -> Node:
        self.scopes.append(set())
        pipeline = self.pipeline(list(item.tokens[1:]), item.offset, loop=keyword == "range")
        self.dot_is_root.append(self.dot_is_root[-1] and keyword == "if")  # with/range move dot
        body, closer = self.nodes()
        self.dot_is_root.pop()
        otherwise: tuple[Node, ...] = ()
        if closer is not None and closer.tokens[0][1] == "else":
            if len(closer.tokens) > 1 and closer.tokens[1][1] == "if" and keyword == "if":
                # `else if` nests an if that shares this one's `end`
                otherwise = (self.control("if", _Item(None, closer.tokens[1:], closer.offset)),)
                self.scopes.pop()
                return If(pipeline, body, otherwise)
            if len(closer.tokens) > 1:
                raise TemplateError(f"offset {closer.offset}: unexpected tokens after else")
            otherwise, closer = self.nodes()
        if closer is None or closer.tokens[0][1] != "end" or len(closer.tokens) > 1:
            raise TemplateError(f"offset {item.offset}: {keyword} without a matching end")
        self.scopes.pop()
        if keyword == "range":
            return Range(pipeline, body, otherwise)
        return If(pipeline, body, otherwise, with_=keyword == "with")

    def pipeline(
        self, tokens: list[tuple[str, str]], offset: int, *, loop: bool = False
    ) -> Pipeline:
        declare, assign = self.declarations(tokens, offset, loop=loop)
        commands: list[tuple[Arg, ...]] = []
        current: list[Arg] = []
        while tokens:
            kind, value = tokens.pop(0)
            if kind == "punct" and value == "|":
                commands.append(self.command(current, offset))
                current = []
            elif kind == "punct" and value == "(":
                current.append(self.parenthesised(tokens, offset))
            else:
                current.append(self.operand(kind, value, offset))
        commands.append(self.command(current, offset))
        for name in declare:
            self.scopes[-1].add(name)
        return Pipeline(declare, assign, tuple(commands))

    def declarations(
        self, tokens: list[tuple[str, str]], offset: int, *, loop: bool
    ) -> tuple[tuple[str, ...], bool]:
        kinds = [kind for kind, _ in tokens[:4]]
        for shape in (["variable", "declare"], ["variable", "punct"]):
            if kinds[:2] == shape and (shape[1] == "declare" or tokens[1][1] == "="):
                names: tuple[str, ...] = (tokens[0][1],)
                del tokens[:2]
                if shape[1] == "punct" and not self.defined(names[0]):
                    raise TemplateError(f"offset {offset}: undefined variable {names[0]}")
                return names, shape[1] == "punct"
        if loop and kinds == ["variable", "punct", "variable", "declare"] and tokens[1][1] == ",":
            names = (tokens[0][1], tokens[2][1])
            del tokens[:4]
            return names, False
        return (), False

    def parenthesised(self, tokens: list[tuple[str, str]], offset: int) -> Pipeline:
        depth, inner = 1, list[tuple[str, str]]()
        while tokens:
            token = tokens.pop(0)
            depth += {"(": 1, ")": -1}.get(token[1], 0) if token[0] == "punct" else 0
            if depth == 0:
                if tokens and tokens[0][0] == "field":
                    raise TemplateError(f"offset {offset}: fields of a (pipeline) unsupported")
                return self.pipeline(inner, offset)
            inner.append(token)
        raise TemplateError(f"offset {offset}: unclosed left paren")

    def command(self, args: list[Arg], offset: int) -> tuple[Arg, ...]:
        if not args:
            raise TemplateError(f"offset {offset}: missing value for command")
        if len(args) > 1 and not isinstance(args[0], Function):
            raise TemplateError(f"offset {offset}: can't give arguments to a non-function")
        return tuple(args)

    def operand(self, kind: str, value: str, offset: int) -> Arg:
        if kind in ("string", "raw"):
            return Literal(_unquote(value))
        if kind == "number":
            if not re.fullmatch(r"[-+]?[0-9]+", value):
                raise TemplateError(f"offset {offset}: unsupported number {value}")
            return Literal(int(value))
        if kind == "dot":
            return Field(None, ())
        if kind == "field":
            names = tuple(value[1:].split("."))
            if self.dot_is_root[-1] and names[0] not in self.fields:
                raise TemplateError(f"offset {offset}: unknown field .{names[0]}{self.known()}")
            return Field(None, names)
        if kind == "variable":
            return self.variable(value, offset)
        if kind == "ident":
            return self.identifier(value, offset)
        raise TemplateError(f"offset {offset}: unexpected {value}")

    def variable(self, value: str, offset: int) -> Field:
        name, _, rest = value.partition(".")
        if not self.defined(name):
            raise TemplateError(f"offset {offset}: undefined variable {name}")
        names = tuple(rest.split(".")) if rest else ()
        if name == "$" and names and names[0] not in self.fields and self.fields:
            raise TemplateError(f"offset {offset}: unknown field .{names[0]}{self.known()}")
        return Field(name, names)

    def identifier(self, value: str, offset: int) -> Arg:
        constants: dict[str, Literal] = {
            "true": Literal(True),
            "false": Literal(False),
            "nil": Literal(None),
        }
        if value in constants:
            return constants[value]
        if value in FUNCTIONS:
            return Function(value)
        if value in _GO_ONLY_FUNCTIONS:
            raise TemplateError(f"offset {offset}: unsupported function {value!r}")
        if value in ("if", "with", "range", "else", "end") or value in _UNSUPPORTED_ACTIONS:
            raise TemplateError(f"offset {offset}: unexpected {value!r} in operand")
        raise TemplateError(
            f"offset {offset}: function {value!r} not defined (the peer's Go templates have "
            f"only {', '.join(sorted(FUNCTIONS))} of these)"
        )

    def defined(self, name: str) -> bool:
        return any(name in scope for scope in self.scopes)

    def known(self) -> str:
        return f" (known: {', '.join('.' + f for f in sorted(self.fields))})" if self.fields else ""


def parse_template(source: str, *, fields: frozenset[str]) -> tuple[Node, ...]:
    """Parse `source` into a tree; TemplateError names the offset and the problem."""
    return _Parser(_lex(source), fields).parse()
