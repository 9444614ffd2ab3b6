"""Rendering the Go text/template subset of `template_parse.py` the way Go prints values.

Values are `str`, `int`, `bool`, `tuple[str, ...]` (a Go `[]string`, printed `[a b]`),
`Mapping[str, str]` (a Go `map[string]string`, printed `map[a:1 b:2]`), and `Record` (the
struct a template is executed with). As in Go, a missing map key read with `.key` prints
`<no value>` while `index` gives the zero value `""`, and truth is "non-zero, non-empty".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from adapter.rules.errors import TemplateError
from adapter.rules.template_parse import (
    Action,
    Arg,
    Function,
    If,
    Literal,
    Node,
    Pipeline,
    Range,
    Text,
    parse_template,
)

__all__ = ["Record", "Template", "compile_template"]


class _NoValue:
    """Go's invalid reflect.Value: what a missing map key evaluates to."""

    def __repr__(self) -> str:
        return "<no value>"


NO_VALUE = _NoValue()


@dataclass(frozen=True)
class Record:
    """A struct value: named fields, nothing else (accessing another field is an error)."""

    fields: Mapping[str, Any]


def truth(value: Any) -> bool:
    """Go template truth: false, 0, "", empty slice/map, nil and <no value> are false."""
    if value is None or value is NO_VALUE:
        return False
    if isinstance(value, Record):
        return True
    if isinstance(value, bool | int):
        return bool(value)
    return len(value) > 0


