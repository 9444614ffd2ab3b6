"""The adapter behind the Prometheus fault proxy: each fault kind on its own, then recovery.

Errors and hangs are a 503 Status within the adapter's timeout, never a 500 or a hang; data
faults follow the documented NaN policy (docs/adapter.md); a partial answer (with `warnings`)
is a 503 unless its backend accepts warnings; every request after the fault is cleared is
answered from Prometheus again.
"""

from __future__ import annotations

import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from adapter.server.app import build_app
from sandbox.promfaults import PromFaultPlan, PromFaultProxy
from tests.adapter.fakes import FakeLister
from tests.adapter.stack import make_stack, series
from tests.support.prometheus import remote_write

pytestmark = pytest.mark.prometheus

POD = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/web-1/gauge_value"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_depth"
TIMEOUT = 1.0  # the adapter's --prometheus-timeout in these tests


def data():
    """The series, stamped when the test writes them (module-level stamps go stale when the
    test runs more than Prometheus' 5-minute lookback after collection)."""
    return [
        series("gauge_value", {"namespace": "default", "pod": "web-1"}, [1.5]),
        series("queue_depth", {"queue": "orders"}, [42]),
        series("queue_depth", {"queue": "emails"}, [7]),
    ]


OBJECTS = {("pods", "default"): {"web-1": {"app": "web"}}}


@pytest.fixture
async def proxied(prometheus, aiohttp_client):
    await remote_write(prometheus.url, data())
    async with PromFaultProxy(upstream=prometheus.url) as proxy:
        stack = await make_stack(proxy.url, lister=FakeLister(OBJECTS), timeout=TIMEOUT)
        await stack.discover()
        client = await aiohttp_client(build_app(stack.provider, registry=stack.registry))
        try:
            yield proxy, client
        finally:
            await stack.close()


async def answer(client, path):
    started = time.monotonic()
    resp = await client.get(path)
    return resp.status, await resp.json(), time.monotonic() - started


@pytest.mark.parametrize(
    ("kind", "extra", "pod_status", "external_names"),
    [
        ("error", {"error_code": 500}, 503, None),
        ("error", {"error_code": 503}, 503, None),
        ("hang", {"hang_seconds": 5}, 503, None),
        ("latency", {"latency_seconds": 0.05}, 200, {"orders", "emails"}),
        ("empty", {}, 404, set()),
        ("nan", {}, 404, set()),
        ("inf", {}, 404, set()),
        ("partial", {}, 503, None),  # refused: a sum over part of the series is too low
    ],
    ids=["500", "503", "hang", "latency", "empty", "nan", "inf", "partial-warnings"],
)
async def test_each_prometheus_fault_then_recovery(
    proxied, kind, extra, pod_status, external_names
):
    proxy, client = proxied
    proxy.set(PromFaultPlan(seed=1, rates={kind: 1.0}, **extra))
    status, body, took = await answer(client, POD)
    assert status == pod_status, body
    assert status != 500
    assert took < TIMEOUT + 1.5  # never a hang past the adapter's timeout
    if status == 503:
        assert (body["kind"], body["reason"]) == ("Status", "ServiceUnavailable")
    status, body, took = await answer(client, EXTERNAL)
    assert took < TIMEOUT + 1.5
    if external_names is None:
        assert (status, body["code"]) == (503, 503)
    else:
        assert status == 200
        assert {i["metricLabels"]["queue"] for i in body["items"]} == external_names
    assert proxy.injected[kind] >= 1

    proxy.set(PromFaultPlan())
    status, body, _ = await answer(client, POD)
    assert (status, body["items"][0]["value"]) == (200, "1500m")
    status, body, _ = await answer(client, EXTERNAL)
    assert {i["metricLabels"]["queue"] for i in body["items"]} == {"orders", "emails"}


async def test_a_seed_replays_the_same_faults(proxied):
    proxy, client = proxied

    async def statuses() -> list[int]:
        proxy.set(PromFaultPlan(seed=9, rates={"error": 0.5}))
        return [(await client.get(EXTERNAL)).status for _ in range(20)]

    first = await statuses()
    assert set(first) == {200, 503}
    assert await statuses() == first


@pytest.fixture
async def accepting(prometheus, aiohttp_client):
    """As `proxied`, with a backend that accepts answers with warnings."""
    await remote_write(prometheus.url, data())
    async with PromFaultProxy(upstream=prometheus.url) as proxy:
        stack = await make_stack(
            proxy.url, lister=FakeLister(OBJECTS), timeout=TIMEOUT, warnings="accept"
        )
        await stack.discover()
        client = await aiohttp_client(build_app(stack.provider, registry=stack.registry))
        try:
            yield proxy, client
        finally:
            await stack.close()


async def counted(client) -> tuple[float, float]:
    """(answers with warnings, answers refused as partial) of the query endpoint, read from the
    adapter's /metrics."""
    text = await (await client.get("/metrics")).text()
    found = {"warnings": 0.0, "partial": 0.0}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "promscaler_adapter_prometheus_warnings_total":
                found["warnings"] += s.value if s.labels["endpoint"] == "query" else 0
            if s.name == "promscaler_adapter_prometheus_errors_total":
                partial = s.labels["kind"] == "partial" and s.labels["endpoint"] == "query"
                found["partial"] += s.value if partial else 0
    return found["warnings"], found["partial"]


async def test_a_partial_answer_is_a_503_quoting_the_warning_and_counted(proxied):
    proxy, client = proxied
    status, _, _ = await answer(client, EXTERNAL)
    assert status == 200  # healthy answers are untouched and count nothing
    assert await counted(client) == (0, 0)
    proxy.set(PromFaultPlan(seed=1, rates={"partial": 1.0}))
    status, body, _ = await answer(client, POD)
    assert (status, body["kind"], body["reason"], body["code"]) == (
        503,
        "Status",
        "ServiceUnavailable",
        503,
    )
    assert body["message"] == (
        "unable to fetch metrics: the metrics backend's answer was partial: "
        "'partial response: a store did not answer'"
    )
    assert await counted(client) == (1, 1)  # among the backend's failures too


async def test_a_backend_that_accepts_warnings_serves_the_partial_answer(accepting):
    proxy, client = accepting
    proxy.set(PromFaultPlan(seed=1, rates={"partial": 1.0}))
    status, body, _ = await answer(client, EXTERNAL)
    assert status == 200, body
    # what the backend gave: Prometheus sorts the series, the proxy keeps every other one
    assert {i["metricLabels"]["queue"] for i in body["items"]} == {"emails"}
    assert await counted(client) == (1, 0)  # counted all the same, not refused


def test_a_bad_plan_names_the_problem():
    with pytest.raises(ValueError, match="unknown fault kind 'nope'"):
        PromFaultPlan(rates={"nope": 0.1})
    with pytest.raises(ValueError, match="at most 1 together"):
        PromFaultPlan(rates={"error": 0.7, "hang": 0.7})
