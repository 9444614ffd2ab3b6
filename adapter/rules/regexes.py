"""Regular expressions as the peer (Go's RE2 `regexp`) reads them, run with Python's `re`.

A rule file must work with prometheus-adapter too, so patterns are checked against RE2's
syntax: constructs only Python has (backreferences, lookaround, atomic groups, possessive
quantifiers, conditionals, `\\Z`) are rejected; the few RE2 spellings Python lacks (`\\z`,
`(?<name>...)`, `\\x{41}`, `\\Q...\\E`, `[[:alpha:]]`) are translated. `expand` implements Go's
`Regexp.Expand` (`$1`, `${1}`, `$name`, `$$`).
"""

from __future__ import annotations

import re
import warnings

__all__ = ["compile_re2", "expand"]

_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_GO_FLAGS = frozenset("imsU")
_PASSTHROUGH_ESCAPES = frozenset("AbBdDsSwWaftnrv")


class _Translator:
    """One pass over a pattern: RE2 syntax in, Python syntax out, or ValueError."""

    def __init__(self, pattern: str) -> None:
        self.src = pattern
        self.pos = 0
        self.out: list[str] = []

    def fail(self, what: str, at: int | None = None) -> ValueError:
        where = self.pos if at is None else at
        return ValueError(f"{what} (at offset {where}); RE2 syntax is required")

    def translate(self) -> str:
        while self.pos < len(self.src):
            char = self.src[self.pos]
            if char == "\\":
                self.out.append(self.escape(in_class=False))
            elif char == "[":
                self.char_class()
            elif char == "(":
                self.group()
            elif char in "*+?}":
                self.out.append(char)
                self.pos += 1
                if self.src.startswith("+", self.pos):
                    raise self.fail("possessive quantifiers are not supported")
            else:
                self.out.append(char)
                self.pos += 1
        return "".join(self.out)

    def escape(self, *, in_class: bool) -> str:
        if self.pos + 1 >= len(self.src):
            raise self.fail("trailing backslash")
        start, char = self.pos, self.src[self.pos + 1]
        self.pos += 2
        if char.isdigit():
            raise self.fail(f"backreferences and octal escapes (\\{char}) are not supported", start)
        if char == "z":
            return "\\Z"
        if char == "x":
            return self.hex_escape()
        if char == "Q" and not in_class:
            end = self.src.find("\\E", self.pos)
            end = len(self.src) if end < 0 else end
            literal, self.pos = self.src[self.pos : end], min(end + 2, len(self.src))
            return re.escape(literal)
        if char in _PASSTHROUGH_ESCAPES or not char.isalnum():
            return "\\" + char
        raise self.fail(f"escape \\{char} is not supported", start)

    def hex_escape(self) -> str:
        if self.src.startswith("{", self.pos):
            end = self.src.find("}", self.pos)
            digits = self.src[self.pos + 1 : end] if end > 0 else ""
            self.pos = end + 1
        else:
            digits = self.src[self.pos : self.pos + 2]
            self.pos += 2
        try:
            return re.escape(chr(int(digits, 16)))
        except ValueError:
            raise self.fail(f"invalid hex escape \\x{digits}") from None

    def char_class(self) -> None:
        self.out.append("[")
        self.pos += 1
        if self.src.startswith("^", self.pos):
            self.out.append("^")
            self.pos += 1
        if self.src.startswith("]", self.pos):  # a leading ] is a literal in RE2 too
            self.out.append("\\]")
            self.pos += 1
        while self.pos < len(self.src) and self.src[self.pos] != "]":
            char = self.src[self.pos]
            if char == "\\":
                self.out.append(self.escape(in_class=True))
            elif char == "[" and self.src.startswith("[:", self.pos):
                self.posix_class()
            elif char in "[&~|":  # literal in RE2; Python warns about set operations
                self.out.append("\\" + char)
                self.pos += 1
            else:
                self.out.append(char)
                self.pos += 1
        if self.pos >= len(self.src):
            raise self.fail("missing closing ]")
        self.out.append("]")
        self.pos += 1

    def posix_class(self) -> None:
        end = self.src.find(":]", self.pos + 2)
        name = self.src[self.pos + 2 : end] if end > 0 else ""
        negated = name.startswith("^")
        ranges = _POSIX_CLASSES.get(name.lstrip("^"))
        if ranges is None or negated:
            raise self.fail(f"unsupported character class [:{name}:]")
        self.out.append(ranges)
        self.pos = end + 2

    def group(self) -> None:
        rest = self.src[self.pos :]
        if not rest.startswith("(?"):
            self.out.append("(")
            self.pos += 1
            return
        for prefix, what in (
            ("(?P=", "named backreferences"),
            ("(?P>", "recursion"),
            ("(?=", "lookahead"),
            ("(?!", "lookahead"),
            ("(?<=", "lookbehind"),
            ("(?<!", "lookbehind"),
            ("(?>", "atomic groups"),
            ("(?#", "comments"),
            ("(?(", "conditionals"),
        ):
            if rest.startswith(prefix):
                raise self.fail(f"{what} ({prefix}...) are not supported")
        if rest.startswith(("(?P<", "(?<")):
            self.out.append("(?P<")
            self.pos += 4 if rest.startswith("(?P<") else 3
            return
        flags = re.match(r"\(\?([A-Za-z]*)(?:-([A-Za-z]*))?([:)])", rest)
        if flags is None:
            raise self.fail("invalid group syntax")
        letters = (flags.group(1) or "") + (flags.group(2) or "")
        if not set(letters) <= _GO_FLAGS or "U" in letters:
            raise self.fail(f"unsupported flags {letters!r} (only i, m, s)")
        if flags.group(3) == ")" and self.pos != 0:
            raise self.fail("inline flags (?i) are supported only at the start")
        self.out.append(flags.group(0))
        self.pos += len(flags.group(0))


