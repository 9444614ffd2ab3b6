import pytest
from hypothesis import given
from hypothesis import strategies as st

from common.selectors import (
    FieldRequirement,
    Operator,
    Requirement,
    Selector,
    SelectorError,
    parse_field_selector,
    parse_selector,
    selector_from_label_selector,
)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("a=b", [Requirement("a", Operator.EQUALS, ("b",))], id="equals"),
        pytest.param("a==b", [Requirement("a", Operator.DOUBLE_EQUALS, ("b",))], id="double"),
        pytest.param("a!=b", [Requirement("a", Operator.NOT_EQUALS, ("b",))], id="not-equals"),
        pytest.param(
            "a in (y, x)", [Requirement("a", Operator.IN, ("x", "y"))], id="in-sorted-values"
        ),
        pytest.param("a notin (x)", [Requirement("a", Operator.NOT_IN, ("x",))], id="notin"),
        pytest.param("a", [Requirement("a", Operator.EXISTS)], id="exists"),
        pytest.param("!a", [Requirement("a", Operator.DOES_NOT_EXIST)], id="does-not-exist"),
        pytest.param("a>1", [Requirement("a", Operator.GT, ("1",))], id="gt"),
        pytest.param("a<10", [Requirement("a", Operator.LT, ("10",))], id="lt"),
        pytest.param("a=", [Requirement("a", Operator.EQUALS, ("",))], id="empty-value"),
        pytest.param(
            "z=1,a=2",
            [Requirement("a", Operator.EQUALS, ("2",)), Requirement("z", Operator.EQUALS, ("1",))],
            id="sorted-by-key",
        ),
        pytest.param(
            "app.kubernetes.io/name=web",
            [Requirement("app.kubernetes.io/name", Operator.EQUALS, ("web",))],
            id="prefixed-key",
        ),
        pytest.param("", [], id="empty-selects-everything"),
    ],
)
def test_parse(text, want):
    assert list(parse_selector(text).requirements) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("a in ()", "can't be empty", id="empty-set"),
        pytest.param("a>x", "integer", id="gt-not-integer"),
        pytest.param("a=b,", "end of string", id="trailing-comma"),
        pytest.param("a b", "expected", id="missing-operator"),
        pytest.param("-a=b", "invalid label key", id="bad-key"),
        pytest.param("a=" + "v" * 64, "invalid label value", id="value-too-long"),
        pytest.param('a="b"', "invalid label value", id="quotes-are-not-values"),
        pytest.param("a in (b", "found end of string", id="unclosed-set"),
        pytest.param("=b", "expected", id="no-key"),
    ],
)
def test_parse_errors_say_why(text, message):
    with pytest.raises(SelectorError, match=message):
        parse_selector(text)


@pytest.mark.parametrize(
    ("text", "labels", "want"),
    [
        pytest.param("a=b", {"a": "b"}, True, id="eq-match"),
        pytest.param("a=b", {}, False, id="eq-absent"),
        pytest.param("a!=b", {}, True, id="ne-absent-matches"),
        pytest.param("a notin (b)", {}, True, id="notin-absent-matches"),
        pytest.param("a in (b,c)", {"a": "c"}, True, id="in"),
        pytest.param("!a", {"a": ""}, False, id="not-exists-present"),
        pytest.param("a>1", {"a": "2"}, True, id="gt"),
        pytest.param("a>1", {"a": "x"}, False, id="gt-non-integer-label"),
        pytest.param("a<1", {"a": "-5"}, True, id="lt-negative"),
        pytest.param("a,b=c", {"a": "1", "b": "c"}, True, id="conjunction"),
    ],
)
def test_matches(text, labels, want):
    assert parse_selector(text).matches(labels) is want


def test_string_form_parses_back_to_the_same_selector():
    text = "b in (y,x),a,!c,d!=e,f>3"
    selector = parse_selector(text)
    assert str(selector) == "a,b in (x,y),!c,d!=e,f>3"
    assert parse_selector(str(selector)) == selector


_values = st.from_regex(r"[a-z0-9]([a-z0-9._-]{0,10}[a-z0-9])?", fullmatch=True)


@given(st.dictionaries(_values, _values, max_size=5))
def test_match_labels_selector_matches_its_own_labels(labels):
    selector = selector_from_label_selector({"matchLabels": labels})
    assert selector.matches(labels)
    assert parse_selector(str(selector)) == selector


def test_label_selector_object_expressions():
    selector = selector_from_label_selector(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "canary", "operator": "DoesNotExist"},
            ],
        }
    )
    assert str(selector) == "app=web,!canary,tier in (a,b)"
    assert selector.matches({"app": "web", "tier": "b"})
    assert not selector.matches({"app": "web", "tier": "b", "canary": "1"})


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param({"matchExpressions": [{"key": "a", "operator": "Gt"}]}, "operator"),
        pytest.param({"matchExpressions": [{"key": "a", "operator": "In"}]}, "can't be empty"),
        pytest.param({"matchLabel": {}}, "unknown field"),
    ],
)
def test_label_selector_object_errors(obj, message):
    with pytest.raises(SelectorError, match=message):
        selector_from_label_selector(obj)


def test_none_selects_everything():
    assert selector_from_label_selector(None).empty


def test_field_selector():
    assert parse_field_selector("metadata.name=web-1,status.phase!=Running") == (
        FieldRequirement("metadata.name", "web-1"),
        FieldRequirement("status.phase", "Running", equal=False),
    )
    assert parse_field_selector(r"metadata.name==a\,b") == (
        FieldRequirement("metadata.name", "a,b"),
    )
    with pytest.raises(SelectorError):
        parse_field_selector("metadata.name")


def _reference_matches(requirement: Requirement, labels: dict[str, str]) -> bool:
    """Upstream's Requirement.Matches, spelt out plainly (the code under test is tuned)."""
    present = requirement.key in labels
    op, values = requirement.operator, requirement.values
    if op in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN):
        return present and labels[requirement.key] in values
    if op in (Operator.NOT_EQUALS, Operator.NOT_IN):
        return not present or labels[requirement.key] not in values
    if op is Operator.EXISTS:
        return present
    if op is Operator.DOES_NOT_EXIST:
        return not present
    if not present or not labels[requirement.key].lstrip("+-").isdigit():
        return False
    have, want = int(labels[requirement.key]), int(values[0])
    return have > want if op is Operator.GT else have < want


TEXTS = st.sampled_from(["", "a", "b", "1", "10", "-3"])
SETS = st.lists(TEXTS, min_size=1, max_size=3).map(lambda v: tuple(sorted(set(v))))
KEYS = st.sampled_from(["k", "j"])
REQUIREMENTS = st.builds(Requirement, KEYS, st.sampled_from(list(Operator)[:7]), SETS) | (
    # gt / lt hold one integer (make_requirement refuses anything else)
    st.builds(
        Requirement,
        KEYS,
        st.sampled_from([Operator.GT, Operator.LT]),
        st.integers(-5, 15).map(lambda n: (str(n),)),
    )
)


@given(st.lists(REQUIREMENTS, max_size=3), st.dictionaries(st.sampled_from(["k", "j"]), TEXTS))
def test_matching_agrees_with_the_plain_reading_of_upstream(requirements, labels):
    selector = Selector(tuple(requirements))
    want = all(_reference_matches(r, labels) for r in requirements)
    assert selector.matches(labels) is want
