"""The requests KubeCluster sends for each metric type, scale and status: the same paths and
query parameters as the upstream HPA controller (metrics/client.go)."""

from __future__ import annotations

import tracemalloc

import pytest

from autoscaler.cluster import ClusterError
from autoscaler.kube.client import KubeError, NotFound
from autoscaler.kube.cluster import KubeCluster

DISCOVERY = {
    "/apis/apps/v1": {
        "resources": [
            {"name": "deployments", "kind": "Deployment", "namespaced": True},
            {"name": "deployments/scale", "kind": "Scale", "namespaced": True},
            {"name": "deployments/status", "kind": "Deployment", "namespaced": True},
        ]
    },
    "/api/v1": {
        "resources": [
            {"name": "configmaps", "kind": "ConfigMap", "namespaced": True},
            {"name": "services", "kind": "Service", "namespaced": True},
            {"name": "namespaces", "kind": "Namespace", "namespaced": False},
        ]
    },
    "/apis/networking.k8s.io/v1": {
        "resources": [{"name": "ingresses", "kind": "Ingress", "namespaced": True}]
    },
}


class FakeKube:
    timeout = 5.0

    def __init__(self, answers=None):
        self.calls: list[tuple[str, str, list]] = []
        self.answers = {**DISCOVERY, **(answers or {})}

    async def request(
        self, method, path, *, query=(), body=None, content_type="", request_timeout=None
    ):
        self.calls.append((method, path, list(query)))
        if path in self.answers:
            answer = self.answers[path]
            if isinstance(answer, Exception):
                raise answer
            return answer
        raise NotFound(404, "NotFound", f"{path} not found")


ITEM = {"items": [{"value": "1"}]}
SEL = {
    "matchLabels": {"queue": "jobs"},
    "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "dev"]}],
}


@pytest.mark.parametrize(
    ("metric", "path", "query"),
    [
        pytest.param(
            {"type": "Resource", "resource": {"name": "cpu"}},
            "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods",
            [("labelSelector", "app=web")],
            id="resource",
        ),
        pytest.param(
            {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "c"}},
            "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods",
            [("labelSelector", "app=web")],
            id="container-resource",
        ),
        pytest.param(
            {"type": "Pods", "pods": {"metric": {"name": "rps", "selector": SEL}}},
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/pods/*/rps",
            [("labelSelector", "app=web"), ("metricLabelSelector", "env in (dev,prod),queue=jobs")],
            id="pods-with-metric-selector",
        ),
        pytest.param(
            {"type": "Pods", "pods": {"metric": {"name": "rps"}}},
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/pods/*/rps",
            [("labelSelector", "app=web")],
            id="pods-no-metric-selector",
        ),
        pytest.param(
            {
                "type": "Object",
                "object": {
                    "metric": {"name": "hits"},
                    "describedObject": {
                        "apiVersion": "networking.k8s.io/v1",
                        "kind": "Ingress",
                        "name": "main",
                    },
                },
            },
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/ingresses.networking.k8s.io/main/hits",
            [],
            id="object-in-a-group",
        ),
        pytest.param(
            {
                "type": "Object",
                "object": {
                    "metric": {"name": "hits", "selector": {"matchLabels": {"a": "b"}}},
                    "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"},
                },
            },
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/services/web/hits",
            [("metricLabelSelector", "a=b")],
            id="object-core-group",
        ),
        pytest.param(
            {
                "type": "Object",
                "object": {
                    "metric": {"name": "lag"},
                    "describedObject": {"apiVersion": "v1", "kind": "Namespace", "name": "other"},
                },
            },
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/other/metrics/lag",
            [],
            id="object-namespace",
        ),
        pytest.param(
            {
                "type": "External",
                "external": {
                    "metric": {
                        "name": "queue_depth",
                        "selector": {"matchLabels": {"queue": "jobs"}},
                    }
                },
            },
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/queue_depth",
            [("labelSelector", "queue=jobs")],
            id="external",
        ),
    ],
)
async def test_metric_requests_match_the_hpa(metric, path, query):
    kube = FakeKube({path: ITEM})
    entry = await KubeCluster(kube).fetch_metric("ns", metric, pod_selector="app=web")  # type: ignore[arg-type]
    assert kube.calls[-1] == ("GET", path, query)
    key = "podMetrics" if metric["type"] in ("Resource", "ContainerResource") else "items"
    assert entry == {key: ITEM["items"]}


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        pytest.param({"items": []}, "no metrics returned from external metrics API", id="empty"),
        pytest.param(
            KubeError(503, "ServiceUnavailable", "no endpoints"),
            "503 ServiceUnavailable: no endpoints",
            id="api-error",
        ),
    ],
)
async def test_metric_failures_become_error_entries(answer, want):
    path = "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/q"
    kube = FakeKube({path: answer})
    metric = {"type": "External", "external": {"metric": {"name": "q"}}}
    entry = await KubeCluster(kube).fetch_metric("ns", metric, pod_selector="")  # type: ignore[arg-type]
    assert entry["error"] == want


