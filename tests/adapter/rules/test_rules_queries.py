"""Query building: matchers, namespaces, external rules, bounded queries, rejected input."""

from __future__ import annotations

import pytest

from adapter.errors import BadRequest
from adapter.rules import (
    MetricSource,
    RuleQueryError,
    build_custom_query,
    build_external_query,
    load_rules,
)
from adapter.rules.resources import (
    BUILTIN_RESOURCES,
    STATIC_RESOLVER,
    GroupResource,
    ResourceInfo,
    StaticResolver,
)
from common.selectors import Operator, Requirement, Selector, parse_selector
from tests.adapter.rules.rules_support import load_fixture, parse_selector_query, resource

DOCS = load_fixture("documented-examples.yaml")
PODS = resource("pods")
INGRESSES = resource("ingresses.networking.k8s.io")
EVERYTHING = Selector()


def custom(
    source: MetricSource,
    names: list[str],
    *,
    info: ResourceInfo = PODS,
    namespace: str | None = "default",
    selector: Selector = EVERYTHING,
    max_names_bytes: int = 32 * 1024,
) -> str:
    query = build_custom_query(
        source,
        resource=info,
        namespace=namespace,
        names=names,
        metric_selector=selector,
        resolver=STATIC_RESOLVER,
        max_names_bytes=max_names_bytes,
    )
    return query.promql


def external(source: MetricSource, *, namespace: str = "default", selector: str = "") -> str:
    return build_external_query(
        source,
        namespace=namespace,
        metric_selector=parse_selector(selector),
        resolver=STATIC_RESOLVER,
    ).promql


WALKTHROUGH = MetricSource(DOCS.rules[0], "http_requests_total")


@pytest.mark.parametrize(
    ("selector", "matchers"),
    [
        pytest.param("a=b", 'a="b"', id="equals"),
        pytest.param("a==b", 'a="b"', id="double-equals"),
        pytest.param("a!=b", 'a!="b"', id="not-equals"),
        pytest.param("a in (x)", 'a=~"x"', id="in-one"),
        pytest.param("a in (y,x)", 'a=~"x|y"', id="in-many-sorted"),
        pytest.param("a notin (x,y)", 'a!~"x|y"', id="notin"),
        pytest.param("a", 'a!=""', id="exists"),
        pytest.param("!a", 'a=""', id="does-not-exist"),
        pytest.param("a in (x.y)", 'a=~"x\\\\.y"', id="in-values-are-regex-escaped"),
        pytest.param("z=1,a=2", 'a="2",z="1"', id="sorted-by-key"),
    ],
)
def test_metric_selector_operators_map_to_promql(selector: str, matchers: str) -> None:
    want = f'sum(rate(http_requests_total{{{matchers},namespace="default",pod="p"}}[2m])) by (pod)'
    assert custom(WALKTHROUGH, ["p"], selector=parse_selector(selector)) == want


@pytest.mark.parametrize(
    ("requirement", "message"),
    [
        pytest.param(Requirement("a", Operator.GT, ("1",)), "unsupported operator >", id="gt"),
        pytest.param(Requirement("a", Operator.LT, ("1",)), "unsupported operator <", id="lt"),
        pytest.param(
            Requirement("app.kubernetes.io/name", Operator.EQUALS, ("x",)),
            "invalid label name 'app.kubernetes.io/name'",
            id="key-not-a-prometheus-label",
        ),
        pytest.param(
            Requirement("a", Operator.IN, ()), "malformed selector", id="in-without-values"
        ),
    ],
)
def test_untranslatable_selectors_are_bad_requests(requirement: Requirement, message: str) -> None:
    with pytest.raises(BadRequest) as caught:
        custom(WALKTHROUGH, ["p"], selector=Selector((requirement,)))
    assert caught.value.code == 400
    assert message in caught.value.message


def test_names_are_regex_escaped_sorted_and_deduplicated() -> None:
    got = custom(WALKTHROUGH, ["web.2", "web.1", "web.2"])
    assert got == (
        'sum(rate(http_requests_total{namespace="default",pod=~"web\\\\.1|web\\\\.2"}[2m])) '
        "by (pod)"
    )


def test_label_values_by_name_and_range_over_group_by_slice() -> None:
    source = MetricSource(DOCS.rules[2], "nginx_ingress_controller_requests")
    got = custom(source, ["shop", "api.v2"], info=INGRESSES)
    assert got == (
        'sum(rate(nginx_ingress_controller_requests{namespace="default", '
        'ingress=~"api\\\\.v2|shop"}[1m])) by (ingress)'
    )


def test_template_resource_mapping_names_the_label() -> None:
    source = MetricSource(DOCS.rules[1], "kube_hpa_status_current_replicas")
    hpa = ResourceInfo(
        GroupResource("autoscaling", "horizontalpodautoscalers"),
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscaler",
        namespaced=True,
    )
    resolver = _with(hpa)
    query = build_custom_query(
        source,
        resource=hpa,
        namespace="default",
        names=["web"],
        metric_selector=EVERYTHING,
        resolver=resolver,
    )
    assert query.resource_label == "kube_autoscaling_horizontalpodautoscaler"
    assert query.promql == (
        'max(kube_hpa_status_current_replicas{namespace="default",'
        'kube_autoscaling_horizontalpodautoscaler="web"}) by '
        "(kube_autoscaling_horizontalpodautoscaler)"
    )


