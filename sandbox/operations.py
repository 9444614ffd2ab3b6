"""Create, read, update, patch and delete with the API server's semantics, over the `Store`.

Used by the HTTP layer and, without authorization, by the sandbox's own controllers.
"""

from __future__ import annotations

import builtins
import secrets
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

import yaml

from common.kubetime import format_time
from common.selectors import FieldRequirement, Selector
from sandbox import errors, events, hpa_convert, strategies
from sandbox.bodies import copy_json
from sandbox.patch import merge_patch, strategic_merge
from sandbox.patchbody import apply_patch
from sandbox.resources import ResourceType
from sandbox.shapes import check_shape, matches_fields
from sandbox.store import Obj, Store

NAMESPACES = ("", "namespaces")
EVENTS = ("", "events")
HPAS = ("autoscaling", "horizontalpodautoscalers")
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # upstream's utilrand alphabet (no vowels)
# types whose DELETE answers with the deleted object rather than a Status (ReturnDeletedObject)
_RETURNS_OBJECT = {("", "pods"), ("", "services"), ("", "namespaces")}


def random_suffix(n: int = 5) -> str:
    return "".join(secrets.choice(_NAME_CHARS) for _ in range(n))


def _without(obj: Obj, *keys: str) -> Obj:
    return {k: v for k, v in obj.items() if k not in keys}


