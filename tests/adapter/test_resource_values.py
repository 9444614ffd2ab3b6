"""The pure parts of metrics.k8s.io: quantities, durations, assembly and query rendering."""

from __future__ import annotations

from decimal import Decimal

import pytest

from adapter.errors import StatusError
from adapter.prometheus import Sample
from adapter.provider.resource_values import (
    cpu_quantity,
    go_duration,
    group_samples,
    memory_quantity,
    pod_metrics,
)
from adapter.rules.config import load_rules
from adapter.rules.resource_queries import build_node_query, build_pod_query
from adapter.rules.resources import STATIC_RESOLVER


@pytest.mark.parametrize(
    ("cores", "want"),
    [("0", "0"), ("0.0009", "0"), ("0.0015", "1m"), ("0.25", "250m"), ("2", "2"), ("1.5", "1500m")],
)
def test_cpu_is_truncated_millicores(cores, want):
    assert cpu_quantity(Decimal(cores)) == want


@pytest.mark.parametrize(
    ("size", "want"),
    [
        ("0", "0"),
        ("512", "512"),
        ("1024", "1Ki"),
        ("1536", "1536"),
        ("2.5", "2500m"),
        (str(64 * 2**20), "64Mi"),
        (str(3 * 2**30), "3Gi"),
        ("1000000000", "1000000000"),
    ],
)
def test_memory_is_a_binary_si_quantity(size, want):
    assert memory_quantity(Decimal(size)) == want


@pytest.mark.parametrize(
    ("seconds", "want"), [(0, "0s"), (30, "30s"), (60, "1m0s"), (180, "3m0s"), (3720, "1h2m0s")]
)
def test_window_is_a_go_duration(seconds, want):
    assert go_duration(seconds) == want


def sample(pod, container, value, at=100.0):
    return Sample({"pod": pod, "container": container}, at, Decimal(value))


def test_nan_and_negative_are_zero_and_infinity_dropped():
    grouped = group_samples(
        [sample("a", "x", "NaN"), sample("a", "y", "-3"), sample("a", "z", "Infinity")],
        object_label="pod",
        container_label="container",
    )
    assert grouped == {"a": {"x": (Decimal(0), 100.0), "y": (Decimal(0), 100.0)}}


def test_pod_takes_the_earliest_timestamp_and_needs_both_resources():
    cpu = {"x": (Decimal("0.5"), 200.0)}
    memory = {"x": (Decimal(1024), 150.0)}
    metric = pod_metrics("ns", "a", cpu, memory, window_seconds=60)
    assert metric is not None
    assert metric.timestamp.timestamp() == 150.0
    assert pod_metrics("ns", "a", cpu, None, window_seconds=60) is None


RULES = load_rules(
    """
resourceRules:
  cpu:
    containerQuery: 'sum(c{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
    nodeQuery: 'sum(n{<<.LabelMatchers>>,id="/"}) by (<<.GroupBy>>)'
    resources: {template: '<<.Resource>>'}
    containerLabel: container
  memory:
    containerQuery: 'sum(m{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
    nodeQuery: 'sum(<<index .LabelValuesByName "node">>)'
    resources: {overrides: {pod: {resource: pod}}}
"""
).resource_rules
assert RULES is not None


def test_queries_render_matchers_and_group_by():
    q = build_pod_query(RULES.cpu, namespace='a"b', names=["p.1", "p2"], resolver=STATIC_RESOLVER)
    assert q.promql == r'sum(c{namespace="a\"b",pod=~"p\\.1|p2"}) by (pod,container)'
    node = build_node_query(RULES.cpu, names=["n1"], resolver=STATIC_RESOLVER)
    assert node.promql == 'sum(n{node="n1",id="/"}) by (node)'


def test_many_names_give_a_bounded_query_and_a_filter():
    names = [f"pod-{i:04d}" for i in range(100)]
    q = build_pod_query(
        RULES.cpu, namespace="ns", names=names, resolver=STATIC_RESOLVER, max_names_bytes=100
    )
    assert q.promql == 'sum(c{namespace="ns",pod!=""}) by (pod,container)'
    assert q.names_filter == frozenset(names)


def test_a_rule_without_a_namespace_label_fails_with_a_status():
    with pytest.raises(StatusError) as err:
        build_pod_query(RULES.memory, namespace="ns", names=["p"], resolver=STATIC_RESOLVER)
    assert "no label to namespaces" in err.value.message


@pytest.mark.parametrize(
    ("names", "want"),
    [
        pytest.param(["a", "b"], 'pod!=""', id="several-pods"),
        pytest.param(["a"], 'pod="a"', id="one-pod-stays-named"),
    ],
)
def test_a_whole_namespace_is_matched_without_names(names, want):
    q = build_pod_query(
        RULES.cpu, namespace="ns", names=names, resolver=STATIC_RESOLVER, whole_namespace=True
    )
    assert q.promql == f'sum(c{{namespace="ns",{want}}}) by (pod,container)'
    assert q.names_filter is None
