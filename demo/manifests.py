"""The demo's objects: users and their permissions, the rule file, workloads, Autoscalers."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox import certs
from sandbox.cadvisor import resource_rules

NAMESPACE = "demo"
ADAPTER_NAMESPACE = "promscaler"
ADAPTER_SERVICE = "promscaler-adapter"


@dataclass(frozen=True)
class User:
    short: str  # file name of its kubeconfig
    name: str
    token: str
    groups: tuple[str, ...]


USERS = (
    User("adapter", "system:serviceaccount:promscaler:adapter", "demo-adapter-token",
         ("system:serviceaccounts", "system:serviceaccounts:promscaler")),
    User("autoscaler", "system:serviceaccount:promscaler:autoscaler", "demo-autoscaler-token",
         ("system:serviceaccounts", "system:serviceaccounts:promscaler")),
    User("viewer", "demo-viewer", "demo-viewer-token", ("demo-viewers",)),
)  # fmt: skip


def sandbox_policy() -> dict[str, Any]:
    """The sandbox's users and allow rules: each program gets what its chart RBAC grants."""
    users = [{"name": u.name, "token": u.token, "groups": list(u.groups)} for u in USERS]
    adapter, autoscaler, viewer = (u.name for u in USERS)
    rules = [
        # system:auth-delegator, extension-apiserver-authentication-reader, object look-ups
        {"users": [adapter], "verbs": ["create"], "apiGroups": ["authentication.k8s.io"],
         "resources": ["tokenreviews"]},
        {"users": [adapter], "verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
         "resources": ["subjectaccessreviews"]},
        {"users": [adapter], "verbs": ["get", "list", "watch"], "apiGroups": [""],
         "resources": ["configmaps"], "namespaces": ["kube-system"],
         "resourceNames": ["extension-apiserver-authentication"]},
        {"users": [adapter], "verbs": ["get", "list", "watch"], "apiGroups": ["", "apps"],
         "resources": ["namespaces", "nodes", "pods", "services", "deployments", "statefulsets",
                       "replicasets"]},
        {"users": [adapter], "verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis",
                                                                   "/apis/*", "/version"]},
        # the autoscaler: its objects, any /scale, pods, events, leases, both metrics APIs
        {"users": [autoscaler], "verbs": ["get", "list", "watch", "update", "patch"],
         "apiGroups": ["promscaler.dev"], "resources": ["autoscalers", "autoscalers/status"]},
        {"users": [autoscaler], "verbs": ["get", "update", "patch"], "apiGroups": ["*"],
         "resources": ["*/scale"]},
        {"users": [autoscaler], "verbs": ["get", "list", "watch"], "apiGroups": [""],
         "resources": ["pods"]},
        {"users": [autoscaler], "verbs": ["create", "patch", "update"],
         "apiGroups": ["", "events.k8s.io"], "resources": ["events"]},
        {"users": [autoscaler], "verbs": ["get", "create", "update"],
         "apiGroups": ["coordination.k8s.io"], "resources": ["leases"]},
        {"users": [autoscaler, viewer], "verbs": ["get", "list"],
         "apiGroups": ["custom.metrics.k8s.io", "external.metrics.k8s.io", "metrics.k8s.io"],
         "resources": ["*"]},
        {"users": [autoscaler, viewer], "verbs": ["get"], "nonResourceURLs": ["*"]},
    ]  # fmt: skip
    return {"users": users, "rules": rules}


# The rule file, in prometheus-adapter's format: one custom rule (a counter -> per-second rate
# per pod), one external rule (a gauge per queue), and resource rules over the sandbox's
# simulated cAdvisor series (metrics.k8s.io: `kubectl top`, CPU/memory targets).
RULES = """\
rules:
- seriesQuery: 'http_requests_total{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  name:
    matches: "^(.*)_total$"
    as: "${1}_per_second"
  metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[10s])) by (<<.GroupBy>>)'
externalRules:
- seriesQuery: 'queue_depth{queue!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
"""
# metrics.k8s.io from the sandbox's simulated cAdvisor (kubectl top works on the demo stack)
RULES += resource_rules("10s")