def show(value: Any) -> str:
    """`fmt.Fprint` of a value, as text/template prints it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value is NO_VALUE:
        return "<no value>"
    if value is None:
        return "<nil>"
    if isinstance(value, tuple):
        return "[" + " ".join(show(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{k}:{show(value[k])}" for k in sorted(value)) + "]"
    raise TemplateError(f"can't print a value of type {type(value).__name__}")


def _kind(value: Any) -> str:
    return {str: "string", int: "int", bool: "bool"}.get(type(value), type(value).__name__)


def _index(item: Any, *keys: Any) -> Any:
    for key in keys:
        if isinstance(item, Mapping):
            if not isinstance(key, str):
                raise TemplateError(f"index: map key must be a string, not {_kind(key)}")
            item = item.get(key, "")  # Go: the element type's zero value
        elif isinstance(item, tuple):
            if not isinstance(key, int) or isinstance(key, bool):
                raise TemplateError(f"index: cannot index a slice with {_kind(key)}")
            if not 0 <= key < len(item):
                raise TemplateError(f"index: index out of range: {key}")
            item = item[key]
        else:
            raise TemplateError(f"index: can't index item of type {_kind(item)}")
    return item


def _length(item: Any) -> int:
    if isinstance(item, str | tuple | Mapping):
        return len(item)
    raise TemplateError(f"len of type {_kind(item)}")


def _comparable(a: Any, b: Any, name: str) -> None:
    numeric = (int,)
    if isinstance(a, bool) or isinstance(b, bool):
        if not (isinstance(a, bool) and isinstance(b, bool)):
            raise TemplateError(f"{name}: incompatible types for comparison")
    elif not (
        (isinstance(a, str) and isinstance(b, str))
        or (isinstance(a, numeric) and isinstance(b, numeric))
    ):
        raise TemplateError(f"{name}: incompatible types for comparison")


def _eq(first: Any, *others: Any) -> bool:
    if not others:
        raise TemplateError("eq: missing argument for comparison")
    for other in others:
        _comparable(first, other, "eq")
        if first == other:
            return True
    return False


def _ne(a: Any, b: Any) -> bool:
    _comparable(a, b, "ne")
    return bool(a != b)


def _order(name: str, test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def compare(a: Any, b: Any) -> bool:
        _comparable(a, b, name)
        if isinstance(a, bool):
            raise TemplateError(f"{name}: invalid type for comparison")
        return test(a, b)

    return compare


def _and(*args: Any) -> Any:
    for arg in args[:-1]:
        if not truth(arg):
            return arg
    return args[-1]


def _or(*args: Any) -> Any:
    for arg in args[:-1]:
        if truth(arg):
            return arg
    return args[-1]


_FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int | None]] = {
    # name: (implementation, minimum arguments, maximum arguments or None)
    "index": (_index, 1, None),
    "len": (_length, 1, 1),
    "not": (lambda value: not truth(value), 1, 1),
    "and": (_and, 1, None),
    "or": (_or, 1, None),
    "eq": (_eq, 1, None),
    "ne": (_ne, 2, 2),
    "lt": (_order("lt", lambda a, b: a < b), 2, 2),
    "le": (_order("le", lambda a, b: a <= b), 2, 2),
    "gt": (_order("gt", lambda a, b: a > b), 2, 2),
    "ge": (_order("ge", lambda a, b: a >= b), 2, 2),
}


class _Run:
    """One execution: the output buffer and the variable scopes."""

    def __init__(self, root: Any) -> None:
        self.out: list[str] = []
        self.scopes: list[dict[str, Any]] = [{"$": root}]

    def nodes(self, nodes: tuple[Node, ...], dot: Any) -> None:
        for node in nodes:
            if isinstance(node, Text):
                self.out.append(node.text)
            elif isinstance(node, Action):
                value = self.pipeline(node.pipeline, dot)
                if not node.pipeline.declare:  # Go prints nothing for a declaration
                    self.out.append(show(value))
            elif isinstance(node, If):
                self.scopes.append({})
                value = self.pipeline(node.pipeline, dot)
                if truth(value):
                    self.nodes(node.then, value if node.with_ else dot)
                else:
                    self.nodes(node.otherwise, dot)
                self.scopes.pop()
            else:
                self.range(node, dot)

    def range(self, node: Range, dot: Any) -> None:
        self.scopes.append({})
        value = self.pipeline(node.pipeline, dot, declare=False)
        if isinstance(value, tuple):
            pairs: list[tuple[Any, Any]] = list(enumerate(value))
        elif isinstance(value, Mapping):
            pairs = [(key, value[key]) for key in sorted(value)]
        elif value is NO_VALUE or value is None:
            pairs = []
        else:
            raise TemplateError(f"range can't iterate over {show(value)}")
        names = node.pipeline.declare
        for key, element in pairs:
            if len(names) == 2:
                self.scopes[-1].update({names[0]: key, names[1]: element})
            elif names:
                self.scopes[-1][names[0]] = element
            self.nodes(node.body, element)
        if not pairs:
            self.nodes(node.otherwise, dot)
        self.scopes.pop()

    def pipeline(self, pipeline: Pipeline, dot: Any, *, declare: bool = True) -> Any:
        value: Any = NO_VALUE
        for index, command in enumerate(pipeline.commands):
            piped = () if index == 0 else (value,)
            value = self.command(command, dot, piped)
        if declare and pipeline.declare:
            self.set(pipeline.declare[0], value, assign=pipeline.assign)
        return value

    def set(self, name: str, value: Any, *, assign: bool) -> None:
        if assign:
            for scope in reversed(self.scopes):
                if name in scope:
                    scope[name] = value
                    return
        self.scopes[-1][name] = value

    def command(self, command: tuple[Arg, ...], dot: Any, piped: tuple[Any, ...]) -> Any:
        head = command[0]
        if isinstance(head, Function):
            args = [self.arg(arg, dot) for arg in command[1:]] + list(piped)
            func, least, most = _FUNCTIONS[head.name]
            if len(args) < least or (most is not None and len(args) > most):
                raise TemplateError(f"wrong number of args for {head.name}: got {len(args)}")
            return func(*args)
        if piped:
            raise TemplateError("can't give argument to non-function")
        return self.arg(head, dot)

    def arg(self, arg: Arg, dot: Any) -> Any:
        if isinstance(arg, Literal):
            return arg.value
        if isinstance(arg, Pipeline):
            return self.pipeline(arg, dot)
        if isinstance(arg, Function):
            raise TemplateError(f"function {arg.name} used as a value")
        value = dot if arg.variable is None else self.variable(arg.variable)
        for name in arg.names:
            value = _field(value, name)
        return value

    def variable(self, name: str) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise TemplateError(f"undefined variable {name}")


def _field(value: Any, name: str) -> Any:
    if isinstance(value, Record):
        if name not in value.fields:
            raise TemplateError(f"can't evaluate field {name}")
        return value.fields[name]
    if isinstance(value, Mapping):
        return value.get(name, NO_VALUE)
    raise TemplateError(f"can't evaluate field {name} in type {_kind(value)}")


@dataclass(frozen=True)
class Template:
    """A compiled `<< >>` template; `render` executes it against a Record."""

    source: str
    nodes: tuple[Node, ...]

    def render(self, root: Record) -> str:
        """The rendered text; TemplateError when execution fails (e.g. index out of range)."""
        run = _Run(root)
        run.nodes(self.nodes, root)
        return "".join(run.out)

    def literal_text(self) -> str:
        """The template's own text outside actions (what `window` detection scans)."""
        return "".join(_texts(self.nodes))


def _texts(nodes: tuple[Node, ...]) -> list[str]:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            out.append(node.text)
        elif isinstance(node, If | Range):
            out.extend(_texts(node.then if isinstance(node, If) else node.body))
            out.extend(_texts(node.otherwise))
        out.append(" ")  # an action separates text runs
    return out


def compile_template(source: str, *, fields: frozenset[str]) -> Template:
    """Parse `source` (rejecting unsupported syntax); `fields` are the root record's fields."""
    return Template(source, parse_template(source, fields=fields))
