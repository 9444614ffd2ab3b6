"""The Go text/template subset: what renders, how Go prints it, and what is rejected."""

from __future__ import annotations

import contextlib
from types import MappingProxyType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.rules.config import QUERY_FIELDS
from adapter.rules.errors import TemplateError
from adapter.rules.templating import Record, compile_template

ARGS = Record(
    {
        "Series": "http_requests_total",
        "LabelMatchers": 'namespace="ns",pod=~"a|b"',
        "LabelValuesByName": MappingProxyType({"namespace": "ns", "pod": "a|b"}),
        "GroupBy": "pod",
        "GroupBySlice": ("pod", "container"),
    }
)


def render(source: str, args: Record = ARGS) -> str:
    return compile_template(source, fields=QUERY_FIELDS).render(args)


@pytest.mark.parametrize(
    ("source", "want"),
    [
        pytest.param(
            "sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)",
            'sum(rate(http_requests_total{namespace="ns",pod=~"a|b"}[2m])) by (pod)',
            id="the-common-rule",
        ),
        pytest.param("<<.GroupBySlice>>", "[pod container]", id="slice-prints-like-go"),
        pytest.param(
            "<<.LabelValuesByName>>", "map[namespace:ns pod:a|b]", id="map-prints-sorted-like-go"
        ),
        pytest.param('<<index .LabelValuesByName "pod">>', "a|b", id="index-map"),
        pytest.param('<<index .LabelValuesByName "nope">>|', "|", id="index-missing-key-is-zero"),
        pytest.param("<<.LabelValuesByName.nope>>", "<no value>", id="field-missing-key-no-value"),
        pytest.param("<<.LabelValuesByName.pod>>", "a|b", id="field-on-map"),
        pytest.param("<<index .GroupBySlice 1>>", "container", id="index-slice"),
        pytest.param(
            "<<range $i, $l := .GroupBySlice>><<if $i>>,<<end>><<$l>><<end>>",
            "pod,container",
            id="range-index-and-value",
        ),
        pytest.param("<<range .GroupBySlice>>[<<.>>]<<end>>", "[pod][container]", id="range-dot"),
        pytest.param(
            "<<range $k, $v := .LabelValuesByName>><<$k>>=<<$v>>;<<end>>",
            "namespace=ns;pod=a|b;",
            id="range-map-sorted",
        ),
        pytest.param(
            "<<range $v := .GroupBySlice>><<$v>><<end>>", "podcontainer", id="range-one-var"
        ),
        pytest.param(
            "<<range .GroupBySlice>><<$.Series>> <<end>>",
            "http_requests_total " * 2,
            id="dollar-root",
        ),
        pytest.param("<<if .GroupBy>>by (<<.GroupBy>>)<<end>>", "by (pod)", id="if-true"),
        pytest.param("<<if not .GroupBy>>x<<else>>y<<end>>", "y", id="if-not-else"),
        pytest.param(
            '<<if eq .GroupBy "node">>n<<else if eq .GroupBy "pod">>p<<else>>o<<end>>',
            "p",
            id="else-if-chain",
        ),
        pytest.param("a  <<- .GroupBy ->>  b", "apodb", id="trim-markers"),
        pytest.param(
            '<<with index .LabelValuesByName "pod">>pod=~"<<.>>"<<else>>none<<end>>',
            'pod=~"a|b"',
            id="with-sets-dot",
        ),
        pytest.param(
            '<<with index .LabelValuesByName "x">><<.>><<else>><<.GroupBy>><<end>>',
            "pod",
            id="with-else-keeps-dot",
        ),
        pytest.param("a <<- /* comment */ ->> b", "ab", id="comment-with-trims"),
        pytest.param("<<$x := .Series>><<$x>>", "http_requests_total", id="variable"),
        pytest.param("<<$x := 1>><<$x = 2>><<$x>>", "2", id="assignment"),
        pytest.param("<<len .GroupBySlice>> <<.GroupBySlice | len>>", "2 2", id="len-and-pipe"),
        pytest.param(
            '<<and .GroupBy .Series>>|<<or "" .GroupBy>>', "http_requests_total|pod", id="and-or"
        ),
        pytest.param('<<ne .GroupBy "pod">> <<lt 1 2>>', "false true", id="comparisons"),
        pytest.param('<<"a\\tb">><<`raw\\n`>>', "a\tbraw\\n", id="string-literals"),
        pytest.param("<<(index .GroupBySlice 0)>>", "pod", id="parenthesised"),
        pytest.param("x >> y", "x >> y", id="right-delimiter-in-text"),
    ],
)
def test_renders_like_go(source: str, want: str) -> None:
    assert render(source) == want