def adapter_serving_cert(directory: Path) -> tuple[bytes, Path, Path]:
    """A CA and a serving certificate for the adapter's Service name and 127.0.0.1.

    Returns (CA PEM for the APIServices' caBundle, cert path, key path).
    """
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca = certs.make_ca("promscaler-demo-ca", now=now)
    dns = f"{ADAPTER_SERVICE}.{ADAPTER_NAMESPACE}.svc"
    serving = certs.issue(ca, dns, now=now, hosts=(dns, "localhost", "127.0.0.1"), server=True)
    cert_path, key_path = serving.write(directory, "tls")
    return ca.cert_pem, cert_path, key_path


def registration(adapter_port: int, ca_bundle: str) -> list[tuple[str, dict[str, Any]]]:
    """Service, Endpoints and the four APIServices that put the adapter behind the sandbox."""
    meta = {"name": ADAPTER_SERVICE, "namespace": ADAPTER_NAMESPACE}
    objects: list[tuple[str, dict[str, Any]]] = [
        ("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": ADAPTER_NAMESPACE}}),
        (f"/api/v1/namespaces/{ADAPTER_NAMESPACE}/services", {
            "apiVersion": "v1", "kind": "Service", "metadata": meta,
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": adapter_port}]}}),
        (f"/api/v1/namespaces/{ADAPTER_NAMESPACE}/endpoints", {
            "apiVersion": "v1", "kind": "Endpoints", "metadata": meta,
            "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                         "ports": [{"name": "https", "port": adapter_port}]}]}),
    ]  # fmt: skip
    for group, version in (
        ("custom.metrics.k8s.io", "v1beta1"),
        ("custom.metrics.k8s.io", "v1beta2"),
        ("external.metrics.k8s.io", "v1beta1"),
        ("metrics.k8s.io", "v1beta1"),
    ):
        objects.append(
            (
                "/apis/apiregistration.k8s.io/v1/apiservices",
                {
                    "apiVersion": "apiregistration.k8s.io/v1",
                    "kind": "APIService",
                    "metadata": {"name": f"{version}.{group}"},
                    "spec": {
                        "group": group,
                        "version": version,
                        "service": {
                            "name": ADAPTER_SERVICE,
                            "namespace": ADAPTER_NAMESPACE,
                            "port": 443,
                        },
                        "caBundle": ca_bundle,
                        "groupPriorityMinimum": 100,
                        "versionPriority": 200 if version == "v1beta2" else 100,
                    },
                },
            )
        )
    return objects


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": name,
                            "image": f"example.com/{name}:1.0",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        }
                    ]
                },
            },
        },
    }


HPAS = f"/apis/autoscaling/v2/namespaces/{NAMESPACE}/horizontalpodautoscalers"
AUTOSCALERS = f"/apis/promscaler.dev/v1alpha1/namespaces/{NAMESPACE}/autoscalers"


def autoscalers(*, speed: float, native_web: bool = True) -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object) of what scales each workload: `web` under a native
    autoscaling/v2 HPA (kube-controller-manager's controller; an Autoscaler when `native_web`
    is False), `worker` under an Autoscaler. The same spec either way: the Autoscaler's spec is
    the HPA's. Windows shrink when the scenario plays faster."""
    down_window = max(2, round(12 / speed))
    period = max(1, round(4 / speed))
    web = {
        "apiVersion": "autoscaling/v2" if native_web else "promscaler.dev/v1alpha1",
        "kind": "HorizontalPodAutoscaler" if native_web else "Autoscaler",
        "metadata": {"name": "web", "namespace": NAMESPACE},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 12,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "http_requests_per_second"},
                        "target": {"type": "AverageValue", "averageValue": "20"},
                    },
                }
            ],
            "behavior": {
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": period}],
                },
                "scaleDown": {
                    "stabilizationWindowSeconds": down_window,
                    "policies": [{"type": "Percent", "value": 50, "periodSeconds": period}],
                },
            },
        },
    }
    worker = {
        "apiVersion": "promscaler.dev/v1alpha1",
        "kind": "Autoscaler",
        "metadata": {"name": "worker", "namespace": NAMESPACE},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
            "minReplicas": 0,
            "maxReplicas": 8,
            "metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {
                            "name": "queue_depth",
                            "selector": {"matchLabels": {"queue": "jobs"}},
                        },
                        "target": {"type": "AverageValue", "averageValue": "10"},
                    },
                }
            ],
            "behavior": {
                "scaleUp": {"stabilizationWindowSeconds": 0},
                "scaleDown": {"stabilizationWindowSeconds": down_window},
            },
        },
    }
    return [(HPAS if native_web else AUTOSCALERS, web), (AUTOSCALERS, worker)]
