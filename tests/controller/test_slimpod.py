"""The controller's pod cache keeps slim pods: a decision must read from them exactly what it
reads from the whole pod, errors included."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import event, given, settings
from hypothesis import strategies as st

from autoscaler.core.fields import DocumentError
from autoscaler.core.inputs import parse_pod
from autoscaler.kube.slimpod import slim_pod

_ANY = st.none() | st.integers(-3, 3) | st.text(max_size=3) | st.lists(st.none(), max_size=1)
_JUNK = st.dictionaries(st.sampled_from(["env", "ports", "image", "x"]), _ANY, max_size=2)


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The value, mostly; now and then something else in its place (the parser's error paths:
    rare enough that most pods parse, or each error would mask every other field)."""
    return st.integers(0, 15).flatmap(lambda i: _ANY if i == 15 else strategy)


_QUANTITY = _maybe(
    st.sampled_from(
        [
            "100m",
            "1",
            "256Mi",
            "1.5",
            "2Gi",
        ]
    )
)
_TIME = _maybe(st.sampled_from(["2026-12-01T10:00:00Z", "2026-12-01T10:00:00.5Z"]))
_REQUESTS = _maybe(st.dictionaries(st.sampled_from(["cpu", "memory"]), _QUANTITY, max_size=2))
_RESOURCES = _maybe(st.fixed_dictionaries({}, optional={"requests": _REQUESTS, "limits": _ANY}))
_CONTAINER = _maybe(
    st.fixed_dictionaries(
        {},
        optional={
            "name": _maybe(st.sampled_from(["app", "sidecar"])),
            "resources": _RESOURCES,
            "restartPolicy": st.sampled_from(["Always", "Never"]),
            "env": _ANY,
            "volumeMounts": _ANY,
        },
    )
)
_CONDITION = _maybe(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["Ready", "Initialized", "ContainersReady", "PodScheduled"])},
        optional={
            "status": _maybe(st.sampled_from(["True", "False", "Unknown"])),
            "lastTransitionTime": _TIME,
            "lastProbeTime": _ANY,
        },
    )
)
_POD = st.fixed_dictionaries(
    {
        "apiVersion": st.just("v1"),
        "kind": st.just("Pod"),
        "metadata": _maybe(
            st.fixed_dictionaries(
                {"name": _maybe(st.sampled_from(["web-1", "web-2"]))},
                optional={
                    "namespace": st.just("default"),
                    "labels": st.dictionaries(
                        st.sampled_from(["app", "tier"]), st.text(max_size=3)
                    ),
                    "deletionTimestamp": _TIME,
                    "ownerReferences": _ANY,
                    "annotations": _ANY,
                },
            )
        ),
    },
    optional={
        "spec": _maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "containers": _maybe(st.lists(_CONTAINER, max_size=3)),
                    "initContainers": _maybe(st.lists(_CONTAINER, max_size=2)),
                    "resources": _RESOURCES,
                    "overhead": _REQUESTS,
                    "volumes": _ANY,
                    "nodeName": _ANY,
                },
            )
        ),
        "status": _maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "phase": _maybe(st.sampled_from(["Running", "Pending", "Failed"])),
                    "startTime": _TIME,
                    "conditions": _maybe(st.lists(_CONDITION, max_size=5)),
                    "containerStatuses": _ANY,
                    "podIP": _ANY,
                },
            )
        ),
        "extra": _JUNK,
    },
)


def _parsed(pod: Any) -> Any:
    try:
        return parse_pod(pod, "pods[0]")
    except DocumentError as e:
        return ("error", str(e))


@settings(max_examples=600, deadline=None)
@given(_POD)
def test_a_slim_pod_parses_as_the_whole_pod(pod):
    before = copy.deepcopy(pod)
    slim = slim_pod(pod)
    assert pod == before, "the informer's object is not changed in place"
    parsed = _parsed(pod)
    event("parses" if not isinstance(parsed, tuple) else "an error")
    assert _parsed(slim) == parsed
    if isinstance(pod.get("metadata"), dict) and "labels" in pod["metadata"]:
        assert slim["metadata"]["labels"] == pod["metadata"]["labels"]  # the label index