def compile_re2(pattern: str) -> re.Pattern[str]:
    """Compile an RE2-syntax pattern; ValueError with a readable reason when it is not one."""
    translated = _Translator(pattern).translate()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarnings about nested sets: we escaped them
            return re.compile(translated, re.ASCII)
    except re.error as err:
        raise ValueError(err.msg) from err


_NAME_CHARS = re.compile(r"[A-Za-z0-9_]+")


def expand(template: str, match: re.Match[str]) -> str:
    """Go's `Regexp.ExpandString`: `$1`/`${1}`/`$name`/`${name}`, `$$` for a literal `$`.

    As in Go, `$name` takes the longest run of letters, digits and `_` (`$1x` is `${1x}`), and
    a reference to a missing or unmatched group expands to nothing.
    """
    out: list[str] = []
    pos = 0
    while pos < len(template):
        dollar = template.find("$", pos)
        if dollar < 0:
            out.append(template[pos:])
            break
        out.append(template[pos:dollar])
        pos = dollar + 1
        if template.startswith("$", pos):
            out.append("$")
            pos += 1
            continue
        name, end = _reference(template, pos)
        if name is None:  # not a reference: Go keeps the "$" as written
            out.append("$")
            continue
        pos = end
        out.append(_group_text(match, name))
    return "".join(out)


def _reference(template: str, pos: int) -> tuple[str | None, int]:
    brace = template.startswith("{", pos)
    start = pos + 1 if brace else pos
    found = _NAME_CHARS.match(template, start)
    if found is None:
        return None, pos
    end = found.end()
    if brace:
        if not template.startswith("}", end):
            return None, pos
        end += 1
    return found.group(0), end


def _group_text(match: re.Match[str], name: str) -> str:
    number = int(name) if name.isdigit() and (name == "0" or name[0] != "0") else -1
    if number >= 0:
        if number <= (match.re.groups) and match.group(number) is not None and number < 10**8:
            return match.group(number)
        return ""
    if name in match.re.groupindex:
        return match.group(name) or ""
    return ""
