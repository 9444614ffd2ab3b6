"""Kubernetes resources as the rules see them: names, groups and scope.

The seam between the pure rule engine and the cluster: rules name resources loosely ("pod",
"pods", "deployments.apps"), the adapter answers for canonical plural group-resources, and a
`ResourceResolver` (the cluster's discovery, or the static table below) turns one into the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, order=True)
class GroupResource:
    """A resource by group and lowercase plural name; group "" is the core group."""

    group: str
    resource: str

    def __str__(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


@dataclass(frozen=True)
class ResourceInfo:
    """What discovery knows about one resource."""

    group_resource: GroupResource
    version: str  # the preferred version, e.g. "v1"
    kind: str  # e.g. "Pod"
    singular: str  # e.g. "pod"
    namespaced: bool

    @property
    def api_version(self) -> str:
        """`apiVersion` as objects carry it: "v1" for core, "apps/v1" otherwise."""
        group = self.group_resource.group
        return f"{group}/{self.version}" if group else self.version


class ResourceResolver(Protocol):
    """Turns a loose resource name into what discovery knows about it."""

    def resolve(self, name: str, group: str = "") -> ResourceInfo | None:
        """'pod', 'pods', 'Pod', 'deployments.apps' or 'deployment' (+ `group`) -> its info.

        A dotted name carries its group ("deployments.apps"); an explicit `group` wins over
        none. Returns None when no served resource matches.
        """
        ...


class StaticResolver:
    """A resolver over a fixed table: for tests, and as the fallback before discovery answers."""

    def __init__(self, infos: tuple[ResourceInfo, ...]) -> None:
        self._by_key: dict[tuple[str, str], ResourceInfo] = {}
        self._by_name: dict[str, ResourceInfo] = {}
        for info in infos:
            group = info.group_resource.group
            for alias in (info.group_resource.resource, info.singular, info.kind.lower()):
                self._by_key.setdefault((group, alias), info)
                # an ungrouped look-up prefers the core group, then the first group listed
                self._by_name.setdefault(alias, info)

    def resolve(self, name: str, group: str = "") -> ResourceInfo | None:
        name = name.strip().lower()
        if not group and "." in name:
            name, group = name.split(".", 1)
        if group:
            return self._by_key.get((group.lower(), name))
        return self._by_name.get(name)

    @property
    def infos(self) -> tuple[ResourceInfo, ...]:
        return tuple(dict.fromkeys(self._by_key.values()))


def _info(group: str, version: str, plural: str, kind: str, *, namespaced: bool) -> ResourceInfo:
    return ResourceInfo(GroupResource(group, plural), version, kind, kind.lower(), namespaced)


# Built-in resources that rule files commonly map labels to.
BUILTIN_RESOURCES: tuple[ResourceInfo, ...] = (
    _info("", "v1", "pods", "Pod", namespaced=True),
    _info("", "v1", "namespaces", "Namespace", namespaced=False),
    _info("", "v1", "nodes", "Node", namespaced=False),
    _info("", "v1", "services", "Service", namespaced=True),
    _info("", "v1", "endpoints", "Endpoints", namespaced=True),
    _info("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False),
    _info("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", namespaced=True),
    _info("", "v1", "configmaps", "ConfigMap", namespaced=True),
    _info("", "v1", "replicationcontrollers", "ReplicationController", namespaced=True),
    _info("apps", "v1", "deployments", "Deployment", namespaced=True),
    _info("apps", "v1", "statefulsets", "StatefulSet", namespaced=True),
    _info("apps", "v1", "replicasets", "ReplicaSet", namespaced=True),
    _info("apps", "v1", "daemonsets", "DaemonSet", namespaced=True),
    _info("batch", "v1", "jobs", "Job", namespaced=True),
    _info("batch", "v1", "cronjobs", "CronJob", namespaced=True),
    _info("networking.k8s.io", "v1", "ingresses", "Ingress", namespaced=True),
)

STATIC_RESOLVER = StaticResolver(BUILTIN_RESOURCES)