def test_a_real_pod_keeps_what_a_decision_reads_and_little_else():
    pod = deployment_pod()
    slim = slim_pod(pod)
    assert _parsed(slim) == _parsed(pod)
    parsed = _parsed(pod)
    assert parsed.ready == "True"
    assert parsed.containers[0].requests == {"cpu": 250, "memory": 2**28 * 1000}
    assert slim["metadata"] == {
        k: pod["metadata"][k]
        for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels")
    }
    assert slim["spec"]["containers"] == [
        {"name": "web", "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}},
        {"name": "proxy", "resources": {"requests": {"cpu": "50m"}}},
    ]
    assert slim["status"]["conditions"] == [
        {"type": "PodReadyToStartContainers"},
        {"type": "Initialized"},
        pod["status"]["conditions"][2],
    ]
    assert len(orjson.dumps(slim)) * 4 < len(orjson.dumps(pod))


def deployment_pod() -> dict[str, Any]:
    """A pod as a real API server returns one for a two-container Deployment."""
    t = "2026-12-01T09:58:31Z"
    env = [{"name": f"VAR_{i}", "value": f"value-{i}"} for i in range(12)]
    probe = {
        "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-7d4b9c8f6-x2x9k",
            "generateName": "web-7d4b9c8f6-",
            "namespace": "shop",
            "uid": "5a0f3c55-1f0e-4d1a-9d8e-2a9a6f1f2b11",
            "resourceVersion": "48213",
            "creationTimestamp": t,
            "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": t},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-7d4b9c8f6",
                    "uid": "0b7c1d1e-6c52-4a0e-b3a4-3a3f5c6d7e8f",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "registry.example.com/shop/web:1.42.0",
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    "env": env,
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "256Mi"},
                        "limits": {"memory": "512Mi"},
                    },
                    "livenessProbe": probe,
                    "readinessProbe": probe,
                    "volumeMounts": [
                        {"name": "config", "mountPath": "/etc/web"},
                        {"name": "kube-api-access-abcde", "mountPath": "/var/run/secrets"},
                    ],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                },
                {
                    "name": "proxy",
                    "image": "registry.example.com/proxy:2.1",
                    "resources": {"requests": {"cpu": "50m"}},
                    "env": env[:4],
                },
            ],
            "volumes": [
                {"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
                {"name": "kube-api-access-abcde", "projected": {"sources": [], "defaultMode": 420}},
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": "node-3",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": t},
                {"type": "Initialized", "status": "True", "lastTransitionTime": t},
                {"type": "Ready", "status": "True", "lastTransitionTime": t},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": t},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": t},
            ],
            "hostIP": "10.0.0.13",
            "podIP": "10.244.3.17",
            "podIPs": [{"ip": "10.244.3.17"}],
            "startTime": t,
            "qosClass": "Burstable",
            "containerStatuses": [
                {
                    "name": name,
                    "state": {"running": {"startedAt": t}},
                    "lastState": {},
                    "ready": True,
                    "restartCount": 0,
                    "image": "registry.example.com/shop/web:1.42.0",
                    "imageID": "registry.example.com/shop/web@sha256:" + "0" * 64,
                    "containerID": "containerd://" + "1" * 64,
                    "started": True,
                }
                for name in ("web", "proxy")
            ],
        },
    }


def test_of_the_annotations_only_the_deletion_cost_is_kept() -> None:
    cost = "controller.kubernetes.io/pod-deletion-cost"
    pod = {"metadata": {"name": "a", "annotations": {cost: "3", "big": "x" * 4096}}}
    assert slim_pod(pod)["metadata"] == {"name": "a", "annotations": {cost: "3"}}
    assert "annotations" not in slim_pod({"metadata": {"annotations": {"big": "x"}}})["metadata"]
