"""The rules `convert` writes, served by the adapter over a real Prometheus: the external
metric the Autoscaler names answers the KEDA query's value, and an empty result reads as 0
when the trigger ignored null values (KEDA's default)."""

from __future__ import annotations

import pytest
import yaml

from adapter.server.app import build_app
from autoscaler.convert import convert
from tests.adapter.fakes import FakeLister
from tests.adapter.stack import make_stack, series
from tests.convert import examples as ex
from tests.convert.keda_docs import DOCS
from tests.support.prometheus import remote_write

pytestmark = pytest.mark.prometheus

EM = "/apis/external.metrics.k8s.io/v1beta1"


def rules_of(*texts: str) -> tuple[str, list[str]]:
    """The rule file for the ScaledObjects, and their metrics' names in order."""
    conversions = [convert(ex.load(t)) for t in texts]
    rules = [r for c in conversions for r in c.external_rules]
    names = [
        m["external"]["metric"]["name"]
        for c in conversions
        for m in c.autoscaler["spec"]["metrics"]
        if m["type"] == "External"
    ]
    return yaml.safe_dump({"externalRules": rules}), names


async def test_converted_rules_serve_the_keda_queries(aiohttp_client, prometheus):
    await remote_write(
        prometheus.url,
        [
            series("rabbitmq_queue_messages_ready", {"queue": "jobs"}, [30, 42]),
            series("rabbitmq_queue_messages_ready", {"queue": "other"}, [1000]),
            # the series exists, but the query's filter leaves nothing: KEDA reads 0
            series("api_latency_seconds", {"quantile": "0.5"}, [0.2]),
            series("api_inflight_requests", {"pod": "a"}, [7]),
            series("api_inflight_requests", {"pod": "b"}, [5]),
        ],
    )
    text, names = rules_of(ex.KEDA_SPEC_ALL_FIELDS, ex.KEDA_IDLE_AND_MODIFIERS)
    assert names == ["worker-queue", "api-formula"]
    stack = await make_stack(prometheus.url, lister=FakeLister(), rules=text)
    try:
        await stack.discover()
        client = await aiohttp_client(build_app(stack.provider, registry=stack.registry))
        listed = await (await client.get(EM)).json()
        assert sorted(r["name"] for r in listed["resources"]) == sorted(names)
        # the formula (trig_one + trig_two) / 2 over an empty result (0) and 7 + 5
        want = {"worker-queue": "42", "api-formula": "6"}
        for name, value in want.items():
            resp = await client.get(f"{EM}/namespaces/jobs/{name}")
            assert resp.status == 200, await resp.text()
            (item,) = (await resp.json())["items"]
            assert (item["metricName"], item["value"]) == (name, value)
    finally:
        await stack.close()
    assert 'sum(rabbitmq_queue_messages_ready{queue="jobs"})' in " ".join(prometheus.queries())


async def test_rules_that_read_no_series_are_served_while_up_exists(aiohttp_client, prometheus):
    """The cron page's idle metric (vector(0)) and Amazon Managed Prometheus' example query
    (vector(100)) are listed by the series `up` and answer their constant."""
    await remote_write(prometheus.url, [series("up", {"job": "node"}, [1])])
    cron = convert(yaml.safe_load(DOCS["cron-page"]))
    amazon = convert(yaml.safe_load(DOCS["prometheus-amazon-managed"]))
    text = yaml.safe_dump({"externalRules": [*cron.external_rules, *amazon.external_rules]})
    stack = await make_stack(prometheus.url, lister=FakeLister(), rules=text)
    try:
        await stack.discover()
        client = await aiohttp_client(build_app(stack.provider, registry=stack.registry))
        want = {"cron-scaledobject-idle": "0", "keda-so-query": "100"}
        listed = await (await client.get(EM)).json()
        assert sorted(r["name"] for r in listed["resources"]) == sorted(want)
        for name, value in want.items():
            resp = await client.get(f"{EM}/namespaces/default/{name}")
            assert resp.status == 200, await resp.text()
            (item,) = (await resp.json())["items"]
            assert item["value"] == value
    finally:
        await stack.close()