async def test_scale_is_found_through_discovery():
    scale = {"spec": {"replicas": 3}, "status": {"replicas": 3, "selector": "app=web"}}
    kube = FakeKube({"/apis/apps/v1/namespaces/ns/deployments/web/scale": scale})
    got = await KubeCluster(kube).get_scale(
        "ns", {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    )  # type: ignore[arg-type]
    assert (got.replicas, got.selector) == (3, "app=web")


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        pytest.param(
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "x"},
            "NoScale",
            id="no-scale-subresource",
        ),
        pytest.param(
            {"apiVersion": "apps/v1", "kind": "Rollout", "name": "x"},
            "UnknownKind",
            id="unknown-kind",
        ),
        pytest.param(
            {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "x"},
            "UnknownKind",
            id="unknown-group",
        ),
        pytest.param(
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "gone"},
            "NotFound",
            id="missing-target",
        ),
    ],
)
async def test_scale_failures_name_the_reason(ref, reason):
    with pytest.raises(ClusterError) as err:
        await KubeCluster(FakeKube()).get_scale("ns", ref)  # type: ignore[arg-type]
    assert err.value.reason == reason


async def test_status_is_a_merge_patch_of_the_status_subresource():
    path = "/apis/promscaler.dev/v1alpha1/namespaces/ns/autoscalers/web/status"
    kube = FakeKube({path: {"status": {}}})
    await KubeCluster(kube).patch_status("ns", "web", {"desiredReplicas": 2})  # type: ignore[arg-type]
    assert kube.calls == [("PATCH", path, [])]


@pytest.mark.parametrize(
    ("selector", "query"),
    [
        pytest.param(None, [], id="absent"),
        pytest.param({}, [], id="empty-selects-everything"),
        pytest.param({"matchLabels": {}}, [], id="empty-match-labels"),
        pytest.param(SEL, [("labelSelector", "env in (dev,prod),queue=jobs")], id="full"),
        pytest.param(
            {"matchExpressions": SEL["matchExpressions"], "matchLabels": SEL["matchLabels"]},
            [("labelSelector", "env in (dev,prod),queue=jobs")],
            id="keys-in-another-order",
        ),
    ],
)
async def test_a_metric_selector_is_rendered_the_same_every_pass(selector, query):
    """Each pass renders the metric's selector (remembered by its JSON); the first and later
    passes send the same parameter."""
    path = "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/q"
    kube = FakeKube({path: ITEM})
    metric = {"type": "External", "external": {"metric": {"name": "q", "selector": selector}}}
    cluster = KubeCluster(kube)  # type: ignore[arg-type]
    for _ in range(2):
        assert await cluster.fetch_metric("ns", metric, pod_selector="") == ITEM
        assert kube.calls[-1] == ("GET", path, query)


async def test_a_bad_metric_selector_fails_every_pass_without_a_request():
    bad = {"matchExpressions": [{"key": "env", "operator": "Near", "values": ["x"]}]}
    metric = {"type": "External", "external": {"metric": {"name": "q", "selector": bad}}}
    kube = FakeKube()
    cluster = KubeCluster(kube)  # type: ignore[arg-type]
    for _ in range(2):
        entry = await cluster.fetch_metric("ns", metric, pod_selector="")
        assert entry["reason"] == "InvalidSelector"
        assert "selector.matchExpressions[0].operator" in entry["error"]
    assert kube.calls == []


def test_remembered_metric_selectors_hold_no_encoder_buffers():
    """The selectors are remembered by their JSON as text: orjson's bytes keep a 4 KB buffer
    behind them, which 65,536 remembered keys would hold (256 MB)."""
    from autoscaler.kube import cluster as module

    selectors = [{"matchLabels": {"queue": f"q-{i:05d}"}} for i in range(2_000)]
    module._selector_text.cache_clear()
    tracemalloc.start()
    try:
        for selector in selectors:
            metric = {"name": "q", "selector": selector}
            want = [("labelSelector", f"queue={selector['matchLabels']['queue']}")]
            assert module._metric_query(metric, "labelSelector")[1] == want
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held / len(selectors) < 1_000  # a few hundred bytes; over 4 KB with bytes keys


HISTORY = "/apis/history.promscaler.dev/v1alpha1/namespaces/ns/q"
EXT_Q = {"type": "External", "external": {"metric": {"name": "q", "selector": SEL}}}


async def test_history_is_read_from_the_history_group_with_the_metric_selector():
    kube = FakeKube(
        {HISTORY: {"kind": "MetricHistory", "start": 60, "step": 60, "values": [1, None]}}
    )
    got = await KubeCluster(kube).read_history("ns", EXT_Q, start=60, end=120)  # type: ignore[arg-type]
    assert got == (60, [1, None])
    ((method, path, query),) = kube.calls
    assert (method, path) == ("GET", HISTORY)
    assert query == [
        ("labelSelector", "env in (dev,prod),queue=jobs"),
        ("start", "60"),
        ("end", "120"),
        ("step", "60"),
    ]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        pytest.param(KubeError(503, "ServiceUnavailable", "down"), "ServiceUnavailable", id="503"),
        pytest.param(NotFound(404, "NotFound", "no route"), "NotFound", id="404"),
        pytest.param({"kind": "Status"}, "InvalidHistory", id="not-a-history"),
        pytest.param({"start": 0, "step": 300, "values": []}, "InvalidHistory", id="other-step"),
    ],
)
async def test_history_failures_are_cluster_errors(answer, reason):
    kube = FakeKube({HISTORY: answer})
    with pytest.raises(ClusterError) as e:
        await KubeCluster(kube).read_history("ns", EXT_Q, start=0, end=60)  # type: ignore[arg-type]
    assert e.value.reason == reason


async def test_an_object_metrics_history_path_names_the_object():
    path = (
        "/apis/history.promscaler.dev/v1alpha1/namespaces/ns/ingresses.networking.k8s.io/main/rps"
    )
    kube = FakeKube({path: {"start": 0, "step": 60, "values": [3.5]}})
    metric = {
        "type": "Object",
        "object": {
            "describedObject": {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "Ingress",
                "name": "main",
            },
            "metric": {"name": "rps", "selector": {"matchLabels": {"code": "200"}}},
        },
    }
    got = await KubeCluster(kube).read_history("ns", metric, start=0, end=0)  # type: ignore[arg-type]
    assert got == (0, [3.5])
    (_, got_path, query) = kube.calls[-1]
    assert got_path == path
    assert query[0] == ("metricLabelSelector", "code=200")


async def test_a_pods_metrics_history_is_read_for_the_targets_pods():
    path = "/apis/history.promscaler.dev/v1alpha1/namespaces/ns/pods/*/rps"
    kube = FakeKube({path: {"start": 0, "step": 60, "values": [7.0]}})
    metric = {"type": "Pods", "pods": {"metric": {"name": "rps", "selector": SEL}}}
    cluster = KubeCluster(kube)  # type: ignore[arg-type]
    got = await cluster.read_history("ns", metric, start=0, end=0, pod_selector="app=web")
    assert got == (0, [7.0])
    ((method, got_path, query),) = kube.calls
    assert (method, got_path) == ("GET", path)
    # the pods as the metric's value is read: the target's selector, then the metric's
    assert query == [
        ("labelSelector", "app=web"),
        ("metricLabelSelector", "env in (dev,prod),queue=jobs"),
        ("start", "0"),
        ("end", "0"),
        ("step", "60"),
    ]
    with pytest.raises(ClusterError) as e:  # never every pod of the namespace
        await cluster.read_history("ns", metric, start=0, end=0, pod_selector="")
    assert e.value.reason == "InvalidSelector"
    assert len(kube.calls) == 1
