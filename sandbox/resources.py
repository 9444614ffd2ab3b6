"""The table of resource types the sandbox serves, built-in and from CRDs.

Objects are stored per (group, plural) whatever the version they were written with; a type can
be served at several versions (CRDs) and the sandbox does no conversion beyond `apiVersion`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)


@dataclass(frozen=True)
class ScalePaths:
    """Where a workload keeps what `autoscaling/v1 Scale` shows (CRD `scale` subresource)."""

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    # None for built-in workloads: their selector is `spec.selector`, a LabelSelector object
    label_selector: str | None = None


@dataclass(frozen=True)
class ResourceType:
    """One served resource at one group/version."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    categories: tuple[str, ...] = ()
    status_subresource: bool = False
    scale: ScalePaths | None = None
    # extra field-selector labels beyond metadata.name/metadata.namespace (per registry strategy)
    field_labels: tuple[str, ...] = ()
    # a custom resource (from a CRD): merge patch only, schema from the CRD
    custom: bool = False
    # the CRD's openAPIV3Schema for this version (defaults, type/required validation)
    schema: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    # the CRD's additionalPrinterColumns for this version (kubectl get columns)
    printer_columns: tuple[dict[str, Any], ...] = field(default=(), compare=False, hash=False)
    # PUT of a missing object creates it (upstream AllowCreateOnUpdate)
    create_on_update: bool = False
    # stored with another resource, (group, plural): events.k8s.io events are core events
    storage: tuple[str, str] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.storage or (self.group, self.plural)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    def gr(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _core(plural: str, kind: str, namespaced: bool = True, **kw: Any) -> ResourceType:
    return ResourceType("", "v1", plural, kind, namespaced, **kw)


def _workload(plural: str, kind: str, short: str) -> ResourceType:
    return ResourceType(
        "apps",
        "v1",
        plural,
        kind,
        True,
        short_names=(short,),
        categories=("all",),
        status_subresource=True,
        scale=ScalePaths(),
    )


BUILTIN: tuple[ResourceType, ...] = (
    _core(
        "namespaces",
        "Namespace",
        namespaced=False,
        short_names=("ns",),
        status_subresource=True,
        field_labels=("status.phase",),
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
    ),
    _core(
        "pods",
        "Pod",
        short_names=("po",),
        categories=("all",),
        status_subresource=True,
        field_labels=(
            "status.phase",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "status.podIP",
        ),
    ),
    _core(
        "services",
        "Service",
        short_names=("svc",),
        categories=("all",),
        status_subresource=True,
        verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
    ),
    _core(
        "nodes",
        "Node",
        namespaced=False,
        short_names=("no",),
        status_subresource=True,
        field_labels=("spec.unschedulable",),
    ),
    _core("endpoints", "Endpoints", short_names=("ep",), create_on_update=True),
    _core("serviceaccounts", "ServiceAccount", short_names=("sa",)),
    _core("configmaps", "ConfigMap", short_names=("cm",)),
    _core("secrets", "Secret", field_labels=("type",)),
    _core(
        "events",
        "Event",
        short_names=("ev",),
        create_on_update=True,
        field_labels=(
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ),
    ),
    ResourceType("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True),
    _workload("deployments", "Deployment", "deploy"),
    _workload("statefulsets", "StatefulSet", "sts"),
    _workload("replicasets", "ReplicaSet", "rs"),
    ResourceType("coordination.k8s.io", "v1", "leases", "Lease", True),
    # stored and served only: the sandbox authorizes from its own policy, not from RBAC objects
    ResourceType("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    ResourceType("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    ResourceType("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    ResourceType(
        "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False
    ),
    ResourceType(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        True,
        short_names=("pdb",),
        status_subresource=True,
    ),
    ResourceType(
        "events.k8s.io",
        "v1",
        "events",
        "Event",
        True,
        short_names=("ev",),
        storage=("", "events"),
        field_labels=("reason", "regarding.kind", "regarding.name", "regarding.namespace", "type"),
    ),
    ResourceType(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        status_subresource=True,
    ),
    ResourceType(
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "APIService",
        False,
        categories=("api-extensions",),
        status_subresource=True,
    ),
    ResourceType(
        "authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=CREATE_ONLY
    ),
    ResourceType(
        "authorization.k8s.io",
        "v1",
        "subjectaccessreviews",
        "SubjectAccessReview",
        False,
        verbs=CREATE_ONLY,
    ),
    ResourceType(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        False,
        verbs=CREATE_ONLY,
    ),
)

# preferred order of groups in /apis, like kube-apiserver's group priorities
GROUP_ORDER = (
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "rbac.authorization.k8s.io",
    "policy",
    "apiextensions.k8s.io",
)


class Registry:
    """The mutable set of served types (CRDs come and go)."""

    def __init__(self, types: Iterable[ResourceType] = BUILTIN) -> None:
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        for rt in types:
            self.register(rt)

    def register(self, rt: ResourceType) -> None:
        self._types[(rt.group, rt.version, rt.plural)] = rt

    def unregister_group_resource(self, group: str, plural: str) -> None:
        for k in [k for k in self._types if k[0] == group and k[2] == plural]:
            del self._types[k]

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._types.get((group, version, plural))

    def versions_of(self, group: str, plural: str) -> list[ResourceType]:
        return [rt for (g, _, p), rt in self._types.items() if g == group and p == plural]

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [rt for (g, v, _), rt in self._types.items() if g == group and v == version]

    def groups(self) -> list[tuple[str, list[str]]]:
        """(group, versions) for every group but core, in discovery order."""
        found: dict[str, list[str]] = {}
        for g, v, _ in self._types:
            if g and v not in found.setdefault(g, []):
                found[g].append(v)
        rank = {g: i for i, g in enumerate(GROUP_ORDER)}
        ordered = sorted(found, key=lambda g: (rank.get(g, len(rank)), g))
        return [(g, sorted(found[g], key=version_priority)) for g in ordered]

    def all(self) -> list[ResourceType]:
        return list(self._types.values())


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key of Kubernetes version names: GA > beta > alpha, higher first."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, 0, 0, version)
    stage = {"": 0, "beta": 1, "alpha": 2}[m.group(2) or ""]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), version)
