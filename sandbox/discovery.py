"""Discovery documents: /version, /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>.

Only the legacy (unaggregated) documents are served; kubectl 1.32 asks for aggregated discovery
(apidiscovery.k8s.io/v2) first and falls back when the answer is plain `application/json`.
"""

from __future__ import annotations

from typing import Any

from sandbox.resources import Registry, ResourceType

KUBE_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-promscaler-sandbox",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.23.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def api_group(group: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": entries,
        "preferredVersion": entries[0],
    }


def api_group_list(groups: list[tuple[str, list[str]]]) -> dict[str, Any]:
    body = [api_group(g, vs) for g, vs in groups]
    for g in body:
        del g["kind"], g["apiVersion"]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": body}


def _resource(rt: ResourceType) -> list[dict[str, Any]]:
    main: dict[str, Any] = {
        "name": rt.plural,
        "singularName": rt.singular_name,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": sorted(rt.verbs),
    }
    if rt.short_names:
        main["shortNames"] = list(rt.short_names)
    if rt.categories:
        main["categories"] = list(rt.categories)
    entries = [main]
    sub_verbs = ["get", "patch", "update"]
    if rt.status_subresource:
        entries.append(
            {
                "name": f"{rt.plural}/status",
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": sub_verbs,
            }
        )
    if rt.scale is not None:
        entries.append(
            {
                "name": f"{rt.plural}/scale",
                "singularName": "",
                "namespaced": rt.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": sub_verbs,
            }
        )
    return entries


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    types = registry.in_group_version(group, version)
    if not types:
        return None
    resources = [entry for rt in sorted(types, key=lambda t: t.plural) for entry in _resource(rt)]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }
