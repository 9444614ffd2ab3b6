"""APIServices' `Available` condition, and the Local APIServices a cluster has for its built-in
groups (kube-aggregator's side of an APIService's status)."""

from __future__ import annotations

import contextlib
from typing import Any

from common.kubetime import format_time
from sandbox import errors
from sandbox.operations import Api
from sandbox.resources import Registry
from sandbox.store import Obj

__all__ = ["is_available", "seed_local_apiservices", "set_condition"]


def is_available(obj: Obj) -> bool:
    return any(
        c.get("type") == "Available" and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )


def set_condition(api: Api, rt: Any, obj: Obj, available: bool, reason: str, message: str) -> None:
    value = "True" if available else "False"
    old: dict[str, Any] = next(
        (
            c
            for c in (obj.get("status") or {}).get("conditions") or []
            if c.get("type") == "Available"
        ),
        {},
    )
    if old.get("status") == value and old.get("reason") == reason and old.get("message") == message:
        return
    since = (
        old.get("lastTransitionTime") if old.get("status") == value else format_time(api.clock())
    )
    cond = {
        "type": "Available",
        "status": value,
        "lastTransitionTime": since,
        "reason": reason,
        "message": message,
    }
    with contextlib.suppress(errors.ApiError):
        api.update(
            rt,
            "",
            obj["metadata"]["name"],
            {**obj, "status": {"conditions": [cond]}},
            subresource="status",
        )


def seed_local_apiservices(api: Api, registry: Registry) -> None:
    """The APIServices a real cluster has for its built-in groups (Local, always Available)."""
    rt = registry.lookup("apiregistration.k8s.io", "v1", "apiservices")
    assert rt is not None
    for group, versions in [("", ["v1"]), *registry.groups()]:
        for version in versions:
            name = f"{version}.{group}"
            spec = {
                "group": group,
                "version": version,
                "groupPriorityMinimum": 18000,
                "versionPriority": 15,
            }
            obj = api.create(
                rt,
                "",
                {
                    "metadata": {
                        "name": name,
                        "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"},
                    },
                    "spec": spec,
                },
            )
            set_condition(api, rt, obj, True, "Local", "Local APIServices are always available")
