"""The six legacy default rules (config-gen, R=5m) send exactly the documented PromQL, as seen
by a real Prometheus in its query log, for requests through the whole adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter.server.app import build_app
from tests.adapter.fakes import FakeLister
from tests.adapter.stack import make_stack, series
from tests.support.prometheus import remote_write

pytestmark = pytest.mark.prometheus

RULES = (Path(__file__).parent / "rules" / "data" / "legacy-defaults.yaml").read_text()
POD = {"namespace": "default", "pod": "web-1", "container": "app"}
POD2 = {"namespace": "default", "pod": "web-2", "container": "app"}


def data() -> list:
    """The series, ending a few seconds before now: built when written, never at import (a
    suite running for minutes would otherwise age them out of rate windows and lookback)."""
    return [
        series("container_cpu_usage_seconds_total", POD, [0, 15, 30]),
        series("container_cpu_usage_seconds_total", POD2, [0, 30, 60]),
        series("container_network_receive_bytes_total", POD, [0, 150, 300]),
        series("container_memory_working_set_bytes", POD, [1000, 2000]),
        series("queue_length", {"namespace": "default", "service": "api"}, [5]),
        series("http_requests_total", {"namespace": "default", "pod": "web-1"}, [0, 15, 30]),
        series("http_requests_total", {"namespace": "default", "pod": "web-2"}, [0, 15, 30]),
        series("process_cpu_seconds_total", {"namespace": "default", "pod": "web-1"}, [0, 1, 2]),
    ]


OBJECTS = {("pods", "default"): {"web-1": {"app": "web"}, "web-2": {"app": "web"}}}
CM = "/apis/custom.metrics.k8s.io/v1beta2"

CASES = [
    pytest.param(
        f"{CM}/namespaces/default/pods/*/cpu_usage?labelSelector=app%3Dweb",
        'sum(rate(container_cpu_usage_seconds_total{namespace="default",pod=~"web-1|web-2",'
        'container!="POD"}[5m])) by (pod)',
        id="rule1-container-seconds-counter",
    ),
    pytest.param(
        f"{CM}/namespaces/default/pods/web-1/network_receive_bytes",
        'sum(rate(container_network_receive_bytes_total{namespace="default",pod="web-1",'
        'container!="POD"}[5m])) by (pod)',
        id="rule2-container-counter",
    ),
    pytest.param(
        f"{CM}/namespaces/default/pods/web-1/memory_working_set_bytes",
        'sum(container_memory_working_set_bytes{namespace="default",pod="web-1",'
        'container!="POD"}) by (pod)',
        id="rule3-container-gauge",
    ),
    pytest.param(
        f"{CM}/namespaces/default/services/api/queue_length",
        'sum(queue_length{namespace="default",service="api"}) by (service)',
        id="rule4-gauge-by-template",
    ),
    pytest.param(
        f"{CM}/namespaces/default/metrics/queue_length",
        'sum(queue_length{namespace="default"}) by (namespace)',
        id="rule4-namespace-metric",
    ),
    pytest.param(
        f"{CM}/namespaces/default/pods/*/http_requests",
        'sum(rate(http_requests_total{namespace="default",pod=~"web-1|web-2"}[5m])) by (pod)',
        id="rule5-counter",
    ),
    pytest.param(
        f"{CM}/namespaces/default/pods/web-1/process_cpu",
        'sum(rate(process_cpu_seconds_total{namespace="default",pod="web-1"}[5m])) by (pod)',
        id="rule6-seconds-counter",
    ),
]


@pytest.fixture
async def client(aiohttp_client, prometheus):
    await remote_write(prometheus.url, data())
    stack = await make_stack(prometheus.url, lister=FakeLister(OBJECTS), rules=RULES)
    await stack.discover()
    yield await aiohttp_client(build_app(stack.provider))
    await stack.close()


async def test_legacy_rules_send_the_documented_promql(client, prometheus):
    for case in CASES:
        path, promql = case.values
        resp = await client.get(path)
        assert resp.status == 200, (case.id, await resp.text())
        body = await resp.json()
        assert body["items"], case.id
        assert prometheus.queries()[-1] == promql, case.id
