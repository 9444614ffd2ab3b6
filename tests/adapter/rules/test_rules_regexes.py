"""RE2 compatibility of rule regexes, and Go's `$1`/`${1}` expansion."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.rules.regexes import compile_re2, expand


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        pytest.param("^(.*)_total$", "http_requests_total", True, id="anchored-suffix"),
        pytest.param("_total", "a_total_b", True, id="unanchored-search"),
        pytest.param(r"^a\z", "a", True, id="go-end-of-text"),
        pytest.param(r"^\Qa.b\E$", "a.b", True, id="quoted-literal"),
        pytest.param(r"^\Qa.b\E$", "axb", False, id="quoted-dot-is-literal"),
        pytest.param("^[[:alpha:]_]+$", "abc_def", True, id="posix-class"),
        pytest.param("^[[:digit:]]+$", "12a", False, id="posix-class-no-match"),
        pytest.param(r"^\x{41}$", "A", True, id="braced-hex"),
        pytest.param("^(?<word>[a-z]+)$", "abc", True, id="go-named-group"),
        pytest.param("(?i)^ABC$", "abc", True, id="leading-flag"),
        pytest.param("^a(?i:B)c$", "abc", True, id="scoped-flag"),
        pytest.param(r"^\d+$", "١٢", False, id="digits-are-ascii-as-in-go"),
        pytest.param("^[a&&b]$", "&", True, id="set-operators-are-literals"),
    ],
)
def test_re2_patterns_behave_as_in_go(pattern: str, name: str, matches: bool) -> None:
    assert (compile_re2(pattern).search(name) is not None) is matches


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        pytest.param(r"(a)\1", "backreferences", id="backreference"),
        pytest.param("(?P<x>a)(?P=x)", "named backreferences", id="named-backreference"),
        pytest.param("a(?=b)", "lookahead", id="lookahead"),
        pytest.param("a(?!b)", "lookahead", id="negative-lookahead"),
        pytest.param("(?<=a)b", "lookbehind", id="lookbehind"),
        pytest.param("(?<!a)b", "lookbehind", id="negative-lookbehind"),
        pytest.param("(?>a)", "atomic groups", id="atomic-group"),
        pytest.param("a*+", "possessive", id="possessive"),
        pytest.param("(?(1)a|b)", "conditionals", id="conditional"),
        pytest.param(r"a\Z", r"escape \Z", id="python-end-anchor"),
        pytest.param(r"\pL", r"escape \p", id="unicode-class"),
        pytest.param("(?x)a b", "unsupported flags", id="verbose-flag"),
        pytest.param("(?U)a+", "unsupported flags", id="ungreedy-flag"),
        pytest.param("a(?i)b", "only at the start", id="mid-pattern-flag"),
        pytest.param("(", "missing ), unterminated subpattern", id="unbalanced"),
        pytest.param("[a", "missing closing ]", id="unclosed-class"),
    ],
)
def test_non_re2_patterns_are_rejected(pattern: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        compile_re2(pattern)


@pytest.mark.parametrize(
    ("template", "want"),
    [
        pytest.param("$1", "http_requests", id="dollar-number"),
        pytest.param("${1}_per_second", "http_requests_per_second", id="braced"),
        pytest.param("$1_per_second", "", id="longest-name-like-go"),
        pytest.param("$0", "http_requests_total", id="whole-match"),
        pytest.param("$$1", "$1", id="escaped-dollar"),
        pytest.param("$3", "", id="missing-group-is-empty"),
        pytest.param("${kind}", "total", id="named-group"),
        pytest.param("$ x", "$ x", id="lone-dollar-kept"),
        pytest.param("${1", "${1", id="unclosed-brace-kept"),
        pytest.param("$01", "", id="leading-zero-is-a-name"),
    ],
)
def test_expand_follows_go(template: str, want: str) -> None:
    match = compile_re2("^(.*)_(?P<kind>total)$").search("http_requests_total")
    assert match is not None
    assert expand(template, match) == want


@given(st.text(alphabet="abc_:.*+?()[]{}|^$\\-", max_size=12))
def test_any_pattern_either_compiles_or_raises_value_error(pattern: str) -> None:
    try:
        compiled = compile_re2(pattern)
    except ValueError:
        return
    compiled.search("abc_total")  # a compiled pattern can always be used
