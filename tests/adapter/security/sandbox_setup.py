"""A sandbox policy and kubeconfigs for the adapter's own identity and its callers."""

from __future__ import annotations

from pathlib import Path

import yaml

from sandbox import Sandbox, parse_policy

ADAPTER_TOKEN = "adapter-token"
HPA_TOKEN = "hpa-token"
EVE_TOKEN = "eve-token"
METRIC_GROUPS = ["custom.metrics.k8s.io", "external.metrics.k8s.io"]

# the adapter gets exactly what the chart's RBAC grants it: system:auth-delegator (TokenReviews,
# SubjectAccessReviews), the extension-apiserver-authentication-reader Role, list/watch of
# the objects it describes, and discovery
POLICY = parse_policy(
    {
        "users": [
            {"name": "system:serviceaccount:monitoring:promscaler-adapter", "token": ADAPTER_TOKEN},
            {"name": "hpa", "token": HPA_TOKEN, "groups": ["system:serviceaccounts"]},
            {"name": "eve", "token": EVE_TOKEN},
        ],
        "rules": [
            {
                "users": ["system:serviceaccount:monitoring:promscaler-adapter"],
                "verbs": ["create"],
                "apiGroups": ["authentication.k8s.io", "authorization.k8s.io"],
                "resources": ["tokenreviews", "subjectaccessreviews"],
            },
            {
                "users": ["system:serviceaccount:monitoring:promscaler-adapter"],
                "verbs": ["get", "list", "watch"],
                "apiGroups": [""],
                "resources": ["configmaps"],
                "namespaces": ["kube-system"],
            },
            {
                "users": ["system:serviceaccount:monitoring:promscaler-adapter"],
                "verbs": ["get", "list", "watch"],
                "apiGroups": ["*"],
                "resources": ["*"],
            },
            {
                "users": ["system:serviceaccount:monitoring:promscaler-adapter", "hpa"],
                "verbs": ["get"],
                "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/version"],
            },
            {
                "users": ["hpa"],
                "verbs": ["get", "list"],
                "apiGroups": METRIC_GROUPS,
                "resources": ["*"],
            },
            {  # as the chart grants the controller: the history spec.predictive reads
                "users": ["hpa"],
                "verbs": ["get", "list"],
                "apiGroups": ["history.promscaler.dev"],
                "resources": ["*"],
            },
        ],
    }
)


def kubeconfig_for(sb: Sandbox, token: str, path: Path) -> str:
    """The sandbox's kubeconfig with another user's token."""
    doc = sb.kubeconfig_document()
    doc["users"][0]["user"] = {"token": token}
    path.write_text(yaml.safe_dump(doc))
    path.chmod(0o600)
    return str(path)
