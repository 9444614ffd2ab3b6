"""load_rules: what a valid file becomes, and a message naming the place for every bad one."""

from __future__ import annotations

import contextlib
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.rules import RuleError, load_rules
from adapter.rules.durations import parse_duration
from tests.adapter.rules.rules_support import load_fixture

_OK_RULE = "{seriesQuery: 'up', metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>})'}"


def _rules(*extra: str) -> str:
    """A file whose rules[3] is the rule under test (three good ones before it)."""
    return "rules:\n" + "".join(f"- {rule}\n" for rule in [_OK_RULE] * 3 + list(extra))


BAD_FILES = [
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: x, name: {matches: '('}}"),
        'config: rules[3].name.matches: invalid regular expression "(": '
        "missing ), unterminated subpattern",
        id="bad-regex-names-index-and-field",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: x, nmae: {}}"),
        "config: rules[3].nmae: unknown key 'nmae' (allowed: backend, metricsQuery, name, "
        "resources, seriesFilters, seriesQuery)",
        id="unknown-rule-key",
    ),
    pytest.param(
        "rules: []\nmetricsRelabelings: []\n",
        "config: metricsRelabelings: unknown key 'metricsRelabelings' "
        "(allowed: backends, externalRules, resourceRules, rules)",
        id="unknown-top-level-key",
    ),
    pytest.param(
        _rules(
            "{seriesQuery: up, metricsQuery: x, "
            "resources: {overrides: {pod: {resource: pod, kind: Pod}}}}"
        ),
        "config: rules[3].resources.overrides.pod.kind: unknown key 'kind' "
        "(allowed: group, resource)",
        id="unknown-override-key",
    ),
    pytest.param(
        _rules("{seriesQuery: [up], metricsQuery: x}"),
        "config: rules[3].seriesQuery: must be a string, not a list",
        id="series-query-wrong-type",
    ),
    pytest.param(
        _rules("{seriesQuery: up}"),
        "config: rules[3].metricsQuery: is required and must not be empty",
        id="metrics-query-missing",
    ),
    pytest.param(
        "rules: {seriesQuery: up}\n",
        "config: rules: must be a list, not a mapping",
        id="rules-not-a-list",
    ),
    pytest.param(
        "- a\n- b\n",
        "config: must be a mapping, not a list",
        id="document-not-a-mapping",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: x, seriesFilters: [{is: a, isNot: b}]}"),
        "config: rules[3].seriesFilters[0]: cannot have both an `is` and an `isNot` "
        "expression in a single filter",
        id="is-and-isnot-in-one-filter",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: x, seriesFilters: [{}]}"),
        "config: rules[3].seriesFilters[0]: must have either an `is` or an `isNot` expression",
        id="empty-filter",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: x, seriesFilters: [{isNot: 'a(?!b)'}]}"),
        'config: rules[3].seriesFilters[0].isNot: invalid regular expression "a(?!b)": '
        "lookahead ((?!...) are not supported (at offset 1); RE2 syntax is required",
        id="lookahead-is-not-re2",
    ),
    pytest.param(
        _rules(r"{seriesQuery: up, metricsQuery: x, name: {matches: '(a)\1'}}"),
        r'config: rules[3].name.matches: invalid regular expression "(a)\1": backreferences '
        r"and octal escapes (\1) are not supported (at offset 3); RE2 syntax is required",
        id="backreference-is-not-re2",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: x, name: {matches: '^(a)_(b)$'}}"),
        "config: rules[3].name.as: is required when name.matches has 2 capture groups",
        id="as-required-with-two-groups",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: 'sum(<<.Series'}"),
        "config: rules[3].metricsQuery: invalid template: offset 4: unclosed action",
        id="template-unclosed-action",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: '<<.Sereis>>'}"),
        "config: rules[3].metricsQuery: invalid template: offset 0: unknown field .Sereis "
        "(known: .GroupBy, .GroupBySlice, .LabelMatchers, .LabelValuesByName, .Series)",
        id="template-unknown-field",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: '<<join .GroupBySlice \",\">>'}"),
        "config: rules[3].metricsQuery: invalid template: offset 0: function 'join' not "
        "defined (the peer's Go templates have only and, eq, ge, gt, index, le, len, lt, ne, "
        "not, or of these)",
        id="template-join-is-not-in-go",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: '<<printf \"%s\" .Series>>'}"),
        "config: rules[3].metricsQuery: invalid template: offset 0: unsupported function 'printf'",
        id="template-unsupported-function",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: '<<block \"x\" .>>x<<end>>'}"),
        "config: rules[3].metricsQuery: invalid template: offset 0: unsupported action 'block'",
        id="template-unsupported-action",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: '<<if .GroupBy>>x'}"),
        "config: rules[3].metricsQuery: invalid template: offset 0: if without a matching end",
        id="template-if-without-end",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: x, resources: {template: 'kube_<<.Group>>'}}"),
        "config: rules[3].resources.template: must include at least <<.Resource>>",
        id="resource-template-without-resource",
    ),
    pytest.param(
        _rules(
            "{seriesQuery: up, metricsQuery: x, resources: {overrides: {'a-b': {resource: pod}}}}"
        ),
        "config: rules[3].resources.overrides.a-b: 'a-b' is not a Prometheus label name",
        id="override-label-not-a-label-name",
    ),
    pytest.param(
        _rules("{seriesQuery: up, metricsQuery: x, resources: {overrides: {pod: {group: ''}}}}"),
        "config: rules[3].resources.overrides.pod.resource: is required and must not be empty",
        id="override-without-resource",
    ),
    pytest.param(
        "externalRules:\n- {seriesQuery: up, metricsQuery: x, resources: {namespaced: 'no'}}\n",
        "config: externalRules[0].resources.namespaced: must be true or false, not a string",
        id="namespaced-not-a-boolean",
    ),
    pytest.param(
        "resourceRules: {cpu: {containerQuery: a, nodeQuery: b}, memory: {containerQuery: a, "
        "nodeQuery: b}, window: 3 minutes}\n",
        "config: resourceRules.window: not a valid duration '3 minutes' (e.g. 30s, 5m, 1h30m)",
        id="resource-rules-bad-window",
    ),
    pytest.param(
        "resourceRules: {cpu: {containerQuery: a, nodeQuery: b}, window: 3m}\n",
        "config: resourceRules.memory: is required (containerQuery, nodeQuery, resources, "
        "containerLabel)",
        id="resource-rules-missing-memory",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES)
def test_bad_file_is_rejected_with_a_message_naming_the_place(text: str, message: str) -> None:
    with pytest.raises(RuleError) as caught:
        load_rules(text)
    assert str(caught.value) == message


def test_duplicate_keys_are_rejected_like_the_peers_strict_yaml() -> None:
    with pytest.raises(RuleError, match=r"^cfg\.yaml: invalid YAML: duplicate key 'seriesQuery'"):
        load_rules("rules:\n- seriesQuery: a\n  seriesQuery: b\n", source="cfg.yaml")


def test_invalid_yaml_names_the_source() -> None:
    with pytest.raises(RuleError, match=r"^/etc/adapter/config\.yaml: invalid YAML"):
        load_rules("rules: [", source="/etc/adapter/config.yaml")


def test_empty_file_is_an_empty_config() -> None:
    config = load_rules("")
    assert (config.rules, config.external_rules, config.resource_rules) == ((), (), None)


@pytest.mark.parametrize(
    ("matches", "as_", "want"),
    [
        pytest.param("", "", "$0", id="no-matches-means-whole-name"),
        pytest.param("^foo_.*$", "", "$0", id="no-group-uses-whole-match"),
        pytest.param("^(.*)_total$", "", "$1", id="one-group-uses-it"),
        pytest.param("^(.*)_(.*)$", "${2}_$1", "${2}_$1", id="explicit-as-kept"),
    ],
)
def test_name_as_defaults_as_the_peer(matches: str, as_: str, want: str) -> None:
    rule = textwrap.dedent(f"""\
        rules:
        - seriesQuery: up
          name: {{matches: '{matches}', as: '{as_}'}}
          metricsQuery: x
        """)
    assert load_rules(rule).rules[0].name.as_ == want


@pytest.mark.parametrize(
    ("query", "want"),
    [
        pytest.param("sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m]))", 120, id="range-2m"),
        pytest.param("rate(x[1h30m])", 5400, id="compound-duration"),
        pytest.param("max_over_time(rate(x[1m])[5m:30s])", 60, id="first-range-wins"),
        pytest.param("max_over_time(x[5m:30s])", 300, id="subquery-range"),
        pytest.param('sum(x{a="[9m]"}) + sum(y)', None, id="range-inside-a-string-ignored"),
        pytest.param("sum(<<.Series>>{<<.LabelMatchers>>})", None, id="no-range"),
    ],
)
def test_window_comes_from_the_first_range_in_the_query(query: str, want: int | None) -> None:
    config = load_rules(f"rules: [{{seriesQuery: up, metricsQuery: '{query}'}}]")
    assert config.rules[0].window_seconds == want


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("30s", 30, id="seconds"),
        pytest.param("1h30m", 5400, id="hours-minutes"),
        pytest.param("1d", 86400, id="day"),
        pytest.param("500ms", 0.5, id="millis"),
        pytest.param("0", 0, id="zero"),
    ],
)
def test_durations_parse_like_prometheus(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5", "1.5m", "m", "5m1h"])
def test_bad_durations_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="not a valid duration"):
        parse_duration(text)


def test_fixtures_load_and_share_series_queries() -> None:
    legacy = load_fixture("legacy-defaults.yaml")
    assert len(legacy.rules) == 6
    assert len(legacy.series_queries) == 2  # six rules, two discovery calls
    assert [len(legacy.rules_for(q)) for q in legacy.series_queries] == [3, 3]
    documented = load_fixture("documented-examples.yaml")
    assert documented.resource_rules is not None
    assert documented.resource_rules.window_seconds == 180
    assert documented.external_rules[1].resources.namespaced is False


def test_plain_scalars_fill_string_fields_with_their_text_like_yaml_v2() -> None:
    config = load_rules(
        "rules: [{seriesQuery: up, name: {matches: '^(.*)$', as: 2021}, metricsQuery: 1.50}]"
    )
    assert config.rules[0].name.as_ == "2021"
    assert config.rules[0].metrics_query.source == "1.50"


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param("false", False, id="false"),
        pytest.param("no", False, id="yaml-1.1-no"),
        pytest.param("Off", False, id="yaml-1.1-off"),
        pytest.param("true", True, id="true"),
        pytest.param("yes", True, id="yaml-1.1-yes"),
    ],
)
def test_namespaced_reads_yaml_booleans(value: str, want: bool) -> None:
    config = load_rules(
        f"externalRules: [{{seriesQuery: x, metricsQuery: y, resources: {{namespaced: {value}}}}}]"
    )
    assert config.external_rules[0].resources.namespaced is want


_YAMLISH = st.text(
    alphabet="rules:- {}[],'\"seriesQuery metricsQuery name as matches 01\n<>.", max_size=80
)


@settings(max_examples=300)
@given(text=_YAMLISH)
def test_any_text_loads_or_raises_rule_error(text: str) -> None:
    with contextlib.suppress(RuleError):
        load_rules(text)
