"""Request input never changes a query's structure (property tests).

Names, namespaces and selector values are drawn from text full of PromQL and regex
metacharacters (quotes, backslashes, braces, newlines, `|`, unicode, control characters). The
rendered query is parsed back with an independent matcher parser: the text around the
matchers must be exactly the template's, and the matchers exactly the intended ones.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.rules import MetricSource, build_custom_query, build_external_query, load_rules
from adapter.rules.resources import STATIC_RESOLVER
from common.selectors import Operator, Requirement, Selector
from tests.adapter.rules.rules_support import (
    parse_matchers,
    parse_selector_query,
    resource,
    split_regex_union,
)

NASTY = st.text(
    st.one_of(
        st.sampled_from(list("\"\\}{\n\r\t|,=~!.*+?()[]^$`'#\x00\x7f\u2028\u00ad ")),
        st.characters(blacklist_categories=["Cs"]),
    ),
    max_size=12,
)
LABEL = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,8}", fullmatch=True)
CONFIG = load_rules(
    """
rules:
- seriesQuery: x
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: x
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: >-
    x{pod=~"<<index .LabelValuesByName "pod">>",ns=~"<<index .LabelValuesByName "namespace">>"}
externalRules:
- seriesQuery: x
  resources: {overrides: {namespace: {resource: namespace}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>})'
"""
)
PODS = resource("pods")
ONE_VALUE = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS)


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    key = draw(LABEL)
    op = draw(st.sampled_from([o for o in Operator if o not in (Operator.GT, Operator.LT)]))
    if op in ONE_VALUE:
        return Requirement(key, op, (draw(NASTY),))
    if op in (Operator.IN, Operator.NOT_IN):
        values = draw(st.lists(NASTY, min_size=1, max_size=3, unique=True))
        return Requirement(key, op, tuple(sorted(values)))
    return Requirement(key, op)


SELECTORS = st.lists(requirements(), max_size=4).map(lambda rs: Selector(tuple(rs)))


def _check_regex(regex: str, values: list[str]) -> None:
    """`regex` is exactly the union of `values`: it splits back into them and matches each."""
    assert split_regex_union(regex) == sorted(values)
    for value in values:
        assert re.fullmatch(regex, value, re.DOTALL) is not None
        probe = value + "\x01"  # a near miss must not match (unless it is itself wanted)
        assert (re.fullmatch(regex, probe, re.DOTALL) is None) == (probe not in values)


def _check_requirement(matcher, requirement: Requirement) -> None:
    assert matcher.label == requirement.key
    op, values = requirement.operator, list(requirement.values)
    if op is Operator.EXISTS:
        assert (matcher.op, matcher.value) == ("!=", "")
    elif op is Operator.DOES_NOT_EXIST:
        assert (matcher.op, matcher.value) == ("=", "")
    elif op in ONE_VALUE:
        assert matcher.op == ("!=" if op is Operator.NOT_EQUALS else "=")
        assert matcher.value == values[0]
    else:
        assert matcher.op == ("=~" if op is Operator.IN else "!~")
        _check_regex(matcher.value, values)


@settings(max_examples=300, deadline=None)
@given(
    names=st.lists(NASTY, min_size=1, max_size=4, unique=True),
    namespace=NASTY.filter(bool),
    selector=SELECTORS,
)
def test_custom_query_matchers_are_exactly_the_intended_ones(
    names: list[str], namespace: str, selector: Selector
) -> None:
    query = build_custom_query(
        MetricSource(CONFIG.rules[0], "m"),
        resource=PODS,
        namespace=namespace,
        names=names,
        metric_selector=selector,
        resolver=STATIC_RESOLVER,
    )
    matchers = parse_selector_query(query.promql, "sum(m", ") by (pod)")
    ordered = sorted(selector.requirements, key=lambda r: r.key)
    assert len(matchers) == len(ordered) + 2
    for matcher, requirement in zip(matchers, ordered, strict=False):
        _check_requirement(matcher, requirement)
    ns, pod = matchers[-2:]
    assert (ns.label, ns.op, ns.value) == ("namespace", "=", namespace)
    assert pod.label == "pod"
    if len(names) == 1:
        assert (pod.op, pod.value) == ("=", names[0])
    else:
        assert pod.op == "=~"
        _check_regex(pod.value, names)


@settings(max_examples=200, deadline=None)
@given(names=st.lists(NASTY, min_size=1, max_size=4, unique=True), namespace=NASTY.filter(bool))
def test_label_values_by_name_is_safe_inside_double_quotes(
    names: list[str], namespace: str
) -> None:
    query = build_custom_query(
        MetricSource(CONFIG.rules[1], "m"),
        resource=PODS,
        namespace=namespace,
        names=names,
        metric_selector=Selector(),
        resolver=STATIC_RESOLVER,
    )
    assert query.promql.startswith("x{")
    matchers, end = parse_matchers(query.promql, 2)
    assert end == len(query.promql) - 1
    assert [(m.label, m.op) for m in matchers] == [("pod", "=~"), ("ns", "=~")]
    _check_regex(matchers[0].value, names)
    _check_regex(matchers[1].value, [namespace])


@settings(max_examples=200, deadline=None)
@given(namespace=NASTY.filter(bool), selector=SELECTORS)
def test_external_query_matchers_are_exactly_the_intended_ones(
    namespace: str, selector: Selector
) -> None:
    query = build_external_query(
        MetricSource(CONFIG.external_rules[0], "q"),
        namespace=namespace,
        metric_selector=selector,
        resolver=STATIC_RESOLVER,
    )
    matchers = parse_selector_query(query.promql, "sum(q", ")")
    ordered = sorted(selector.requirements, key=lambda r: r.key)
    for matcher, requirement in zip(matchers, ordered, strict=False):
        _check_requirement(matcher, requirement)
    assert (matchers[-1].label, matchers[-1].value) == ("namespace", namespace)