def test_external_args_render_empty_group_by() -> None:
    external = Record({**ARGS.fields, "GroupBy": "", "GroupBySlice": ()})
    assert render("sum(x) by (<<.GroupBy>>) <<.GroupBySlice>>", external) == "sum(x) by () []"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param("<<.Nope>>", "unknown field .Nope", id="unknown-field"),
        pytest.param("<<$.Nope>>", "unknown field .Nope", id="unknown-root-field-via-dollar"),
        pytest.param("<<$x>>", "undefined variable $x", id="undefined-variable"),
        pytest.param("<<$x = 1>>", "undefined variable $x", id="assign-undeclared"),
        pytest.param(
            "<<if .Series>><<$x := 1>><<end>><<$x>>", "undefined variable $x", id="scope-ends"
        ),
        pytest.param("<<join .GroupBySlice>>", "function 'join' not defined", id="join"),
        pytest.param('<<printf "%s" 1>>', "unsupported function 'printf'", id="printf"),
        pytest.param('<<template "x">>', "unsupported action 'template'", id="template-action"),
        pytest.param('<<define "x">><<end>>', "unsupported action 'define'", id="define"),
        pytest.param("<<end>>", "unexpected end", id="stray-end"),
        pytest.param("<<else>>", "unexpected else", id="stray-else"),
        pytest.param("<<range .GroupBySlice>>", "range without a matching end", id="range-no-end"),
        pytest.param("<<>>", "missing value for command", id="empty-action"),
        pytest.param("<<.Series", "unclosed action", id="unclosed"),
        pytest.param("<</* x >>", "unclosed comment", id="unclosed-comment"),
        pytest.param("<<.Series 1>>", "can't give arguments to a non-function", id="args-to-field"),
        pytest.param("<<1.5>>", "unsupported number 1.5", id="float"),
        pytest.param("<<'a'>>", "unexpected 'a'", id="char-constant"),
        pytest.param('<<"\\q">>', "invalid escape \\q", id="bad-string-escape"),
        pytest.param("<<(.Series).X>>", "fields of a (pipeline) unsupported", id="chained-paren"),
    ],
)
def test_unsupported_or_broken_templates_fail_at_compile_time(source: str, message: str) -> None:
    with pytest.raises(TemplateError, match=None) as caught:
        compile_template(source, fields=QUERY_FIELDS)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param("<<index .GroupBySlice 5>>", "index out of range: 5", id="index-out-of-range"),
        pytest.param("<<index .Series 0>>", "can't index item of type string", id="index-string"),
        pytest.param("<<range .Series>><<end>>", "range can't iterate over", id="range-string"),
        pytest.param("<<eq .Series 1>>", "incompatible types for comparison", id="eq-mixed"),
        pytest.param(
            "<<range .GroupBySlice>><<.X>><<end>>", "can't evaluate field X", id="field-on-string"
        ),
    ],
)
def test_execution_errors_are_template_errors(source: str, message: str) -> None:
    with pytest.raises(TemplateError) as caught:
        render(source)
    assert message in str(caught.value)


_TEXT = st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=30)


@given(parts=st.lists(_TEXT, min_size=1, max_size=5))
def test_text_without_actions_renders_verbatim(parts: list[str]) -> None:
    source = "<<.GroupBy>>".join(parts)
    assert render(source) == "pod".join(parts)


@given(values=st.lists(st.text(alphabet="abc-_.", min_size=1, max_size=5), max_size=5))
def test_slices_print_as_go_does(values: list[str]) -> None:
    args = Record({**ARGS.fields, "GroupBySlice": tuple(values)})
    assert render("<<.GroupBySlice>>", args) == "[" + " ".join(values) + "]"


_FUZZ = st.text(alphabet='<>-. $abcdeGSLBy()|"`/*:=,019\\\n', max_size=40)


@given(source=_FUZZ)
def test_any_text_compiles_or_raises_template_error(source: str) -> None:
    try:
        template = compile_template(source, fields=QUERY_FIELDS)
    except TemplateError:
        return
    with contextlib.suppress(TemplateError):
        assert isinstance(template.render(ARGS), str)


@given(source=_FUZZ.map(lambda s: f"<<{s}>>"))
def test_any_action_compiles_or_raises_template_error(source: str) -> None:
    with contextlib.suppress(TemplateError):
        compile_template(source, fields=QUERY_FIELDS).render(ARGS)
