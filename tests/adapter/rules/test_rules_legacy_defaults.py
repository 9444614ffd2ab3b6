"""The six legacy default rules (config-gen, R=5m) produce exactly the documented PromQL."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from adapter.rules import build_custom_query, build_index
from adapter.rules.resources import STATIC_RESOLVER, GroupResource
from common.selectors import Selector, parse_selector
from tests.adapter.rules.rules_support import load_fixture

CONFIG = load_fixture("legacy-defaults.yaml")
_CONTAINER = CONFIG.rules[0].series_query
_OTHER = CONFIG.rules[3].series_query


def _series(name: str, **labels: str) -> dict[str, str]:
    return {"__name__": name, **labels}


def _app(pod: str) -> dict[str, str]:
    return {"namespace": "default", "pod": pod, "container": "app"}


# what Prometheus would answer to the two distinct seriesQueries
SERIES = {
    _CONTAINER: [
        _series(
            "container_cpu_usage_seconds_total", namespace="default", pod="web-1", container="app"
        ),
        _series(
            "container_cpu_usage_seconds_total", namespace="default", pod="web-2", container="app"
        ),
        _series("container_network_receive_bytes_total", namespace="default", pod="web-1"),
        _series(
            "container_memory_working_set_bytes", namespace="default", pod="web-1", container="app"
        ),
    ],
    _OTHER: [
        _series("http_requests_total", namespace="default", pod="web-1", service="web"),
        _series("http_requests_total", namespace="default", pod="web-2", service="web"),
        _series("process_cpu_seconds_total", namespace="default", pod="web-1"),
        _series("queue_length", namespace="default", service="api"),
        _series("kube_node_info", namespace="kube-system", node="n1"),
    ],
}
INDEX = build_index(CONFIG, SERIES, resolver=STATIC_RESOLVER)
PODS, SERVICES = GroupResource("", "pods"), GroupResource("", "services")
NAMESPACES, NODES = GroupResource("", "namespaces"), GroupResource("", "nodes")


@dataclass(frozen=True)
class Case:
    resource: GroupResource
    metric: str
    names: tuple[str, ...]
    want: str
    namespace: str | None = "default"
    selector: Selector = field(default_factory=Selector)


CASES = [
    pytest.param(
        Case(
            PODS,
            "cpu_usage",
            ("web-1", "web-2"),
            'sum(rate(container_cpu_usage_seconds_total{namespace="default",pod=~"web-1|web-2",'
            'container!="POD"}[5m])) by (pod)',
        ),
        id="rule1-container-seconds-counter-two-pods",
    ),
    pytest.param(
        Case(
            PODS,
            "network_receive_bytes",
            ("web-1",),
            'sum(rate(container_network_receive_bytes_total{namespace="default",pod="web-1",'
            'container!="POD"}[5m])) by (pod)',
        ),
        id="rule2-container-counter-one-pod",
    ),
    pytest.param(
        Case(
            PODS,
            "memory_working_set_bytes",
            ("web-1",),
            'sum(container_memory_working_set_bytes{namespace="default",pod="web-1",'
            'container!="POD"}) by (pod)',
        ),
        id="rule3-container-gauge",
    ),
    pytest.param(
        Case(
            SERVICES,
            "queue_length",
            ("api",),
            'sum(queue_length{namespace="default",service="api"}) by (service)',
        ),
        id="rule4-gauge-for-a-service",
    ),
    pytest.param(
        Case(
            NAMESPACES,
            "queue_length",
            ("default",),
            'sum(queue_length{namespace="default"}) by (namespace)',
            namespace=None,
        ),
        id="rule4-gauge-for-the-namespace-object",
    ),
    pytest.param(
        Case(
            PODS,
            "http_requests",
            ("web-2", "web-1"),
            'sum(rate(http_requests_total{namespace="default",pod=~"web-1|web-2"}[5m])) by (pod)',
        ),
        id="rule5-counter-names-sorted",
    ),
    pytest.param(
        Case(
            PODS,
            "http_requests",
            ("web-1",),
            'sum(rate(http_requests_total{code=~"200|201",method="GET",namespace="default",'
            'pod="web-1"}[5m])) by (pod)',
            selector=parse_selector("method=GET,code in (201,200)"),
        ),
        id="rule5-with-metric-selector-sorted-by-key",
    ),
    pytest.param(
        Case(
            PODS,
            "process_cpu",
            ("web-1",),
            'sum(rate(process_cpu_seconds_total{namespace="default",pod="web-1"}[5m])) by (pod)',
        ),
        id="rule6-seconds-counter",
    ),
    pytest.param(
        Case(
            NODES,
            "kube_node_info",
            ("n1",),
            'sum(kube_node_info{node="n1"}) by (node)',
            namespace=None,
        ),
        id="rule4-cluster-scoped-node",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_legacy_rule_renders_documented_promql(case: Case) -> None:
    source = INDEX.find_custom(case.resource, case.metric)
    assert source is not None, f"{case.resource}/{case.metric} not discovered"
    info = STATIC_RESOLVER.resolve(case.resource.resource, case.resource.group)
    assert info is not None
    query = build_custom_query(
        source,
        resource=info,
        namespace=case.namespace,
        names=case.names,
        metric_selector=case.selector,
        resolver=STATIC_RESOLVER,
    )
    assert query.promql == case.want
    assert query.resource_label == case.resource.resource.removesuffix("s")


def test_legacy_rules_discover_the_expected_metrics() -> None:
    listed = {(str(m.group_resource), m.metric, m.namespaced) for m in INDEX.custom_metrics()}
    assert listed == {
        ("pods", "cpu_usage", True),
        ("namespaces", "cpu_usage", False),
        ("pods", "network_receive_bytes", True),
        ("namespaces", "network_receive_bytes", False),
        ("pods", "memory_working_set_bytes", True),
        ("namespaces", "memory_working_set_bytes", False),
        ("pods", "http_requests", True),
        ("services", "http_requests", True),
        ("namespaces", "http_requests", False),
        ("pods", "process_cpu", True),
        ("namespaces", "process_cpu", False),
        ("services", "queue_length", True),
        ("namespaces", "queue_length", False),
        ("nodes", "kube_node_info", False),
        ("namespaces", "kube_node_info", False),
    }


@pytest.mark.parametrize(
    ("metric", "rule_position", "series"),
    [
        pytest.param("cpu_usage", 0, "container_cpu_usage_seconds_total", id="seconds-rule-1"),
        pytest.param(
            "network_receive_bytes", 1, "container_network_receive_bytes_total", id="rule-2"
        ),
        pytest.param(
            "memory_working_set_bytes", 2, "container_memory_working_set_bytes", id="rule-3"
        ),
        pytest.param("http_requests", 4, "http_requests_total", id="rule-5"),
        pytest.param("process_cpu", 5, "process_cpu_seconds_total", id="rule-6"),
    ],
)
def test_each_series_is_served_by_the_rule_the_filters_select(
    metric: str, rule_position: int, series: str
) -> None:
    source = INDEX.find_custom(PODS, metric)
    assert source is not None
    assert (source.rule.position, source.series) == (rule_position, series)
