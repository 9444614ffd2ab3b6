"""The server's wire behaviour against a fake provider: routes, exact bodies, Status errors."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from aiohttp import web

from adapter.errors import PrometheusUnavailable, Unauthorized
from adapter.server.app import build_app
from tests.adapter.fakes import FakeProvider

CM1 = "/apis/custom.metrics.k8s.io/v1beta1"
CM2 = "/apis/custom.metrics.k8s.io/v1beta2"
EM = "/apis/external.metrics.k8s.io/v1beta1"


def provider() -> FakeProvider:
    return FakeProvider(
        custom={
            ("pods", "http_requests"): {"web-1": "1500m", "web-2": "2"},
            ("namespaces", "http_requests"): {"default": "3500m"},
            ("nodes", "cpu_temp"): {"node-a": "42"},
            ("deployments.apps", "queue_lag"): {"web": "7"},
        },
        external={"queue_depth": [({"queue": "orders"}, "42")]},
    )


@pytest.fixture
async def client(aiohttp_client):
    fake = provider()
    c = await aiohttp_client(build_app(fake))
    c.fake = fake
    return c


async def get(client, path, code=200):
    resp = await client.get(path)
    assert resp.status == code, await resp.text()
    return await resp.json()


async def test_named_pod_v1beta1_exact_body(client):
    body = await get(client, f"{CM1}/namespaces/default/pods/web-1/http_requests")
    assert body == {
        "kind": "MetricValueList",
        "apiVersion": "custom.metrics.k8s.io/v1beta1",
        "metadata": {},
        "items": [
            {
                "describedObject": {
                    "kind": "Pod",
                    "namespace": "default",
                    "name": "web-1",
                    "apiVersion": "v1",
                },
                "metricName": "http_requests",
                "timestamp": "2026-01-01T00:00:00Z",
                "window": 60,
                "value": "1500m",
                "selector": None,
            }
        ],
    }


async def test_named_pod_v1beta2_exact_body(client):
    body = await get(client, f"{CM2}/namespaces/default/pods/web-1/http_requests")
    assert body == {
        "kind": "MetricValueList",
        "apiVersion": "custom.metrics.k8s.io/v1beta2",
        "metadata": {},
        "items": [
            {
                "describedObject": {
                    "kind": "Pod",
                    "namespace": "default",
                    "name": "web-1",
                    "apiVersion": "v1",
                },
                "metric": {"name": "http_requests", "selector": None},
                "timestamp": "2026-01-01T00:00:00Z",
                "windowSeconds": 60,
                "value": "1500m",
            }
        ],
    }


async def test_window_is_omitted_when_unknown(aiohttp_client):
    fake = provider()
    fake.window = None
    client = await aiohttp_client(build_app(fake))
    for base, key in ((CM1, "window"), (CM2, "windowSeconds")):
        body = await get(client, f"{base}/namespaces/default/pods/web-1/http_requests")
        assert key not in body["items"][0]
    body = await get(client, f"{EM}/namespaces/default/queue_depth")
    assert "window" not in body["items"][0]


@dataclass(frozen=True)
class RouteCase:
    path: str
    method: str
    resource: str
    namespace: str | None
    name: str | None
    names: tuple[str, ...]
    kind: str
    api_version: str


ROUTES = [
    pytest.param(
        RouteCase(
            "/namespaces/default/pods/*/http_requests?labelSelector=app%3Dweb",
            "selector",
            "pods",
            "default",
            None,
            ("web-1", "web-2"),
            "Pod",
            "v1",
        ),
        id="namespaced-wildcard",
    ),
    pytest.param(
        RouteCase(
            "/namespaces/default/pod/web-2/http_requests",
            "name",
            "pods",
            "default",
            "web-2",
            ("web-2",),
            "Pod",
            "v1",
        ),
        id="singular-resource",
    ),
    pytest.param(
        RouteCase(
            "/namespaces/default/deployments.apps/web/queue_lag",
            "name",
            "deployments.apps",
            "default",
            "web",
            ("web",),
            "Deployment",
            "apps/v1",
        ),
        id="group-qualified-resource",
    ),
    pytest.param(
        RouteCase(
            "/namespaces/default/metrics/http_requests",
            "name",
            "namespaces",
            None,
            "default",
            ("default",),
            "Namespace",
            "v1",
        ),
        id="namespace-metric",
    ),
    pytest.param(
        # the same object by the cluster-scoped path shape (custom-metrics-apiserver: 400)
        RouteCase(
            "/namespaces/default/http_requests",
            "name",
            "namespaces",
            None,
            "default",
            ("default",),
            "Namespace",
            "v1",
        ),
        id="namespace-metric-as-cluster-scoped-path",
    ),
    pytest.param(
        RouteCase("/nodes/*/cpu_temp", "selector", "nodes", None, None, ("node-a",), "Node", "v1"),
        id="cluster-scoped-wildcard",
    ),
    pytest.param(
        RouteCase(
            "/nodes/node-a/cpu_temp", "name", "nodes", None, "node-a", ("node-a",), "Node", "v1"
        ),
        id="cluster-scoped-named",
    ),
]


@pytest.mark.parametrize("base", [CM1, CM2])
@pytest.mark.parametrize("case", ROUTES)
async def test_custom_routes(client, base, case: RouteCase):
    body = await get(client, base + case.path)
    call = client.fake.calls[-1]
    assert (call.method, call.resource, call.namespace, call.name) == (
        case.method,
        case.resource,
        case.namespace,
        case.name,
    )
    assert [i["describedObject"]["name"] for i in body["items"]] == list(case.names)
    for item in body["items"]:
        ref = item["describedObject"]
        assert (ref["kind"], ref["apiVersion"]) == (case.kind, case.api_version)
        assert ref.get("namespace") == case.namespace


async def test_label_selector_reaches_the_provider(client):
    await get(
        client, f"{CM2}/namespaces/default/pods/*/http_requests?labelSelector=app%3Dweb,tier!%3Dx"
    )
    assert client.fake.calls[-1].selector == "app=web,tier!=x"


async def test_metric_label_selector_is_echoed_as_label_selector(client):
    path = f"{CM1}/namespaces/default/pods/web-1/http_requests"
    body = await get(client, path + "?metricLabelSelector=verb%3DGET,code+in+(200,201),!err")
    assert body["items"][0]["selector"] == {
        "matchLabels": {"verb": "GET"},
        "matchExpressions": [
            {"key": "code", "operator": "In", "values": ["200", "201"]},
            {"key": "err", "operator": "DoesNotExist"},
        ],
    }
    body = await get(
        client, f"{CM2}/namespaces/default/pods/web-1/http_requests?metricLabelSelector=verb%3DGET"
    )
    assert body["items"][0]["metric"]["selector"] == {"matchLabels": {"verb": "GET"}}


async def test_external_exact_body(client):
    body = await get(client, f"{EM}/namespaces/default/queue_depth?labelSelector=queue%3Dorders")
    assert body == {
        "kind": "ExternalMetricValueList",
        "apiVersion": "external.metrics.k8s.io/v1beta1",
        "metadata": {},
        "items": [
            {
                "metricName": "queue_depth",
                "metricLabels": {"queue": "orders"},
                "timestamp": "2026-01-01T00:00:00Z",
                "window": 60,
                "value": "42",
            }
        ],
    }
    call = client.fake.calls[-1]
    assert (call.namespace, call.selector) == ("default", "queue=orders")


async def test_discovery_documents(client):
    body = await get(client, CM2)
    assert body["kind"] == "APIResourceList"
    assert body["apiVersion"] == "v1"
    assert body["groupVersion"] == "custom.metrics.k8s.io/v1beta2"
    assert body["resources"] == [
        {
            "name": f"{r}/{m}",
            "singularName": "",
            "namespaced": ns,
            "kind": "MetricValueList",
            "verbs": ["get"],
        }
        for r, m, ns in [
            ("deployments.apps", "queue_lag", True),
            ("namespaces", "http_requests", False),
            ("nodes", "cpu_temp", False),
            ("pods", "http_requests", True),
        ]
    ]
    assert (await get(client, CM1 + "/"))["groupVersion"] == "custom.metrics.k8s.io/v1beta1"
    ext = await get(client, EM)
    assert ext["resources"] == [
        {
            "name": "queue_depth",
            "singularName": "",
            "namespaced": True,
            "kind": "ExternalMetricValueList",
            "verbs": ["get"],
        }
    ]


async def test_group_documents(client):
    groups = await get(client, "/apis")
    assert groups["kind"] == "APIGroupList"
    names = {g["name"]: g for g in groups["groups"]}
    assert names["custom.metrics.k8s.io"]["preferredVersion"] == {
        "groupVersion": "custom.metrics.k8s.io/v1beta2",
        "version": "v1beta2",
    }
    assert [v["version"] for v in names["custom.metrics.k8s.io"]["versions"]] == [
        "v1beta2",
        "v1beta1",
    ]
    group = await get(client, "/apis/external.metrics.k8s.io")
    assert group["kind"] == "APIGroup"
    assert group["versions"] == [
        {"groupVersion": "external.metrics.k8s.io/v1beta1", "version": "v1beta1"}
    ]


async def test_openapi_documents(client):
    v2 = await get(client, "/openapi/v2")
    assert v2["swagger"] == "2.0"
    assert "paths" in v2
    assert "definitions" in v2
    assert any(p.startswith(CM2) for p in v2["paths"])
    index = await get(client, "/openapi/v3")
    url = index["paths"]["apis/custom.metrics.k8s.io/v1beta2"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/custom.metrics.k8s.io/v1beta2?hash=")
    doc = await get(client, url)
    assert doc["openapi"].startswith("3.0")
    assert "paths" in doc


async def test_health_version_and_metrics(client):
    for path in ("/healthz", "/livez", "/readyz"):
        resp = await client.get(path)
        assert (resp.status, await resp.text()) == (200, "ok")
    version = await get(client, "/version")
    assert version["gitVersion"].startswith("v")
    assert version["major"]
    await get(client, f"{CM1}/namespaces/default/pods/web-1/http_requests")
    text = await (await client.get("/metrics")).text()
    assert 'promscaler_adapter_requests_total{code="200",route="custom_object"} 1.0' in text
    assert "promscaler_adapter_request_duration_seconds_bucket" in text


async def test_readyz_waits_for_discovery(aiohttp_client):
    fake = provider()
    fake.is_ready = False
    client = await aiohttp_client(build_app(fake))
    resp = await client.get("/readyz")
    assert resp.status == 503
    assert "discovery" in await resp.text()
    assert (await client.get("/healthz")).status == 200


def status(code, reason, message):
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


ERRORS = [
    pytest.param(
        f"{CM1}/namespaces/default/pods/web-1/nope",
        404,
        "NotFound",
        "the server could not find the metric nope for pods",
        id="unknown-metric",
    ),
    pytest.param(
        f"{CM2}/namespaces/default/pods/web-9/http_requests",
        404,
        "NotFound",
        "the server could not find the metric http_requests for pods web-9",
        id="named-object-without-value",
    ),
    pytest.param(
        f"{CM2}/namespaces/default/widgets/w/http_requests",
        404,
        "NotFound",
        "the server could not find the metric http_requests for widgets",
        id="unknown-resource",
    ),
    pytest.param(
        f"{CM2}/pods/*/http_requests",
        404,
        "NotFound",
        "the server could not find the metric http_requests for pods",
        id="namespaced-resource-without-namespace",
    ),
    pytest.param(
        f"{CM2}/namespaces/default/pods/*/http_requests?labelSelector=a%3D%3D%3Db",
        400,
        "BadRequest",
        None,
        id="malformed-label-selector",
    ),
    pytest.param(
        f"{CM2}/namespaces/default/pods/web-1/http_requests?metricLabelSelector=a>1",
        400,
        "BadRequest",
        "metricLabelSelector: operator 'gt' on 'a' is not supported",
        id="gt-in-metric-selector",
    ),
    pytest.param(
        f"{EM}/namespaces/default/queue_depth?labelSelector=a<1",
        400,
        "BadRequest",
        "labelSelector: operator 'lt' on 'a' is not supported",
        id="lt-in-external",
    ),
    pytest.param(
        f"{EM}/namespaces/default/nope",
        404,
        "NotFound",
        "the server could not find the external metric nope",
        id="unknown-external",
    ),
    pytest.param(
        "/apis/custom.metrics.k8s.io/v1alpha1",
        404,
        "NotFound",
        "the server could not find the requested resource",
        id="unknown-version",
    ),
    pytest.param(
        "/apis/metrics.k8s.io/v1beta1",
        404,
        "NotFound",
        "the server could not find the requested resource",
        id="unknown-group",
    ),
    pytest.param(
        f"{CM2}/namespaces/default",
        404,
        "NotFound",
        "the server could not find the requested resource",
        id="too-few-segments",
    ),
    pytest.param(
        f"{CM2}/namespaces/default/pods/a/b/c",
        404,
        "NotFound",
        "the server could not find the requested resource",
        id="too-many-segments",
    ),
    pytest.param(
        f"{EM}/queue_depth",
        404,
        "NotFound",
        "the server could not find the requested resource",
        id="external-no-namespace",
    ),
    pytest.param(
        "/nothing/here",
        404,
        "NotFound",
        "the server could not find the requested resource",
        id="unknown-path",
    ),
]


@pytest.mark.parametrize(("path", "code", "reason", "message"), ERRORS)
async def test_errors_are_status_objects(client, path, code, reason, message):
    body = await get(client, path, code)
    assert body["kind"] == "Status"
    assert body["reason"] == reason
    assert body["code"] == code
    if message is not None:
        want = status(code, reason, message)
        if message == "the server could not find the requested resource":
            want["details"] = {}  # go-restful's generic 404 (NewGenericServerResponse) sets it
        assert body == want
    else:
        assert body["message"].startswith("labelSelector: ")


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(PrometheusUnavailable(), id="prometheus-down"),
        pytest.param(RuntimeError("secret http://prom:9090 token=abc"), id="unexpected-bug"),
    ],
)
async def test_backend_failures_never_leak(aiohttp_client, failure):
    fake = provider()
    fake.fail = failure
    client = await aiohttp_client(build_app(fake))
    resp = await client.get(f"{CM2}/namespaces/default/pods/web-1/http_requests")
    text = await resp.text()
    assert resp.status == (503 if isinstance(failure, PrometheusUnavailable) else 500)
    assert "prom:9090" not in text
    assert "Traceback" not in text
    assert "token" not in text
    assert (await resp.json())["kind"] == "Status"


async def test_only_get_is_served(client):
    resp = await client.post(f"{CM2}/namespaces/default/pods/web-1/http_requests")
    assert resp.status == 405
    assert (await resp.json())["reason"] == "MethodNotAllowed"


class DenyAll:
    async def admit(self, request: web.Request):
        raise Unauthorized("Unauthorized")


async def test_the_guard_runs_for_every_request(aiohttp_client):
    client = await aiohttp_client(build_app(provider(), guard=DenyAll()))
    resp = await client.get(f"{CM2}/namespaces/default/pods/web-1/http_requests")
    assert resp.status == 401
    assert await resp.json() == status(401, "Unauthorized", "Unauthorized")


class CountingGuard:
    def __init__(self):
        self.admitted = 0
        self.deny = False

    async def admit(self, request: web.Request):
        self.admitted += 1
        if self.deny:
            raise Unauthorized("Unauthorized")
        from adapter.server.auth_seam import ANONYMOUS

        return ANONYMOUS


async def test_identical_requests_within_the_ttl_share_one_answer(aiohttp_client):
    fake = provider()
    guard = CountingGuard()
    client = await aiohttp_client(build_app(fake, guard=guard, response_ttl=30))
    path = f"{CM2}/namespaces/default/pods/*/http_requests?labelSelector=app%3Dweb"
    first = await get(client, path)
    assert await get(client, path) == first
    assert len(fake.calls) == 1  # the second answer came from the response cache
    await get(client, path + ",tier%3Dx")
    assert len(fake.calls) == 2  # another question
    await get(client, f"{CM2}/namespaces/default/pods/web-1/nope", 404)
    await get(client, f"{CM2}/namespaces/default/pods/web-1/nope", 404)
    assert len(fake.calls) == 4  # errors are never kept
    guard.deny = True
    await get(client, path, 401)  # the guard still decides every request
    assert guard.admitted == 6


def test_ten_thousand_autoscalers_selectors_each_parsed_once():
    """Every Autoscaler (or HPA) of Pods metrics sends its own target's selector each sync: the
    memo holds all of a 10,000-Autoscaler cluster's, so the second sync parses none."""
    from adapter.server import routes

    routes._parse.cache_clear()
    texts = [f"app=web-{i}" for i in range(10_000)]
    first = [routes._parse(t) for t in texts]
    before = routes._parse.cache_info()
    assert [routes._parse(t) for t in texts] == first
    after = routes._parse.cache_info()
    assert (after.hits - before.hits, after.misses - before.misses) == (10_000, 0)


async def test_requests_are_counted_by_route_and_code_and_carry_request_ids(client):
    named = f"{CM2}/namespaces/default/pods/web-1/http_requests"
    seen = []
    for path, code in [(named, 200), (named, 200), (f"{CM2}/nope", 404)]:
        resp = await client.get(path)
        assert resp.status == code
        seen.append(resp.headers["X-Request-Id"])
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in seen)
    assert len(set(seen)) == 3
    resp = await client.get(named, headers={"X-Request-Id": "from-the-caller"})
    assert resp.headers["X-Request-Id"] == "from-the-caller"
    text = await (await client.get("/metrics")).text()
    assert 'promscaler_adapter_requests_total{code="200",route="custom_object"} 3.0' in text
    assert 'promscaler_adapter_requests_total{code="404",route="other"} 1.0' in text
    assert 'promscaler_adapter_request_duration_seconds_count{route="custom_object"} 3.0' in text