class Api:
    """The object operations; raise `ApiError` for anything the client should see."""

    def __init__(self, store: Store, *, clock: Callable[[], datetime]) -> None:
        self.store = store
        self.clock = clock
        self._next_ip = 10

    # ---- reads -------------------------------------------------------------------------------

    def view(self, rt: ResourceType, obj: Obj) -> Obj:
        """The object as served at `rt`'s version (CRDs may serve several)."""
        if rt.storage == EVENTS and rt.group == "events.k8s.io":
            return events.from_core(obj)
        if rt.key == HPAS:
            return hpa_convert.served(rt.version, obj)
        if obj.get("apiVersion") == rt.api_version:
            return obj
        return {**obj, "apiVersion": rt.api_version, "kind": rt.kind}

    def get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        obj = self.store.get(rt.key, namespace if rt.namespaced else "", name)
        if obj is None:
            raise errors.not_found(rt.plural, rt.group, name)
        return self.view(rt, obj)

    def list(
        self,
        rt: ResourceType,
        namespace: str | None,
        *,
        labels: Selector,
        fields: tuple[FieldRequirement, ...] = (),
    ) -> list[Obj]:
        objs = [
            self.view(rt, o) for o in self.store.list(rt.key, namespace if rt.namespaced else None)
        ]
        if not labels.empty:
            objs = [o for o in objs if labels.matches(o["metadata"].get("labels") or {})]
        if fields:
            objs = [o for o in objs if matches_fields(rt, o, fields)]
        return objs

    # ---- create ------------------------------------------------------------------------------

    def create(self, rt: ResourceType, namespace: str, body: Any, *, dry_run: bool = False) -> Obj:
        obj = self._check_body(rt, body, namespace)
        meta = obj["metadata"]
        if meta.get("resourceVersion"):
            raise errors.bad_request("resourceVersion should not be set on objects to be created")
        if not meta.get("name"):
            if not meta.get("generateName"):
                raise errors.invalid(
                    rt.kind,
                    rt.group,
                    "",
                    [
                        (
                            "FieldValueRequired",
                            "metadata.name",
                            "Required value: name or generateName is required",
                        )
                    ],
                )
            # names.SimpleNameGenerator: the base cut to 63 - 5 characters, then 5 random ones
            meta["name"] = meta["generateName"][:58] + random_suffix()
        if rt.namespaced and self.store.get(NAMESPACES, "", meta["namespace"]) is None:
            raise errors.not_found("namespaces", "", meta["namespace"])
        if self.store.get(rt.key, meta.get("namespace", ""), meta["name"]) is not None:
            raise errors.already_exists(rt.plural, rt.group, meta["name"])
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = format_time(self.clock())
        for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "managedFields"):
            meta.pop(field, None)
        if strategies.has_generation(rt):
            meta["generation"] = 1
        obj = strategies.prepare_create(rt, obj, cluster_ip=self._cluster_ip())
        self._validate(rt, obj)
        if dry_run:
            return self.view(rt, obj)
        return self.view(rt, self.store.put(rt.key, obj))

    def _cluster_ip(self) -> str:
        self._next_ip += 1
        return f"10.96.{self._next_ip // 250}.{self._next_ip % 250 + 1}"

    def _check_body(self, rt: ResourceType, body: Any, namespace: str) -> Obj:
        if not isinstance(body, dict):
            raise errors.bad_request(f"the body of the request must be a {rt.kind} object")
        obj: Obj = copy_json(body)
        if (
            obj.get("kind", rt.kind) != rt.kind
            or obj.get("apiVersion", rt.api_version) != rt.api_version
        ):
            raise errors.bad_request(
                f"the API version in the data ({obj.get('apiVersion')}) does not match the expected"
                f" API version ({rt.api_version})"
                if obj.get("kind", rt.kind) == rt.kind
                else (
                    f"the kind in the data ({obj.get('kind')}) does not match the expected "
                    f"kind ({rt.kind})"
                )
            )
        obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise errors.bad_request("metadata: must be an object")
        check_shape(rt, obj)
        if rt.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace "
                    "sent on the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if rt.storage == EVENTS and rt.group == "events.k8s.io":
            obj = events.to_core(obj)
        if rt.key == HPAS:
            obj = hpa_convert.decoded(rt.version, obj)
        return obj

    def _validate(self, rt: ResourceType, obj: Obj, old: Obj | None = None) -> None:
        causes = strategies.validate(rt, obj, old)
        if causes:
            raise errors.invalid(rt.kind, rt.group, obj["metadata"].get("name", ""), causes)

    # ---- update ------------------------------------------------------------------------------

    def update(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        body: Any,
        *,
        subresource: str = "",
        dry_run: bool = False,
    ) -> tuple[Obj, bool]:
        """PUT; returns (object, created)."""
        obj = self._check_body(rt, body, namespace)
        meta = obj["metadata"]
        if meta.get("name", name) != name:
            raise errors.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the "
                f"URL ({name})"
            )
        meta["name"] = name
        old = self.store.get(rt.key, meta.get("namespace", ""), name)
        if old is None:
            if rt.create_on_update and not subresource:
                meta.pop("resourceVersion", None)
                return self.create(rt, namespace, obj, dry_run=dry_run), True
            raise errors.not_found(rt.plural, rt.group, name)
        sent_rv = meta.get("resourceVersion")
        if sent_rv and sent_rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(rt.plural, rt.group, name, errors.STALE)
        new = self._merge_update(rt, old, obj, subresource)
        if new == old:
            return self.view(
                rt, old
            ), False  # a no-op update writes nothing, like etcd3's guaranteed update
        self._validate(rt, new, old)
        if dry_run:
            return self.view(rt, new), False
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            return self.view(
                rt, self.store.remove(rt.key, meta.get("namespace", ""), name) or new
            ), False
        return self.view(rt, self.store.put(rt.key, new)), False

    def _merge_update(self, rt: ResourceType, old: Obj, obj: Obj, subresource: str) -> Obj:
        if subresource == "status":
            # the status endpoint changes status only
            new = (
                {**old, "status": obj.get("status")} if "status" in obj else _without(old, "status")
            )
            return new
        if rt.status_subresource:
            obj = _without(obj, "status")
            if "status" in old:
                obj["status"] = old["status"]
        if rt.custom:
            from sandbox import schema

            obj = schema.prune(rt.schema, schema.apply_defaults(rt.schema, obj))
        meta = dict(obj["metadata"])
        for field in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "resourceVersion",
        ):
            if field in old["metadata"]:
                meta[field] = old["metadata"][field]
            else:
                meta.pop(field, None)
        meta.pop("managedFields", None)
        new = {**obj, "metadata": meta}
        if strategies.has_generation(rt):
            skip = ("metadata", "status") if rt.status_subresource else ("metadata",)
            if _without(new, *skip) != _without(old, *skip):
                meta["generation"] = int(old["metadata"].get("generation", 0)) + 1
        return new

    # ---- patch -------------------------------------------------------------------------------

    def patch(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        content_type: str,
        raw: bytes,
        *,
        subresource: str = "",
        dry_run: bool = False,
    ) -> Obj:
        old = self.get(rt, namespace, name)
        patched = apply_patch(rt, old, content_type, raw)
        return self.update(rt, namespace, name, patched, subresource=subresource, dry_run=dry_run)[
            0
        ]

    def apply(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        raw: bytes,
        *,
        field_manager: str,
        subresource: str = "",
        dry_run: bool = False,
    ) -> tuple[Obj, bool]:
        """Server-side apply, approximated: create, or merge the applied fields in.

        Without field ownership: fields a manager stops applying are kept, and there are no
        apply conflicts between managers. Returns (object, created).
        """
        if not field_manager:
            raise errors.invalid(
                rt.kind,
                rt.group,
                name,
                [
                    (
                        "FieldValueRequired",
                        "fieldManager",
                        "Required value: is required for apply patch",
                    )
                ],
            )
        try:
            body = yaml.safe_load(raw.decode())
        except (yaml.YAMLError, UnicodeDecodeError) as err:
            raise errors.bad_request(f"error decoding YAML: {err}") from err
        if not isinstance(body, dict):
            raise errors.bad_request("an apply patch must be an object")
        body.setdefault("metadata", {})
        if isinstance(body["metadata"], dict):
            body["metadata"].setdefault("name", name)
        old = self.store.get(rt.key, namespace if rt.namespaced else "", name)
        if old is None:
            if subresource:
                raise errors.not_found(rt.plural, rt.group, name)
            return self.create(rt, namespace, body, dry_run=dry_run), True
        current = self.view(rt, old)
        merged = merge_patch(current, body) if rt.custom else strategic_merge(current, body)
        return self.update(rt, namespace, name, merged, subresource=subresource, dry_run=dry_run)[
            0
        ], False

    # ---- delete ------------------------------------------------------------------------------

    def delete(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        *,
        options: Any = None,
        dry_run: bool = False,
    ) -> Obj:
        """DELETE; returns the deleted object or a Status, as the real type does."""
        ns = namespace if rt.namespaced else ""
        old = self.store.get(rt.key, ns, name)
        if old is None:
            raise errors.not_found(rt.plural, rt.group, name)
        self._check_preconditions(rt, old, options)
        meta = old["metadata"]
        if dry_run:
            return self.view(rt, old)
        if meta.get("finalizers") and rt.key != NAMESPACES:
            if meta.get("deletionTimestamp"):
                return self.view(rt, old)
            marked = {
                **old,
                "metadata": {
                    **meta,
                    "deletionTimestamp": format_time(self.clock()),
                    "deletionGracePeriodSeconds": 0,
                },
            }
            return self.view(rt, self.store.put(rt.key, marked))
        if rt.key == NAMESPACES:
            self._empty_namespace(name)
        last = self.store.remove(rt.key, ns, name) or old
        if rt.key in _RETURNS_OBJECT:
            return self.view(rt, last)
        details: dict[str, Any] = {"name": name, "kind": rt.plural, "uid": meta["uid"]}
        if rt.group:
            details["group"] = rt.group
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        }

    def _check_preconditions(self, rt: ResourceType, old: Obj, options: Any) -> None:
        pre = (options or {}).get("preconditions") if isinstance(options, dict) else None
        if not isinstance(pre, dict):
            return
        meta = old["metadata"]
        for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            if pre.get(field) and pre[field] != meta.get(field):
                why = (
                    f"Precondition failed: {label} in precondition: {pre[field]}, {label} in "
                    f"object meta: {meta.get(field)}"
                )
                raise errors.conflict(rt.plural, rt.group, meta["name"], why)

    def _empty_namespace(self, name: str) -> None:
        for key in self.store.resource_keys():
            for obj in self.store.list(key, name):
                self.store.remove(key, name, obj["metadata"]["name"])

    def delete_collection(
        self,
        rt: ResourceType,
        namespace: str | None,
        *,
        labels: Selector,
        fields: tuple[FieldRequirement, ...],
    ) -> builtins.list[Obj]:
        victims = self.list(rt, namespace, labels=labels, fields=fields)
        return [
            self.delete(rt, o["metadata"].get("namespace", ""), o["metadata"]["name"])
            for o in victims
        ]
