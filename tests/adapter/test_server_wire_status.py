"""Status bodies and query-parameter handling as the apiserver machinery under
custom-metrics-apiserver produces them (go-restful's 404/405, the list handler's order of checks,
watch refused), against a fake provider.

Expected bodies come from apimachinery's constructors: NewGenericServerResponse (404 and 405 with
fixed texts and `details: {}`), NewMethodNotSupported (watch: resource "*" of the group), and
custom-metrics-apiserver's ListResourceWithOptions (labelSelector decoded before the watch check,
metricLabelSelector parsed in the storage's List, before the provider is asked).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from adapter.errors import PrometheusQueryError, PrometheusUnavailable
from adapter.server.app import build_app
from tests.adapter.fakes import FakeProvider

CM1 = "/apis/custom.metrics.k8s.io/v1beta1"
CM2 = "/apis/custom.metrics.k8s.io/v1beta2"
EM = "/apis/external.metrics.k8s.io/v1beta1"
POD = "/namespaces/default/pods/web-1/http_requests"
BAD = "a%3D%3D%3Db"  # "a===b": no selector grammar accepts it


def fake() -> FakeProvider:
    return FakeProvider(
        custom={("pods", "http_requests"): {"web-1": "1500m"}},
        external={"queue_depth": [({"queue": "orders"}, "42")]},
    )


@pytest.fixture
async def client(aiohttp_client):
    c = await aiohttp_client(build_app(fake()))
    return c


def status(code: int, reason: str, message: str, details: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


NO_ROUTE = status(404, "NotFound", "the server could not find the requested resource", {})
NO_METHOD = status(
    405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
)
CUSTOM_WATCH = status(
    405,
    "MethodNotAllowed",
    'watch is not supported on resources of kind "*.custom.metrics.k8s.io"',
    {"group": "custom.metrics.k8s.io", "kind": "*"},
)
EXTERNAL_WATCH = status(
    405,
    "MethodNotAllowed",
    'watch is not supported on resources of kind "*.external.metrics.k8s.io"',
    {"group": "external.metrics.k8s.io", "kind": "*"},
)


@dataclass(frozen=True)
class Case:
    method: str
    path: str
    code: int
    body: dict[str, Any] | None  # the exact Status, or None to check code and reason only
    reason: str = ""


CASES = [
    # -- paths nothing serves: go-restful's generic 404, with an empty `details`
    pytest.param(Case("GET", "/nothing/here", 404, NO_ROUTE), id="404-unknown-path"),
    pytest.param(
        Case("GET", "/apis/metrics.k8s.io/v1beta1", 404, NO_ROUTE), id="404-unknown-group"
    ),
    pytest.param(Case("GET", f"{CM2[:-7]}v1alpha1", 404, NO_ROUTE), id="404-unknown-version"),
    pytest.param(
        Case("GET", f"{CM2}/namespaces/default", 404, NO_ROUTE), id="404-too-few-segments"
    ),
    pytest.param(Case("GET", f"{CM2}{POD}/x", 404, NO_ROUTE), id="404-too-many-segments"),
    pytest.param(Case("GET", f"{EM}/queue_depth", 404, NO_ROUTE), id="404-external-no-namespace"),
    pytest.param(Case("GET", "/openapi/v3/apis/x/v1", 404, NO_ROUTE), id="404-openapi-v3-unknown"),
    # -- a metric unknown for the resource keeps the provider's text and has no `details`
    pytest.param(
        Case(
            "GET",
            f"{CM2}/namespaces/default/pods/web-1/nope",
            404,
            status(404, "NotFound", "the server could not find the metric nope for pods", None),
        ),
        id="404-unknown-metric-has-no-details",
    ),
    # -- any method but GET: go-restful's generic 405
    pytest.param(Case("POST", f"{CM2}{POD}", 405, NO_METHOD), id="405-post-metric"),
    pytest.param(Case("PUT", "/apis", 405, NO_METHOD), id="405-put-group-list"),
    pytest.param(Case("DELETE", CM1, 405, NO_METHOD), id="405-delete-discovery"),
    pytest.param(
        Case("PATCH", f"{EM}/namespaces/default/queue_depth", 405, NO_METHOD),
        id="405-patch-external",
    ),
    # -- go-restful matches the path before the method: an unroutable path is a 404 whatever
    #    the method, a routable one answers any method but GET with a 405
    pytest.param(
        Case("POST", f"{CM2}/namespaces/default", 404, NO_ROUTE), id="post-unroutable-is-404"
    ),
    pytest.param(
        Case("DELETE", "/apis/metrics.k8s.io/v1beta1", 404, NO_ROUTE),
        id="delete-unknown-group-is-404",
    ),
    pytest.param(
        Case("PUT", f"{EM}/namespaces/default/queue_depth/x", 404, NO_ROUTE),
        id="put-unroutable-external-is-404",
    ),
    pytest.param(
        Case("POST", f"{CM1}/nodes/*/cpu_temp", 405, NO_METHOD), id="post-cluster-wildcard-405"
    ),
    pytest.param(Case("POST", "/apis/custom.metrics.k8s.io", 405, NO_METHOD), id="post-group-405"),
    # -- watch: any value but "0"/"false" (any case) is true, even an empty one
    pytest.param(Case("GET", f"{CM2}{POD}?watch=true", 405, CUSTOM_WATCH), id="watch-true-named"),
    pytest.param(
        Case("GET", f"{CM1}/namespaces/default/pods/*/http_requests?watch=1", 405, CUSTOM_WATCH),
        id="watch-1-wildcard-v1beta1",
    ),
    pytest.param(Case("GET", f"{CM2}{POD}?watch=", 405, CUSTOM_WATCH), id="watch-empty-is-true"),
    pytest.param(Case("GET", f"{CM2}{POD}?watch=yes", 405, CUSTOM_WATCH), id="watch-yes-is-true"),
    pytest.param(
        Case(
            "GET", f"{CM2}/namespaces/default/metrics/http_requests?watch=true", 405, CUSTOM_WATCH
        ),
        id="watch-namespace-metric",
    ),
    pytest.param(
        Case("GET", f"{EM}/namespaces/default/queue_depth?watch=true", 405, EXTERNAL_WATCH),
        id="watch-external",
    ),
    pytest.param(Case("GET", f"{CM2}{POD}?watch=false", 200, None), id="watch-false-lists"),
    pytest.param(Case("GET", f"{CM2}{POD}?watch=FALSE", 200, None), id="watch-FALSE-lists"),
    pytest.param(Case("GET", f"{CM2}{POD}?watch=0", 200, None), id="watch-0-lists"),
    pytest.param(
        Case("GET", f"{EM}/namespaces/default/queue_depth?watch=False", 200, None),
        id="watch-False-external-lists",
    ),
    # -- the list handler's order: labelSelector (400) before watch (405) before
    #    metricLabelSelector (400) before anything the provider decides (404)
    pytest.param(
        Case("GET", f"{CM2}{POD}?labelSelector={BAD}", 400, None, "BadRequest"),
        id="bad-label-selector-on-named-object",
    ),
    pytest.param(
        Case("GET", f"{CM2}{POD}?labelSelector={BAD}&watch=true", 400, None, "BadRequest"),
        id="bad-label-selector-before-watch",
    ),
    pytest.param(
        Case("GET", f"{CM2}{POD}?metricLabelSelector={BAD}&watch=true", 405, CUSTOM_WATCH),
        id="watch-before-bad-metric-selector",
    ),
    pytest.param(
        Case(
            "GET",
            f"{CM2}/namespaces/default/widgets/w/m?labelSelector={BAD}",
            400,
            None,
            "BadRequest",
        ),
        id="bad-label-selector-before-unknown-resource",
    ),
    pytest.param(
        Case(
            "GET",
            f"{CM2}/namespaces/default/pods/web-1/nope?metricLabelSelector={BAD}",
            400,
            None,
            "BadRequest",
        ),
        id="bad-metric-selector-before-unknown-metric",
    ),
    pytest.param(
        Case(
            "GET", f"{CM2}/pods/*/http_requests?metricLabelSelector=a%3E1", 400, None, "BadRequest"
        ),
        id="gt-metric-selector-before-scope-mismatch",
    ),
    pytest.param(
        Case("GET", f"{EM}/namespaces/default/nope?labelSelector={BAD}", 400, None, "BadRequest"),
        id="bad-external-selector-before-unknown-metric",
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_status_bodies_and_order_of_checks(client, case: Case):
    resp = await client.request(case.method, case.path)
    text = await resp.text()
    assert resp.status == case.code, text
    body = await resp.json()
    if case.code == 200:
        assert body["kind"] in ("MetricValueList", "ExternalMetricValueList")
    elif case.body is not None:
        assert body == case.body
    else:
        assert (body["kind"], body["reason"], body["code"]) == ("Status", case.reason, case.code)
        assert "details" not in body  # NewBadRequest sets none


def naming_fake() -> FakeProvider:
    return FakeProvider(
        custom={
            ("pods", "http_requests"): {"web-1": "1500m"},
            ("deployments.apps", "queue_lag"): {"web": "7"},
        }
    )


NAMING = [
    # custom-metrics-apiserver hands the provider schema.ParseGroupResource(<resource as written
    # in the path>), and prometheus-adapter's NotFound errors print that, not the resolved one
    pytest.param(f"{CM2}/namespaces/default/pods/web-1/nope", "nope for pods", id="plural"),
    pytest.param(f"{CM2}/namespaces/default/pod/web-1/nope", "nope for pod", id="singular"),
    pytest.param(
        f"{CM1}/namespaces/default/pod/web-9/http_requests",
        "http_requests for pod web-9",
        id="singular-named-object-without-value",
    ),
    pytest.param(
        f"{CM2}/namespaces/default/deployments/web/nope",
        "nope for deployments",
        id="plural-without-group",
    ),
    pytest.param(
        f"{CM2}/namespaces/default/deployment.apps/*/nope",
        "nope for deployment.apps",
        id="singular-group-qualified-wildcard",
    ),
    pytest.param(
        f"{CM2}/namespaces/default/deployments.apps/api/queue_lag",
        "queue_lag for deployments.apps api",
        id="group-qualified-named-object-without-value",
    ),
    pytest.param(f"{CM2}/namespaces/default/metrics/nope", "nope for namespaces", id="namespace"),
    pytest.param(f"{CM2}/pod/*/http_requests", "http_requests for pod", id="scope-mismatch"),
]


@pytest.mark.parametrize(("path", "tail"), NAMING)
async def test_not_found_names_the_resource_as_requested(aiohttp_client, path, tail):
    client = await aiohttp_client(build_app(naming_fake()))
    resp = await client.get(path)
    assert resp.status == 404, await resp.text()
    want = status(404, "NotFound", f"the server could not find the metric {tail}", None)
    assert await resp.json() == want


async def test_head_is_a_405_and_a_post_never_gets_a_cached_answer(aiohttp_client):
    client = await aiohttp_client(build_app(fake(), response_ttl=30))
    assert (await client.get(f"{CM2}{POD}")).status == 200  # now kept for 30 s
    assert (await client.head(f"{CM2}{POD}")).status == 405
    resp = await client.post(f"{CM2}{POD}")
    assert (resp.status, await resp.json()) == (405, NO_METHOD)


def internal(cause: str) -> dict[str, Any]:
    # apimachinery's NewInternalError: the cause behind a fixed prefix, and again in causes
    return status(
        500, "InternalError", f"Internal error occurred: {cause}", {"causes": [{"message": cause}]}
    )


@pytest.mark.parametrize(
    ("failure", "want"),
    [
        pytest.param(
            PrometheusQueryError(),
            internal("unable to fetch metrics: the metrics query failed"),
            id="prometheus-rejected-the-query",
        ),
        pytest.param(
            PrometheusQueryError("the metrics query returned a matrix, not an instant vector"),
            internal("the metrics query returned a matrix, not an instant vector"),
            id="query-gave-a-matrix",
        ),
        pytest.param(
            PrometheusUnavailable(),
            status(
                503,
                "ServiceUnavailable",
                "unable to fetch metrics: the metrics backend is unavailable",
                None,  # NewServiceUnavailable sets no details
            ),
            id="prometheus-down",
        ),
    ],
)
async def test_backend_failures_as_apimachinery_writes_them(aiohttp_client, failure, want):
    provider = fake()
    provider.fail = failure
    client = await aiohttp_client(build_app(provider))
    for path in (f"{CM2}{POD}", f"{EM}/namespaces/default/queue_depth"):
        resp = await client.get(path)
        assert (resp.status, await resp.json()) == (want["code"], want)


async def test_a_bug_is_an_internal_error_without_detail(aiohttp_client):
    provider = fake()
    provider.fail = RuntimeError("secret http://prom:9090 token=abc")
    client = await aiohttp_client(build_app(provider))
    resp = await client.get(f"{CM2}{POD}")
    body = await resp.json()
    assert (resp.status, body["reason"]) == (500, "InternalError")
    assert body["message"].startswith("Internal error occurred: ")
    cause = body["message"].removeprefix("Internal error occurred: ")
    assert body["details"] == {"causes": [{"message": cause}]}
    assert "prom" not in cause
    assert "token" not in cause


FORBIDDEN = [
    # responsewriters.Forbidden -> NewForbidden(GroupResource{group, resource}, name, ...):
    # details carry group, resource (as "kind") and name, each left out when empty
    pytest.param(
        f"{CM2}/namespaces/default/pods/*/http_requests",
        {"name": "*", "group": "custom.metrics.k8s.io", "kind": "pods"},
        id="custom-wildcard",
    ),
    pytest.param(
        f"{CM1}/nodes/node-a/cpu_temp",
        {"name": "node-a", "group": "custom.metrics.k8s.io", "kind": "nodes"},
        id="custom-named-cluster-scoped",
    ),
    pytest.param(
        f"{EM}/namespaces/default/queue_depth",
        {"group": "external.metrics.k8s.io", "kind": "queue_depth"},
        id="external-no-name",
    ),
    pytest.param("/metrics", {}, id="non-resource-path"),
]


@pytest.mark.parametrize(("path", "details"), FORBIDDEN)
async def test_forbidden_status_details(aiohttp_client, path, details):
    from adapter.auth.options import AuthOptions, build_guard
    from adapter.server.auth_seam import UserInfo
    from tests.adapter.security.fakes import FakeCluster

    cluster = FakeCluster(tokens={"eve-token": UserInfo(name="eve")}, allow=set(), configmap={})
    guard = build_guard(AuthOptions(anonymous_auth=True), kube=cluster)
    await guard.start()
    try:
        client = await aiohttp_client(build_app(fake(), guard=guard))
        resp = await client.get(path, headers={"Authorization": "Bearer eve-token"})
        body = await resp.json()
    finally:
        await guard.close()
    assert (resp.status, body["reason"]) == (403, "Forbidden"), body
    assert body["details"] == details
    assert list(body) == [
        "kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"
    ]  # fmt: skip
