"""CustomResourceDefinitions: serving the resources they define, and their status.

Creating (or changing) a CRD registers each served version at once, so a client may create
custom objects right after the CRD; the Established/NamesAccepted conditions follow a moment
later, as they do on a real cluster. Deleting a CRD deletes its objects.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from common.kubetime import format_time
from sandbox import errors
from sandbox.operations import Api
from sandbox.resources import Registry, ResourceType, ScalePaths
from sandbox.store import Change, Obj

CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")


def types_of(crd: Obj) -> list[ResourceType]:
    """The ResourceTypes a CRD serves (one per served version)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    found = []
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        scale = subresources.get("scale")
        found.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                plural=names["plural"],
                kind=names["kind"],
                namespaced=spec.get("scope") == "Namespaced",
                singular=names.get("singular") or names["kind"].lower(),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                status_subresource="status" in subresources,
                scale=ScalePaths(
                    scale.get("specReplicasPath", ".spec.replicas"),
                    scale.get("statusReplicasPath", ".status.replicas"),
                    scale.get("labelSelectorPath") or ".status.selector",
                )
                if isinstance(scale, dict)
                else None,
                custom=True,
                schema=(version.get("schema") or {}).get("openAPIV3Schema"),
                printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
            )
        )
    return found


def crd_status(crd: Obj, now: str) -> dict[str, Any]:
    names = dict((crd.get("spec") or {}).get("names") or {})
    names.setdefault("singular", str(names.get("kind", "")).lower())
    names.setdefault("listKind", f"{names.get('kind', '')}List")
    storage = [v["name"] for v in crd["spec"].get("versions") or [] if v.get("storage")]
    old = {c.get("type"): c for c in (crd.get("status") or {}).get("conditions") or []}

    def cond(kind: str, reason: str, message: str) -> dict[str, Any]:
        since = (old.get(kind) or {}).get("lastTransitionTime", now)
        return {
            "type": kind,
            "status": "True",
            "lastTransitionTime": since,
            "reason": reason,
            "message": message,
        }

    return {
        "conditions": [
            cond("NamesAccepted", "NoConflicts", "no conflicts found"),
            cond("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
        "acceptedNames": names,
        "storedVersions": sorted(
            set((crd.get("status") or {}).get("storedVersions") or []) | set(storage)
        ),
    }


class Crds:
    """Keeps the registry in step with the stored CRDs."""

    def __init__(self, api: Api, registry: Registry) -> None:
        self.api = api
        self.registry = registry

    def start(self) -> None:
        self.api.store.add_listener(self._on_change)

    def stop(self) -> None:
        self.api.store.remove_listener(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.key != CRDS:
            return
        crd = change.obj
        spec = crd.get("spec") or {}
        group, plural = spec.get("group", ""), (spec.get("names") or {}).get("plural", "")
        old_spec = (change.old or {}).get("spec") or {}
        if change.old is not None:
            self.registry.unregister_group_resource(
                old_spec.get("group", ""), (old_spec.get("names") or {}).get("plural", "")
            )
        loop = asyncio.get_running_loop()
        if change.type == "DELETED":
            # writes from inside a store callback would interleave with its fan-out: defer them
            loop.call_soon(self.api.store.drop_type, (group, plural))
            return
        for rt in types_of(crd):
            self.registry.register(rt)
        loop.call_soon(self._establish, crd["metadata"]["name"])

    def _establish(self, name: str) -> None:
        crd = self.api.store.get(CRDS, "", name)
        if crd is None:
            return
        status = crd_status(crd, format_time(self.api.clock()))
        if status == crd.get("status"):
            return
        rt = self.registry.lookup(*CRDS[:1], "v1", CRDS[1])
        assert rt is not None
        with contextlib.suppress(errors.ApiError):
            self.api.update(rt, "", name, {**crd, "status": status}, subresource="status")
