"""The sandbox's stand-in for kube-controller-manager's HPA controller, without a metrics
backend: what it writes when the target or the metrics are missing, and who it acts as.
(Scaling through the real adapter and Prometheus: e2e/test_native_hpa.py.)"""

import asyncio

import pytest

from sandbox import hpa_identity
from sandbox.auth import Attributes, User
from sandbox.hpa_controller import HpaControllerConfig

HPAS = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
DEPLOYMENT = {
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        },
    },
}
PODS_METRIC = {
    "type": "Pods",
    "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "10"}},
}


def hpa(name, target="web", **spec):
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": target}
    return {"metadata": {"name": name}, "spec": {"scaleTargetRef": ref, "maxReplicas": 5} | spec}


@pytest.fixture
async def with_controller(sandbox_factory):
    return await sandbox_factory(hpa_controller=HpaControllerConfig(sync_period=0.2))


@pytest.fixture
async def http(with_controller):
    from tests.support.sandbox import SandboxHttp

    client = SandboxHttp(with_controller)
    yield client
    await client.close()


async def _wait_condition(http, name, type_, timeout=10.0):
    for _ in range(int(timeout / 0.05)):
        _, obj = await http.request("GET", f"{HPAS}/{name}")
        for c in (obj.get("status") or {}).get("conditions") or []:
            if c["type"] == type_:
                return obj, c
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {type_} condition on {name}: {obj.get('status')}")


async def _events(http, name):
    _, doc = await http.request(
        "GET",
        "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D" + name,
    )
    return {(e["type"], e["reason"]): e for e in doc["items"]}


async def test_missing_target_is_failed_get_scale(http):
    await http.request("POST", HPAS, json=hpa("lost", target="nope"))
    _obj, cond = await _wait_condition(http, "lost", "AbleToScale")
    assert cond["status"] == "False"
    assert cond["reason"] == "FailedGetScale"
    assert cond["message"] == (
        "the HPA controller was unable to get the target's current scale: "
        'deployments.apps "nope" not found'
    )
    events = await _events(http, "lost")
    event = events[("Warning", "FailedGetScale")]
    assert event["source"] == {"component": "horizontal-pod-autoscaler"}
    assert event["involvedObject"]["kind"] == "HorizontalPodAutoscaler"


async def test_unreadable_metric_never_scales_and_says_why(http):
    await http.request("POST", "/apis/apps/v1/namespaces/default/deployments", json=DEPLOYMENT)
    await http.request("POST", HPAS, json=hpa("web", minReplicas=1, metrics=[PODS_METRIC]))
    obj, cond = await _wait_condition(http, "web", "ScalingActive")
    assert cond["status"] == "False"
    assert cond["reason"] == "FailedGetPodsMetric"
    assert "unable to fetch metrics from custom metrics API" in cond["message"]
    assert obj["status"]["currentReplicas"] == 3
    assert obj["status"]["currentMetrics"] == [{"type": ""}]
    await asyncio.sleep(0.5)  # a few more passes: still no scale change
    _, scale = await http.request("GET", "/apis/apps/v1/namespaces/default/deployments/web/scale")
    assert scale["spec"]["replicas"] == 3
    events = await _events(http, "web")
    assert ("Warning", "FailedGetPodsMetric") in events
    repeated = events[("Warning", "FailedComputeMetricsReplicas")]
    assert repeated["count"] > 1  # repeats are aggregated, not new events


async def test_history_of_a_deleted_hpa_is_forgotten(with_controller, http):
    await http.request("POST", "/apis/apps/v1/namespaces/default/deployments", json=DEPLOYMENT)
    await http.request("POST", HPAS, json=hpa("web", metrics=[PODS_METRIC]))
    await _wait_condition(http, "web", "ScalingActive")
    controller = with_controller.hpa_controller
    assert "default/web" in controller._history
    await http.request("DELETE", f"{HPAS}/web")
    await controller.sync_once()
    assert "default/web" not in controller._history


ALLOWED = [
    pytest.param("get", "apps", "deployments", "scale", True, id="get-any-scale"),
    pytest.param("update", "apps", "deployments", "scale", True, id="update-any-scale"),
    pytest.param("list", "", "pods", "", True, id="list-pods"),
    pytest.param("get", "custom.metrics.k8s.io", "pods", "", True, id="custom-metrics"),
    pytest.param("list", "external.metrics.k8s.io", "queue", "", True, id="external-metrics"),
    pytest.param(
        "update", "autoscaling", "horizontalpodautoscalers", "status", True, id="hpa-status"
    ),
    pytest.param("update", "autoscaling", "horizontalpodautoscalers", "", False, id="not-hpa-spec"),
    pytest.param("update", "apps", "deployments", "", False, id="not-deployments"),
    pytest.param("get", "", "secrets", "", False, id="not-secrets"),
]


@pytest.mark.parametrize(("verb", "group", "resource", "sub", "allowed"), ALLOWED)
async def test_the_controller_acts_with_its_cluster_role(
    with_controller, verb, group, resource, sub, allowed
):
    user = User(hpa_identity.USER, hpa_identity.GROUPS)
    attrs = Attributes(user, verb, True, group, resource, sub, "default", "x")
    assert with_controller.policy.authorize(attrs)[0] is allowed


async def test_the_cluster_role_is_stored_as_in_a_real_cluster(http):
    status, role = await http.request(
        "GET",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:controller:horizontal-pod-autoscaler",
    )
    assert status == 200
    assert {"verbs": ["get", "update"], "apiGroups": ["*"], "resources": ["*/scale"]} in role[
        "rules"
    ]
    status, binding = await http.request(
        "GET",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:controller:horizontal-pod-autoscaler",
    )
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "horizontal-pod-autoscaler", "namespace": "kube-system"}
    ]


async def _hanging_backend(http, group, version):
    """An APIService whose backend accepts connections and never answers."""

    async def hold(reader, writer):
        while await reader.read(1024):
            pass
        writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    svc = {"metadata": {"name": "hang"}, "spec": {"ports": [{"name": "https", "port": 443}]}}
    eps = {
        "metadata": {"name": "hang"},
        "subsets": [
            {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": port}]}
        ],
    }
    await http.request("POST", "/api/v1/namespaces/default/services", json=svc)
    await http.request("POST", "/api/v1/namespaces/default/endpoints", json=eps)
    api = {
        "metadata": {"name": f"{version}.{group}"},
        "spec": {
            "group": group,
            "version": version,
            "service": {"name": "hang", "namespace": "default", "port": 443},
            "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }
    await http.request("POST", "/apis/apiregistration.k8s.io/v1/apiservices", json=api)
    return server


async def test_a_hung_metrics_backend_delays_only_its_own_hpa(http):
    server = await _hanging_backend(http, "external.metrics.k8s.io", "v1beta1")
    try:
        await http.request("POST", "/apis/apps/v1/namespaces/default/deployments", json=DEPLOYMENT)
        external = {
            "type": "External",
            "external": {
                "metric": {"name": "q"},
                "target": {"type": "AverageValue", "averageValue": "1"},
            },
        }
        await http.request("POST", HPAS, json=hpa("slow", metrics=[external]))
        await http.request("POST", HPAS, json=hpa("lost", target="nope"))
        await asyncio.sleep(2.0)  # ~10 sync periods; the slow HPA's metric read hangs for 10 s
        event = (await _events(http, "lost"))[("Warning", "FailedGetScale")]
        assert event["count"] >= 4, "the other HPA kept being reconciled every period"
        _, slow = await http.request("GET", f"{HPAS}/slow")
        assert slow["status"]["desiredReplicas"] == 0  # still waiting: nothing decided yet
        _, scale = await http.request(
            "GET", "/apis/apps/v1/namespaces/default/deployments/web/scale"
        )
        assert scale["spec"]["replicas"] == 3
    finally:
        server.close()


async def test_cpu_utilization_read_from_the_resource_metrics_api(sandbox_factory):
    """metrics.k8s.io from a stand-in metrics-server behind the aggregator (its own CA)."""
    from autoscaler.kube import connect
    from tests.controller.podmetrics import PodMetricsServer
    from tests.support.sandbox import SandboxHttp

    config = HpaControllerConfig(sync_period=0.2, cpu_initialization_period=0)
    sb = await sandbox_factory(hpa_controller=config, availability_interval=0.2)
    kube = await connect(str(sb.kubeconfig))
    http = SandboxHttp(sb)
    total = [400.0]  # millicores over all running pods
    server = PodMetricsServer(kube, lambda pods: total[0] / pods)
    await server.start()
    try:
        body = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "replicas": 1}}
        body["spec"]["template"] = {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}
                ]
            },
        }
        await http.request("POST", "/apis/apps/v1/namespaces/default/deployments", json=body)
        cpu = {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50},
            },
        }
        fast = {"scaleUp": {"policies": [{"type": "Pods", "value": 10, "periodSeconds": 1}]}}
        await http.request(
            "POST", HPAS, json=hpa("web", maxReplicas=10, metrics=[cpu], behavior=fast)
        )
        # 400m on one pod requesting 100m: 400% against 50%, ceil(1 x 8) = 8
        for _ in range(200):
            _, scale = await http.request(
                "GET", "/apis/apps/v1/namespaces/default/deployments/web/scale"
            )
            if scale["spec"]["replicas"] == 8:
                break
            await asyncio.sleep(0.05)
        assert scale["spec"]["replicas"] == 8
        events = await _events(http, "web")
        assert events[("Normal", "SuccessfulRescale")]["message"] == (
            "New size: 8; reason: cpu resource utilization (percentage of request) above target"
        )
    finally:
        await server.stop()
        await http.close()
        await kube.close()
