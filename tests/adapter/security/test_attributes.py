"""Authorization attributes match k8s.io/apiserver's RequestInfoFactory for our routes."""

from __future__ import annotations

import pytest

from adapter.auth.attributes import Attributes, forbidden_message, request_attributes

CM = "/apis/custom.metrics.k8s.io/v1beta2"
EM = "/apis/external.metrics.k8s.io/v1beta1"


def res(verb, path, *, group="", version="", ns="", resource="", sub="", name=""):
    return Attributes(
        verb=verb,
        path=path,
        is_resource=True,
        api_group=group,
        api_version=version,
        namespace=ns,
        resource=resource,
        subresource=sub,
        name=name,
    )


CASES = [
    pytest.param(
        "GET",
        f"{CM}/namespaces/ns/pods/*/m",
        {},
        res(
            "get",
            f"{CM}/namespaces/ns/pods/*/m",
            group="custom.metrics.k8s.io",
            version="v1beta2",
            ns="ns",
            resource="pods",
            sub="m",
            name="*",
        ),
        id="custom-wildcard-namespaced",
    ),
    pytest.param(
        "GET",
        f"{CM}/namespaces/ns/pods/web-1/m",
        {},
        res(
            "get",
            f"{CM}/namespaces/ns/pods/web-1/m",
            group="custom.metrics.k8s.io",
            version="v1beta2",
            ns="ns",
            resource="pods",
            sub="m",
            name="web-1",
        ),
        id="custom-named-object",
    ),
    pytest.param(
        "GET",
        f"{CM}/nodes/*/cpu_temp",
        {},
        res(
            "get",
            f"{CM}/nodes/*/cpu_temp",
            group="custom.metrics.k8s.io",
            version="v1beta2",
            resource="nodes",
            sub="cpu_temp",
            name="*",
        ),
        id="custom-cluster-scoped",
    ),
    pytest.param(
        "GET",
        f"{CM}/namespaces/ns/metrics/m",
        {},
        res(
            "get",
            f"{CM}/namespaces/ns/metrics/m",
            group="custom.metrics.k8s.io",
            version="v1beta2",
            ns="ns",
            resource="metrics",
            name="m",
        ),
        id="custom-namespace-metric-as-upstream-parses-it",
    ),
    pytest.param(
        "GET",
        f"{CM}/namespaces/ns/deployments.apps/*/m",
        {},
        res(
            "get",
            f"{CM}/namespaces/ns/deployments.apps/*/m",
            group="custom.metrics.k8s.io",
            version="v1beta2",
            ns="ns",
            resource="deployments.apps",
            sub="m",
            name="*",
        ),
        id="custom-group-qualified-resource",
    ),
    pytest.param(
        "GET",
        f"{EM}/namespaces/ns/queue_depth",
        {"labelSelector": "q=a"},
        res(
            "list",
            f"{EM}/namespaces/ns/queue_depth",
            group="external.metrics.k8s.io",
            version="v1beta1",
            ns="ns",
            resource="queue_depth",
        ),
        id="external-is-list-of-the-metric",
    ),
    pytest.param(
        "GET",
        "/apis/history.promscaler.dev/v1alpha1/namespaces/ns/queue_depth",
        {"start": "0", "end": "60"},
        res(
            "list",
            "/apis/history.promscaler.dev/v1alpha1/namespaces/ns/queue_depth",
            group="history.promscaler.dev",
            version="v1alpha1",
            ns="ns",
            resource="queue_depth",
        ),
        id="history-is-list-of-the-metric-in-its-own-group",
    ),
    pytest.param(
        "GET",
        "/apis/history.promscaler.dev/v1alpha1/namespaces/ns/services/web/rps",
        {"start": "0", "end": "60"},
        res(
            "get",
            "/apis/history.promscaler.dev/v1alpha1/namespaces/ns/services/web/rps",
            group="history.promscaler.dev",
            version="v1alpha1",
            ns="ns",
            resource="services",
            sub="rps",
            name="web",
        ),
        id="object-history-is-get-of-the-object",
    ),
    pytest.param(
        "GET",
        "/apis/history.promscaler.dev/v1alpha1/namespaces/ns/pods/*/rps",
        {"labelSelector": "app=web", "start": "0", "end": "60"},
        res(
            "get",
            "/apis/history.promscaler.dev/v1alpha1/namespaces/ns/pods/*/rps",
            group="history.promscaler.dev",
            version="v1alpha1",
            ns="ns",
            resource="pods",
            sub="rps",
            name="*",
        ),
        id="pods-history-is-get-of-pods-star",
    ),
    pytest.param(
        "GET",
        f"{EM}/namespaces/ns/queue_depth",
        {"watch": "true"},
        res(
            "watch",
            f"{EM}/namespaces/ns/queue_depth",
            group="external.metrics.k8s.io",
            version="v1beta1",
            ns="ns",
            resource="queue_depth",
        ),
        id="collection-watch",
    ),
    pytest.param(
        "GET",
        "/api/v1/namespaces/ns/pods",
        {},
        res("list", "/api/v1/namespaces/ns/pods", version="v1", ns="ns", resource="pods"),
        id="core-groupless-prefix",
    ),
    pytest.param(
        "GET",
        "/api/v1/watch/namespaces/ns/pods/p",
        {},
        res(
            "watch",
            "/api/v1/watch/namespaces/ns/pods/p",
            version="v1",
            ns="ns",
            resource="pods",
            name="p",
        ),
        id="special-verb-segment",
    ),
    pytest.param(
        "GET",
        "/api/v1/namespaces/ns/status",
        {},
        res(
            "get",
            "/api/v1/namespaces/ns/status",
            version="v1",
            ns="ns",
            resource="namespaces",
            name="ns",
            sub="status",
        ),
        id="namespace-subresource",
    ),
    pytest.param(
        "DELETE",
        "/api/v1/namespaces/ns/pods",
        {},
        res(
            "deletecollection", "/api/v1/namespaces/ns/pods", version="v1", ns="ns", resource="pods"
        ),
        id="delete-collection",
    ),
    pytest.param(
        "GET",
        "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods",
        {"labelSelector": "app=web"},
        res(
            "list",
            "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods",
            group="metrics.k8s.io",
            version="v1beta1",
            ns="ns",
            resource="pods",
        ),
        id="kubectl-top-pods",
    ),
    pytest.param(
        "GET",
        "/apis/metrics.k8s.io/v1beta1/nodes/n1",
        {},
        res(
            "get",
            "/apis/metrics.k8s.io/v1beta1/nodes/n1",
            group="metrics.k8s.io",
            version="v1beta1",
            resource="nodes",
            name="n1",
        ),
        id="node-metrics-by-name",
    ),
    pytest.param("GET", CM, {}, Attributes(verb="get", path=CM), id="discovery-group-version"),
    pytest.param(
        "GET",
        "/apis/custom.metrics.k8s.io",
        {},
        Attributes(verb="get", path="/apis/custom.metrics.k8s.io"),
        id="discovery-group",
    ),
    pytest.param("GET", "/apis", {}, Attributes(verb="get", path="/apis"), id="discovery-root"),
    pytest.param("GET", "/metrics", {}, Attributes(verb="get", path="/metrics"), id="self-metrics"),
    pytest.param(
        "GET", "/openapi/v2", {}, Attributes(verb="get", path="/openapi/v2"), id="openapi"
    ),
    pytest.param("POST", "/", {}, Attributes(verb="post", path="/"), id="root-post"),
    pytest.param("GET", "", {}, Attributes(verb="get", path=""), id="empty-path"),
]


