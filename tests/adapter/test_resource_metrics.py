"""metrics.k8s.io from resourceRules against a real Prometheus fed by remote write."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping

import pytest
from prometheus_client import CollectorRegistry

from adapter.errors import KubeUnavailable
from adapter.prometheus import PrometheusClient, PrometheusOptions
from adapter.provider.cache import ResultCache
from adapter.provider.engine import SingleBackend
from adapter.provider.resource_provider import ResourceMetricsProvider
from adapter.rules.config import load_rules
from adapter.rules.resources import STATIC_RESOLVER, ResourceInfo
from adapter.server.app import build_app
from common.selectors import Selector
from tests.adapter.fakes import FakeProvider
from tests.adapter.stack import series
from tests.support.prometheus import remote_write

pytestmark = pytest.mark.prometheus

GV = "/apis/metrics.k8s.io/v1beta1"
GV1 = "/apis/metrics.k8s.io/v1"
OVERRIDES = """
    resources:
      overrides:
        namespace: {resource: namespace}
        pod: {resource: pod}
        node: {resource: node}
    containerLabel: container"""
RULES = f"""
resourceRules:
  cpu:
    containerQuery: 'sum(t_cpu{{<<.LabelMatchers>>}}) by (<<.GroupBy>>)'
    nodeQuery: 'sum(t_node_cpu{{<<.LabelMatchers>>}}) by (<<.GroupBy>>)'{OVERRIDES}
  memory:
    containerQuery: 'sum(t_mem{{<<.LabelMatchers>>}}) by (<<.GroupBy>>)'
    nodeQuery: 'sum(t_node_mem{{<<.LabelMatchers>>}}) by (<<.GroupBy>>)'{OVERRIDES}
  window: 2m