def _with(extra: ResourceInfo) -> StaticResolver:
    return StaticResolver((*BUILTIN_RESOURCES, extra))


def test_many_names_switch_to_a_bounded_query_and_a_names_filter() -> None:
    names = [f"pod-{i:05d}" for i in range(3000)]
    query = build_custom_query(
        WALKTHROUGH,
        resource=PODS,
        namespace="default",
        names=names,
        metric_selector=EVERYTHING,
        resolver=STATIC_RESOLVER,
        max_names_bytes=16 * 1024,
    )
    assert query.promql == (
        'sum(rate(http_requests_total{namespace="default",pod!=""}[2m])) by (pod)'
    )
    assert query.names_filter == frozenset(names)


def test_names_under_the_limit_keep_the_exact_matcher() -> None:
    names = [f"pod-{i:05d}" for i in range(100)]
    query = build_custom_query(
        WALKTHROUGH,
        resource=PODS,
        namespace="default",
        names=names,
        metric_selector=EVERYTHING,
        resolver=STATIC_RESOLVER,
    )
    assert query.names_filter is None
    assert "|".join(names) in query.promql
    assert query.window_seconds == 120


def test_cluster_scoped_resource_gets_no_namespace_matcher() -> None:
    config = load_rules(
        "rules: [{seriesQuery: x, resources: {template: '<<.Resource>>'}, "
        "metricsQuery: 'max(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'}]"
    )
    nodes = resource("nodes")
    got = custom(MetricSource(config.rules[0], "node_temp"), ["n1"], info=nodes, namespace=None)
    assert got == 'max(node_temp{node="n1"}) by (node)'


def test_no_names_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="at least one object name"):
        custom(WALKTHROUGH, [])


def test_unmapped_resource_is_a_rule_query_error() -> None:
    with pytest.raises(RuleQueryError) as caught:
        custom(WALKTHROUGH, ["x"], info=INGRESSES)
    assert caught.value.code == 500
    assert "ingresses" in str(caught.value.__cause__)


def test_template_execution_failure_is_a_rule_query_error_with_the_cause() -> None:
    config = load_rules(
        "rules: [{seriesQuery: x, metricsQuery: '<<index .GroupBySlice 3>>', "
        "resources: {template: '<<.Resource>>'}}]"
    )
    with pytest.raises(RuleQueryError) as caught:
        custom(MetricSource(config.rules[0], "m"), ["p"])
    assert "index out of range" in str(caught.value.__cause__)


QUEUE = MetricSource(DOCS.external_rules[0], "queue_depth")
CROSS_NAMESPACE = MetricSource(DOCS.external_rules[1], "http_server_request_duration_seconds_count")


@pytest.mark.parametrize(
    ("source", "namespace", "selector", "want"),
    [
        pytest.param(
            QUEUE, "default", "", 'sum(queue_depth{namespace="default"}) by ()', id="namespaced"
        ),
        pytest.param(
            QUEUE,
            "shop",
            "queue in (orders,billing)",
            'sum(queue_depth{queue=~"billing|orders",namespace="shop"}) by ()',
            id="namespaced-with-selector",
        ),
        pytest.param(
            CROSS_NAMESPACE,
            "default",
            "job=api",
            'sum(rate(http_server_request_duration_seconds_count{job="api"}[1m])) by ()',
            id="namespaced-false-ignores-namespace",
        ),
        pytest.param(
            CROSS_NAMESPACE,
            "default",
            "",
            "sum(rate(http_server_request_duration_seconds_count{}[1m])) by ()",
            id="namespaced-false-no-selector",
        ),
    ],
)
def test_external_queries(source: MetricSource, namespace: str, selector: str, want: str) -> None:
    assert external(source, namespace=namespace, selector=selector) == want


def test_external_rule_without_namespace_mapping_fails_like_the_peer_but_cleanly() -> None:
    config = load_rules("externalRules: [{seriesQuery: x, metricsQuery: 'sum(<<.Series>>)'}]")
    with pytest.raises(RuleQueryError) as caught:
        external(MetricSource(config.external_rules[0], "x"))
    assert "no label maps to namespaces" in str(caught.value.__cause__)


def test_external_window_is_reported() -> None:
    query = build_external_query(
        CROSS_NAMESPACE, namespace="x", metric_selector=EVERYTHING, resolver=STATIC_RESOLVER
    )
    assert query.window_seconds == 60


def test_rendered_matchers_parse_back_exactly() -> None:
    got = custom(WALKTHROUGH, ["a", "b"], selector=parse_selector("code=200"))
    matchers = parse_selector_query(got, "sum(rate(http_requests_total", "[2m])) by (pod)")
    assert [(m.label, m.op, m.value) for m in matchers] == [
        ("code", "=", "200"),
        ("namespace", "=", "default"),
        ("pod", "=~", "a|b"),
    ]
