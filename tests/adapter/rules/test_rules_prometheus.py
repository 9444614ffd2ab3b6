"""Rendered queries against a real Prometheus: they parse, and select exactly what was asked.

Discovery reads the real `/api/v1/series` answer for each seriesQuery of the legacy rules.
"""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from typing import cast

import pytest

from adapter.rules import MetricSource, build_custom_query, build_index, load_rules
from adapter.rules.resources import STATIC_RESOLVER, GroupResource
from common.selectors import Selector, parse_selector
from tests.adapter.rules.rules_support import load_fixture, resource
from tests.support.prometheus import PrometheusServer, remote_write

pytestmark = pytest.mark.prometheus

NASTY_NAMESPACE = 'team "a"\\b}'
WANTED = ["web.1", 'quote"d', "back\\slash", "brace}{", "pipe|x", "new\nline", "ünï-☃", "a|b"]
DECOYS = ["webx1", "a", "b", "quote", "pipe"]  # an unescaped `web.1` or `a|b` would match these
PODS = resource("pods")


def _series_query(url: str, match: str, *, start: float) -> list[dict[str, str]]:
    params = urllib.parse.urlencode({"match[]": match, "start": f"{start:.3f}"})
    with urllib.request.urlopen(f"{url}/api/v1/series?{params}", timeout=10) as resp:
        payload = json.load(resp)
    assert payload["status"] == "success"
    data: list[dict[str, str]] = payload["data"]
    return data


async def test_hostile_names_select_exactly_the_requested_pods(
    prometheus: PrometheusServer,
) -> None:
    now = time.time()
    series = [
        ({"__name__": "queue_items", "namespace": ns, "pod": pod}, [(now - 5, 1.0)])
        for pod in WANTED + DECOYS
        for ns in (NASTY_NAMESPACE, "other")
    ]
    await remote_write(prometheus.url, series)
    config = load_rules(
        "rules: [{seriesQuery: 'queue_items', resources: {overrides: {namespace: "
        "{resource: namespace}, pod: {resource: pod}}}, "
        "metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'}]"
    )
    query = build_custom_query(
        MetricSource(config.rules[0], "queue_items"),
        resource=PODS,
        namespace=NASTY_NAMESPACE,
        names=WANTED,
        metric_selector=Selector(),
        resolver=STATIC_RESOLVER,
    )
    result = prometheus.query(query.promql, at=now)
    assert sorted(cast(dict[str, str], item["metric"])["pod"] for item in result) == sorted(WANTED)
    assert query.promql in prometheus.queries()


async def test_legacy_rules_discover_from_real_series_and_their_queries_run(
    prometheus: PrometheusServer,
) -> None:
    now = time.time()
    counter = [(now - 345 + i * 15, float(i * 30)) for i in range(24)]  # +2/s over 6 min
    pods = {"namespace": "default", "container": "app"}
    await remote_write(
        prometheus.url,
        [
            ({"__name__": "container_cpu_usage_seconds_total", **pods, "pod": "web.1"}, counter),
            ({"__name__": "container_cpu_usage_seconds_total", **pods, "pod": "webx1"}, counter),
            (
                {
                    "__name__": "http_requests_total",
                    "namespace": "default",
                    "pod": "web.1",
                    "method": "GET",
                },
                counter,
            ),
            (
                {
                    "__name__": "http_requests_total",
                    "namespace": "default",
                    "pod": "web.1",
                    "method": "POST",
                },
                counter,
            ),
        ],
    )
    config = load_fixture("legacy-defaults.yaml")
    results = {
        query: _series_query(prometheus.url, query, start=now - 3600)
        for query in config.series_queries
    }
    index = build_index(config, results, resolver=STATIC_RESOLVER)
    metrics = {(str(m.group_resource), m.metric) for m in index.custom_metrics()}
    assert {("pods", "cpu_usage"), ("pods", "http_requests")} <= metrics
    assert ("namespaces", "http_requests") in metrics

    cases = [
        ("cpu_usage", Selector(), 2.0),
        ("http_requests", Selector(), 4.0),  # both methods summed
        ("http_requests", parse_selector("method in (GET)"), 2.0),
    ]
    for metric, selector, want in cases:
        source = index.find_custom(GroupResource("", "pods"), metric)
        assert source is not None
        query = build_custom_query(
            source,
            resource=PODS,
            namespace="default",
            names=["web.1"],
            metric_selector=selector,
            resolver=STATIC_RESOLVER,
        )
        result = prometheus.query(query.promql, at=now)
        assert [item["metric"] for item in result] == [{"pod": "web.1"}], query.promql
        value = cast(list[str], result[0]["value"])
        assert float(value[1]) == pytest.approx(want, rel=0.01)