"""


def pod(name, container, ns="default"):
    return {"namespace": ns, "pod": name, "container": container}


def data() -> list:
    """The series, ending a few seconds before now: built when written, never at import (a
    suite running for minutes would otherwise age them out of rate windows and lookback)."""
    return [
        series("t_cpu", pod("web-1", "app"), [0.25]),
        series("t_cpu", pod("web-1", "sidecar"), [0.0015]),
        series("t_mem", pod("web-1", "app"), [64 * 2**20]),
        series("t_mem", pod("web-1", "sidecar"), [1536]),
        series("t_cpu", pod("web-2", "app"), [0.5]),  # no memory: left out
        series("t_cpu", pod("web-3", "app"), [math.nan]),  # NaN -> 0
        series("t_mem", pod("web-3", "app"), [-5]),  # negative -> 0
        series("t_mem", pod("web-3", "log"), [2048]),  # memory only: cpu 0
        series("t_cpu", pod("api-1", "app", "prod"), [2]),
        series("t_mem", pod("api-1", "app", "prod"), [10**9]),
        series("t_node_cpu", {"node": "node-a"}, [1.5]),
        series("t_node_mem", {"node": "node-a"}, [4 * 2**30]),
        series("t_node_cpu", {"node": "node-b"}, [0.75]),  # no memory: left out
    ]


PODS = {
    ("default", "web-1"): {"app": "web"},
    ("default", "web-2"): {"app": "web"},
    ("default", "web-3"): {"app": "logs"},
    ("default", "idle"): {"app": "web"},  # no samples at all
    ("prod", "api-1"): {"app": "api"},
}
NODES = {("", "node-a"): {"zone": "a"}, ("", "node-b"): {"zone": "b"}, ("", "node-c"): {}}


class MetaLister:
    """Objects by (namespace, name) -> labels, per resource; counts calls."""

    def __init__(self) -> None:
        self.found = {"pods": PODS, "nodes": NODES}
        self.calls = 0

    async def objects(
        self, info: ResourceInfo, *, namespace: str | None, selector: Selector
    ) -> list[tuple[str, str, Mapping[str, str]]]:
        self.calls += 1
        table = self.found[info.group_resource.resource]
        return sorted(
            (ns, name, labels)
            for (ns, name), labels in table.items()
            if (namespace is None or ns == namespace) and selector.matches(labels)
        )


def make_app(url: str, rules: str = RULES, *, lister=None, timeout: float = 2.0):
    registry = CollectorRegistry()
    client = PrometheusClient(PrometheusOptions(url=url, timeout=timeout))
    resources = ResourceMetricsProvider(
        rules=load_rules(rules).resource_rules,
        backends=SingleBackend(client),
        lister=lister or MetaLister(),
        resolver=STATIC_RESOLVER,
        cache=ResultCache(ttl=0),
        registry=registry,
    )
    app = build_app(FakeProvider(), resource_provider=resources, registry=registry)
    return app, client


@pytest.fixture
async def client(aiohttp_client, prometheus):
    await remote_write(prometheus.url, data())
    app, prom_client = make_app(prometheus.url)
    yield await aiohttp_client(app)
    await prom_client.close()


async def get(client, path, code=200):
    resp = await client.get(path)
    assert resp.status == code, await resp.text()
    return await resp.json()


def usage(body):
    """{(namespace, pod): {container: (cpu, memory)}} of a PodMetricsList."""
    return {
        (i["metadata"]["namespace"], i["metadata"]["name"]): {
            c["name"]: (c["usage"]["cpu"], c["usage"]["memory"]) for c in i["containers"]
        }
        for i in body["items"]
    }


WEB_1 = {"app": ("250m", "64Mi"), "sidecar": ("1m", "1536")}
WEB_3 = {"app": ("0", "0"), "log": ("0", "2Ki")}


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param(
            f"{GV}/namespaces/default/pods",
            {("default", "web-1"): WEB_1, ("default", "web-3"): WEB_3},
            id="namespace-without-missing-pods",
        ),
        pytest.param(
            f"{GV}/namespaces/default/pods?labelSelector=app%3Dweb",
            {("default", "web-1"): WEB_1},
            id="label-selector",
        ),
        pytest.param(
            f"{GV}/pods",
            {
                ("default", "web-1"): WEB_1,
                ("default", "web-3"): WEB_3,
                ("prod", "api-1"): {"app": ("2", "1000000000")},
            },
            id="all-namespaces",
        ),
        pytest.param(
            f"{GV}/pods?fieldSelector=metadata.namespace%3Dprod",
            {("prod", "api-1"): {"app": ("2", "1000000000")}},
            id="field-selector",
        ),
        pytest.param(f"{GV}/namespaces/empty/pods", {}, id="empty-namespace"),
    ],
)
async def test_pod_metrics_lists(client, path, want):
    body = await get(client, path)
    assert (body["kind"], body["apiVersion"]) == ("PodMetricsList", "metrics.k8s.io/v1beta1")
    assert usage(body) == want
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in body["items"]] == sorted(
        want
    )


async def test_pod_metrics_item_shape(client):
    body = await get(client, f"{GV}/namespaces/default/pods/web-1")
    assert body["kind"] == "PodMetrics"
    assert body["metadata"]["labels"] == {"app": "web"}
    assert body["window"] == "2m0s"
    stamp = time.mktime(time.strptime(body["timestamp"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert abs(stamp - time.time()) < 30
    assert body["containers"] == [
        {"name": "app", "usage": {"cpu": "250m", "memory": "64Mi"}},
        {"name": "sidecar", "usage": {"cpu": "1m", "memory": "1536"}},
    ]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param(f"{GV}/namespaces/default/pods/nope", 'pods "nope" not found', id="no-pod"),
        pytest.param(
            f"{GV}/namespaces/default/pods/web-2",
            'podmetrics.metrics.k8s.io "default/web-2" not found',
            id="pod-without-samples",
        ),
        pytest.param(f"{GV}/nodes/nope", 'nodes "nope" not found', id="no-node"),
        pytest.param(
            f"{GV}/nodes/node-b",
            'nodemetrics.metrics.k8s.io "node-b" not found',
            id="node-without-memory",
        ),
    ],
)
async def test_missing_objects_are_404_statuses(client, path, message):
    body = await get(client, path, 404)
    assert (body["kind"], body["reason"], body["code"]) == ("Status", "NotFound", 404)
    assert body["message"] == message


async def test_node_metrics(client):
    body = await get(client, f"{GV}/nodes")
    assert body["kind"] == "NodeMetricsList"
    assert [(i["metadata"]["name"], i["usage"]) for i in body["items"]] == [
        ("node-a", {"cpu": "1500m", "memory": "4Gi"})
    ]
    one = await get(client, f"{GV}/nodes/node-a")
    assert (one["kind"], one["metadata"]["labels"], one["window"]) == (
        "NodeMetrics",
        {"zone": "a"},
        "2m0s",
    )
    assert (await get(client, f"{GV}/nodes?labelSelector=zone%3Db"))["items"] == []


async def test_discovery_and_openapi_name_the_group(client):
    groups = await get(client, "/apis")
    assert "metrics.k8s.io" in [g["name"] for g in groups["groups"]]
    resources = await get(client, GV)
    listed = [(r["name"], r["kind"], r["namespaced"], r["verbs"]) for r in resources["resources"]]
    assert listed == [
        ("nodes", "NodeMetrics", False, ["get", "list"]),
        ("pods", "PodMetrics", True, ["get", "list"]),
    ]
    group = await get(client, "/apis/metrics.k8s.io")
    # v1 (GA in Kubernetes 1.37, KEP-5207) first and preferred, v1beta1 still served
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    assert group["preferredVersion"] == {"groupVersion": "metrics.k8s.io/v1", "version": "v1"}
    listed_groups = {g["name"]: g for g in groups["groups"]}
    assert listed_groups["metrics.k8s.io"]["versions"] == group["versions"]
    v2 = await get(client, "/openapi/v2")
    for gv in (GV, GV1):
        assert f"{gv}/namespaces/{{namespace}}/pods" in v2["paths"]
    assert v2["paths"][f"{GV1}/nodes"]["get"]["operationId"] == "listMetricsV1NodeMetrics"
    index = await get(client, "/openapi/v3")
    for gv in (GV, GV1):
        url = index["paths"][gv.removeprefix("/")]["serverRelativeURL"]
        assert f"{gv}/nodes" in (await get(client, url))["paths"]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("", id="resource-list"),
        pytest.param("/nodes", id="node-list"),
        pytest.param("/nodes/node-a", id="node"),
        pytest.param("/pods", id="pod-list-all-namespaces"),
        pytest.param("/namespaces/default/pods?labelSelector=app%3Dweb", id="pod-list"),
        pytest.param("/namespaces/default/pods/web-1", id="pod"),
    ],
)
async def test_v1_serves_what_v1beta1_serves_under_its_own_version(client, path):
    # upstream's consumers take v1 when it is served (pkg/controller/podautoscaler/metrics/
    # resource_client.go, "prefers v1 when both are served"): its answers must be v1beta1's
    # with only the version changed (the types are identical, KEP-5207)
    v1, v1beta1 = await get(client, GV1 + path), await get(client, GV + path)
    for body, version in ((v1, "v1"), (v1beta1, "v1beta1")):
        key = "groupVersion" if body["kind"] == "APIResourceList" else "apiVersion"
        assert body[key] == f"metrics.k8s.io/{version}"
        body[key] = "-"
        for item in body.get("items", [body]):
            item.get("metadata", {}).pop("creationTimestamp", None)  # the time of each answer
    assert v1 == v1beta1


@pytest.mark.parametrize(
    ("method", "path", "code"),
    [
        pytest.param("GET", f"{GV}/pods?watch=true", 405, id="watch"),
        pytest.param("POST", f"{GV}/pods", 405, id="post"),
        pytest.param("GET", f"{GV}/pods?labelSelector=a%20in", 400, id="bad-selector"),
        pytest.param("GET", f"{GV}/pods?fieldSelector=spec.nodeName%3Dx", 400, id="field"),
        pytest.param("GET", f"{GV}/deployments", 404, id="unknown-resource"),
        pytest.param("GET", "/apis/metrics.k8s.io/v2", 404, id="unknown-version"),
    ],
)
async def test_bad_requests_get_statuses(client, method, path, code):
    resp = await client.request(method, path)
    body = await resp.json()
    assert (resp.status, body["kind"], body["code"]) == (code, "Status", code)


@pytest.mark.parametrize(
    ("query", "want"),
    [
        pytest.param(
            "",
            [  # every pod of each namespace: no name alternation to match
                'sum(t_cpu{namespace="default",pod!=""}) by (pod,container)',
                'sum(t_mem{namespace="default",pod!=""}) by (pod,container)',
                'sum(t_cpu{namespace="prod",pod="api-1"}) by (pod,container)',
                'sum(t_mem{namespace="prod",pod="api-1"}) by (pod,container)',
            ],
            id="whole-namespaces",
        ),
        pytest.param(
            "?labelSelector=app%21%3Dapi",
            [
                'sum(t_cpu{namespace="default",pod=~"idle|web-1|web-2|web-3"}) by (pod,container)',
                'sum(t_mem{namespace="default",pod=~"idle|web-1|web-2|web-3"}) by (pod,container)',
            ],
            id="selected-pods-by-name",
        ),
    ],
)
async def test_one_query_per_namespace_and_resource(client, prometheus, query, want):
    body = await get(client, f"{GV}/pods{query}")
    assert len(body["items"]) == 3 if not query else 2
    sent = [q for q in prometheus.queries() if "t_cpu" in q or "t_mem" in q]
    assert sorted(sent) == sorted(want)


async def test_prometheus_stopped_is_a_503_status(client, prometheus):
    prometheus.stop()
    for path in (f"{GV}/namespaces/default/pods", f"{GV}/nodes/node-a"):
        body = await get(client, path, 503)
        assert (body["kind"], body["reason"]) == ("Status", "ServiceUnavailable")


async def test_without_resource_rules_the_group_is_not_served(aiohttp_client, prometheus):
    app, prom_client = make_app(prometheus.url, rules="rules: []\n")
    try:
        client = await aiohttp_client(app)
        groups = await get(client, "/apis")
        assert "metrics.k8s.io" not in [g["name"] for g in groups["groups"]]
        assert (await get(client, f"{GV}/pods", 404))["reason"] == "NotFound"
    finally:
        await prom_client.close()


async def test_objects_left_out_are_counted_on_metrics(client):
    await get(client, f"{GV}/namespaces/default/pods")  # web-2 and idle have no pair
    await get(client, f"{GV}/nodes")  # node-b and node-c
    text = await (await client.get("/metrics")).text()
    assert 'promscaler_adapter_resource_objects_missing_total{resource="pods"} 2.0' in text
    assert 'promscaler_adapter_resource_objects_missing_total{resource="nodes"} 2.0' in text


class DownLister(MetaLister):
    async def objects(self, info, *, namespace, selector):
        raise KubeUnavailable()


async def test_kubernetes_api_gone_is_a_503_status(aiohttp_client, prometheus):
    app, prom_client = make_app(prometheus.url, lister=DownLister())
    try:
        client = await aiohttp_client(app)
        body = await get(client, f"{GV}/pods", 503)
        assert (body["reason"], body["code"]) == ("ServiceUnavailable", 503)
    finally:
        await prom_client.close()


async def test_prometheus_hung_is_a_503_within_the_timeout(aiohttp_client):
    accepted = []

    async def hang(reader, writer):  # accepts, reads, never answers
        accepted.append(writer)
        await reader.read(1 << 16)

    server = await asyncio.start_server(hang, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    app, prom_client = make_app(f"http://127.0.0.1:{port}", timeout=0.5)
    try:
        client = await aiohttp_client(app)
        started = time.monotonic()
        body = await get(client, f"{GV}/namespaces/default/pods", 503)
        assert body["reason"] == "ServiceUnavailable"
        assert time.monotonic() - started < 3
        assert accepted, "the adapter never reached the hung Prometheus"
    finally:
        await prom_client.close()
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_field_selector_narrows_the_query(client, prometheus):
    body = await get(client, f"{GV}/pods?fieldSelector=metadata.name%3Dweb-1")
    assert [i["metadata"]["name"] for i in body["items"]] == ["web-1"]
    sent = [q for q in prometheus.queries() if "t_cpu" in q]
    assert sent == ['sum(t_cpu{namespace="default",pod="web-1"}) by (pod,container)']
