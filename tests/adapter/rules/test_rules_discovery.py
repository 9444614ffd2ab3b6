"""Discovery indexing: what is registered, conflicts, per-query merging, bounded state."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapter.rules import MetricIndex, build_index, index_series, load_rules
from adapter.rules.resources import STATIC_RESOLVER, GroupResource, ResourceInfo, StaticResolver

PODS, NAMESPACES = GroupResource("", "pods"), GroupResource("", "namespaces")

TWO_RULES = load_rules(
    """
rules:
- seriesQuery: '{__name__=~"^http_.*"}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  name: {matches: "^http_(.*)_total$"}
  metricsQuery: 'first(<<.Series>>)'
- seriesQuery: '{__name__=~"^web_.*"}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  name: {matches: "^web_(.*)_total$"}
  metricsQuery: 'second(<<.Series>>)'
externalRules:
- seriesQuery: '{__name__=~"^http_.*"}'
  name: {matches: "^http_(.*)_total$", as: "ext_$1"}
  metricsQuery: 'x'
- seriesQuery: '{__name__=~"^web_.*"}'
  name: {matches: "^web_(.*)_total$", as: "ext_$1"}
  metricsQuery: 'y'
"""
)
HTTP, WEB = TWO_RULES.series_queries


def _labels(name: str, **labels: str) -> dict[str, str]:
    return {"__name__": name, "namespace": "default", "pod": "p", **labels}


def test_later_rule_wins_a_conflict_whatever_order_the_queries_finish_in() -> None:
    http = index_series(TWO_RULES, HTTP, [_labels("http_requests_total")], resolver=STATIC_RESOLVER)
    web = index_series(TWO_RULES, WEB, [_labels("web_requests_total")], resolver=STATIC_RESOLVER)
    for parts in ([http, web], [web, http]):
        index = MetricIndex.merge(parts)
        source = index.find_custom(PODS, "requests")
        assert source is not None
        assert (source.rule.position, source.series) == (1, "web_requests_total")
        external = index.find_external("ext_requests")
        assert external is not None
        assert external.series == "web_requests_total"


def test_a_failed_query_can_keep_its_last_good_part() -> None:
    last_good = index_series(TWO_RULES, HTTP, [_labels("http_a_total")], resolver=STATIC_RESOLVER)
    fresh = index_series(TWO_RULES, WEB, [_labels("web_b_total")], resolver=STATIC_RESOLVER)
    index = MetricIndex.merge([last_good, fresh])
    assert {m.metric for m in index.custom_metrics()} == {"a", "b"}
    assert index.external_metrics() == ("ext_a", "ext_b")


def test_namespace_and_pod_labels_give_both_resources() -> None:
    index = build_index(TWO_RULES, {HTTP: [_labels("http_x_total")]}, resolver=STATIC_RESOLVER)
    listed = [(m.group_resource, m.metric, m.namespaced) for m in index.custom_metrics()]
    assert listed == [(NAMESPACES, "x", False), (PODS, "x", True)]


def test_namespaced_resource_without_namespace_label_is_not_served() -> None:
    series = [{"__name__": "http_x_total", "pod": "p"}]
    index = build_index(TWO_RULES, {HTTP: series}, resolver=STATIC_RESOLVER)
    assert index.custom_metrics() == ()
    assert index.external_metrics() == ("ext_x",)  # external metrics need no resource


@pytest.mark.parametrize(
    ("labels", "want"),
    [
        pytest.param(
            {"kube_apps_deployment": "d"}, GroupResource("apps", "deployments"), id="group"
        ),
        pytest.param(
            {"kube_networking_k8s_io_ingress": "i"},
            GroupResource("networking.k8s.io", "ingresses"),
            id="dotted-group-read-back",
        ),
        pytest.param({"kube__pod": "p"}, PODS, id="core-group"),
        pytest.param({"kube_apps_nothing": "x"}, None, id="unknown-resource-skipped"),
        pytest.param({"container": "app"}, None, id="unmatched-label-skipped"),
    ],
)
def test_template_labels_map_to_resources(
    labels: dict[str, str], want: GroupResource | None
) -> None:
    config = load_rules(
        "rules: [{seriesQuery: x, resources: {template: 'kube_<<.Group>>_<<.Resource>>', "
        "overrides: {namespace: {resource: namespace}}}, metricsQuery: x}]"
    )
    series = [{"__name__": "m", "namespace": "default", **labels}]
    index = build_index(config, {"x": series}, resolver=STATIC_RESOLVER)
    found = {m.group_resource for m in index.custom_metrics()} - {NAMESPACES}
    assert found == ({want} if want else set())


def test_namespacedness_comes_from_the_resolver_not_the_name() -> None:
    widget = ResourceInfo(GroupResource("example.com", "widgets"), "v1", "Widget", "widget", False)
    resolver = StaticResolver((*STATIC_RESOLVER.infos, widget))
    config = load_rules(
        "rules: [{seriesQuery: x, resources: {overrides: {w: {group: example.com, "
        "resource: widget}}}, metricsQuery: x}]"
    )
    index = build_index(config, {"x": [{"__name__": "m", "w": "one"}]}, resolver=resolver)
    assert [(str(m.group_resource), m.namespaced) for m in index.custom_metrics()] == [
        ("widgets.example.com", False)
    ]


def test_override_for_an_unknown_resource_is_reported_not_fatal() -> None:
    config = load_rules(
        "rules: [{seriesQuery: x, resources: {overrides: {w: {group: example.com, "
        "resource: widget}, node: {resource: node}}}, metricsQuery: x}]"
    )
    part = index_series(
        config, "x", [{"__name__": "m", "w": "a", "node": "n"}], resolver=STATIC_RESOLVER
    )
    assert part.unresolved == frozenset({"widget.example.com"})
    assert list(part.custom) == [(GroupResource("", "nodes"), "m")]


def test_label_sets_are_consumed_once_and_not_retained() -> None:
    consumed = []

    def stream() -> Iterator[dict[str, str]]:
        for i in range(1000):
            labels = _labels(f"http_m{i % 10}_total", pod=f"p{i}")
            consumed.append(i)
            yield labels

    part = index_series(TWO_RULES, HTTP, stream(), resolver=STATIC_RESOLVER)
    assert len(consumed) == part.series_seen == 1000
    assert len(part.custom) == 20  # 10 metrics x (pods, namespaces): no per-series state
    # one shared source per series name (10), not one per series (1000)
    assert len({id(source) for _, source in part.custom.values()}) == 10


def test_series_without_a_name_are_ignored() -> None:
    part = index_series(TWO_RULES, HTTP, [{"pod": "p"}], resolver=STATIC_RESOLVER)
    assert (part.series_seen, dict(part.custom)) == (1, {})


def test_queries_missing_from_results_contribute_nothing() -> None:
    index = build_index(TWO_RULES, {}, resolver=STATIC_RESOLVER)
    assert (index.custom_metrics(), index.external_metrics()) == ((), ())