@pytest.mark.parametrize(("method", "path", "query", "want"), CASES)
def test_request_attributes_match_upstream(method, path, query, want):
    assert request_attributes(method, path, query) == want


def test_review_spec_drops_empty_fields_and_uses_non_resource_for_paths():
    attrs = request_attributes("GET", f"{EM}/namespaces/ns/q", {})
    assert attrs.review_spec() == {
        "resourceAttributes": {
            "namespace": "ns",
            "verb": "list",
            "group": "external.metrics.k8s.io",
            "version": "v1beta1",
            "resource": "q",
        }
    }
    assert request_attributes("GET", "/metrics", {}).review_spec() == {
        "nonResourceAttributes": {"path": "/metrics", "verb": "get"}
    }


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param(
            f"{CM}/namespaces/ns/pods/*/m",
            'pods.custom.metrics.k8s.io "*" is forbidden: User "bob" cannot get resource '
            '"pods/m" in API group "custom.metrics.k8s.io" in the namespace "ns"',
            id="namespaced",
        ),
        pytest.param(
            f"{CM}/nodes/n1/t",
            'nodes.custom.metrics.k8s.io "n1" is forbidden: User "bob" cannot get resource '
            '"nodes/t" in API group "custom.metrics.k8s.io" at the cluster scope',
            id="cluster",
        ),
        pytest.param(
            "/metrics", 'forbidden: User "bob" cannot get path "/metrics"', id="non-resource"
        ),
    ],
)
def test_forbidden_message_reads_like_upstream(path, want):
    assert forbidden_message("bob", request_attributes("GET", path, {})) == want
