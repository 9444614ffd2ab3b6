"""Who the sandbox's HPA controller is: kube-controller-manager's service account
`kube-system/horizontal-pod-autoscaler` with its bootstrap ClusterRole
`system:controller:horizontal-pod-autoscaler` (`plugin/pkg/auth/authorizer/rbac/
bootstrappolicy/controller_policy.go`).

The sandbox authorizes from its policy, not from RBAC objects: the same rules are stored as
the ClusterRole and ClusterRoleBinding a real cluster has (so `kubectl get clusterrole` shows
them) and turned into policy rules for the controller's token.
"""

from __future__ import annotations

from typing import Any

from sandbox.auth import Policy, Rule, User
from sandbox.operations import Api
from sandbox.resources import Registry

NAME = "horizontal-pod-autoscaler"
NAMESPACE = "kube-system"
USER = f"system:serviceaccount:{NAMESPACE}:{NAME}"
GROUPS = ("system:serviceaccounts", f"system:serviceaccounts:{NAMESPACE}")
ROLE = f"system:controller:{NAME}"

# (verbs, apiGroups, resources) of the bootstrap ClusterRole; the heapster service proxy rule
# is left out (heapster is long gone and the sandbox has no service proxy)
RULES: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (("get", "list", "watch"), ("autoscaling",), ("horizontalpodautoscalers",)),
    (("update",), ("autoscaling",), ("horizontalpodautoscalers/status",)),
    (("get", "update"), ("*",), ("*/scale",)),
    (("list",), ("",), ("pods",)),
    (("list",), ("metrics.k8s.io",), ("pods",)),
    (("get", "list"), ("custom.metrics.k8s.io",), ("*",)),
    (("get", "list"), ("external.metrics.k8s.io",), ("*",)),
    (("create", "update", "patch"), ("", "events.k8s.io"), ("events",)),
)
# system:discovery, bound to every authenticated user in a real cluster: the REST mapper and
# the custom metrics client read discovery
DISCOVERY = ("/api", "/api/*", "/apis", "/apis/*", "/version", "/version/")


def with_controller(policy: Policy, token: str) -> Policy:
    """`policy` plus the controller's token and what its ClusterRole allows."""
    user = User(USER, GROUPS)
    rules = [Rule(users=(USER,), verbs=v, api_groups=g, resources=r) for v, g, r in RULES]
    rules.append(Rule(users=(USER,), verbs=("get",), non_resource_urls=DISCOVERY))
    with_user = policy.with_user(token, user)
    return Policy(with_user.tokens, (*with_user.rules, *rules))


def objects() -> list[tuple[tuple[str, str], dict[str, Any]]]:
    """The ServiceAccount, ClusterRole and ClusterRoleBinding to store, as (type key, body)."""
    role_rules = [
        {"verbs": list(v), "apiGroups": list(g), "resources": list(r)} for v, g, r in RULES
    ]
    labels = {"kubernetes.io/bootstrapping": "rbac-defaults"}
    annotations = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    meta = {"name": ROLE, "labels": labels, "annotations": annotations}
    return [
        (("", "serviceaccounts"), {"metadata": {"name": NAME, "namespace": NAMESPACE}}),
        (("rbac.authorization.k8s.io", "clusterroles"), {"metadata": meta, "rules": role_rules}),
        (
            ("rbac.authorization.k8s.io", "clusterrolebindings"),
            {
                "metadata": meta,
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": ROLE,
                },
                "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}],
            },
        ),
    ]


def seed(api: Api, registry: Registry) -> None:
    """Store the controller's ServiceAccount, ClusterRole and ClusterRoleBinding."""
    for key, body in objects():
        rt = next(rt for rt in registry.all() if rt.key == key)
        api.create(rt, body["metadata"].get("namespace", ""), body)
