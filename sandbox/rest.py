"""REST handlers for resources: get, list, watch, create, update, patch, delete, subresources.

`serve_resource` is given a parsed `RequestInfo` of an authenticated, authorized request and
maps every failure to a `metav1.Status` through `ApiError`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from aiohttp import web

from common.selectors import (
    FieldRequirement,
    Selector,
    SelectorError,
    parse_field_selector,
    parse_selector,
)
from sandbox import auth, errors, protobuf, protowatch, scale, tables, validated, wirejson
from sandbox.bodies import decode, read_raw, respond
from sandbox.operations import Api
from sandbox.patchbody import APPLY
from sandbox.requestinfo import RequestInfo
from sandbox.resources import Registry, ResourceType
from sandbox.shapes import check_field_selector, matches_fields
from sandbox.store import Obj
from sandbox.watch import TRUE, WatchOptions, serve_watch

REVIEWS = {
    ("authentication.k8s.io", "tokenreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
}


@dataclass(frozen=True)
class RestContext:
    """What the handlers need from the sandbox."""

    api: Api
    registry: Registry
    policy: Callable[[], auth.Policy]
    bookmark_interval: float
    watch_timeout: float
    # the fault plan's say on a watch (sandbox.faults); None: watches as configured
    watch_faults: Callable[[RequestInfo, WatchOptions], WatchOptions] | None = None


def matcher(
    api: Api, rt: ResourceType, labels: Selector, fields: tuple[FieldRequirement, ...]
) -> Callable[[Obj], bool]:
    """Whether a stored object, seen as `rt` serves it, passes the selectors."""

    def matches(obj: Obj) -> bool:
        view = api.view(rt, obj)
        return labels.matches(view["metadata"].get("labels") or {}) and matches_fields(
            rt, view, fields
        )

    return matches


def selectors(query: Any) -> tuple[Selector, tuple[FieldRequirement, ...]]:
    try:
        labels = parse_selector(query.get("labelSelector", ""))
    except SelectorError as err:
        raise errors.bad_request(f"unable to parse requirement: {err}") from err
    try:
        fields = parse_field_selector(query.get("fieldSelector", ""))
    except SelectorError as err:
        raise errors.bad_request(str(err)) from err
    return labels, fields


def _resolve(ctx: RestContext, info: RequestInfo) -> ResourceType:
    rt = ctx.registry.lookup(info.group, info.version, info.resource)
    if rt is None or len(info.parts) > 3:
        raise errors.path_not_found()
    if rt.namespaced and info.name and not info.namespace:
        raise errors.path_not_found()
    if not rt.namespaced and info.namespace and rt.key != ("", "namespaces"):
        raise errors.path_not_found()
    sub = info.subresource
    if sub and not ((sub == "status" and rt.status_subresource) or (sub == "scale" and rt.scale)):
        raise errors.path_not_found()
    return rt


async def serve_resource(
    request: web.Request, ctx: RestContext, info: RequestInfo, user: auth.User
) -> web.StreamResponse:
    try:
        return await _serve_resource(request, ctx, info, user)
    except (TypeError, AttributeError, KeyError, ValueError) as err:
        # a body of the right JSON kinds at the top but the wrong ones deeper down: the real
        # server refuses it while decoding into the Go types, with a 400
        if request.method in ("GET", "HEAD"):
            raise
        raise errors.bad_request(
            f"the object could not be decoded: {type(err).__name__}: {err}"
        ) from err


async def _serve_resource(
    request: web.Request, ctx: RestContext, info: RequestInfo, user: auth.User
) -> web.StreamResponse:
    rt = _resolve(ctx, info)
    method = request.method
    namespace = info.namespace if rt.namespaced else ""
    dry_run = "All" in request.query.getall("dryRun", [])
    if rt.key in REVIEWS:
        if method != "POST" or info.name:
            raise errors.method_not_allowed(method)
        body = await read_body(request)
        return respond(_review(ctx, rt, body, user), status=201)
    if not info.name or (info.verb == "watch" and not info.subresource):
        # a watch on one object (`/watch/.../pods/x`, `.../pods/x?watch=1`) is a collection
        # watch narrowed to that name, as upstream
        return await _collection(request, ctx, rt, info, namespace, dry_run)
    if info.subresource == "scale":
        return await _scale(request, ctx, rt, namespace, info.name, dry_run)
    api = ctx.api
    if method in ("GET", "HEAD"):
        obj = api.get(rt, namespace, info.name)
        return _maybe_table(request, ctx, rt, [obj]) or respond(obj)
    if method == "PUT":
        body, warnings = await validated.read_object(request, rt, "UpdateOptions")
        obj, created = api.update(
            rt, namespace, info.name, body, subresource=info.subresource, dry_run=dry_run
        )
        return validated.warn(respond(obj, status=201 if created else 200), warnings)
    if method == "PATCH" and request.content_type == APPLY:
        obj, created = api.apply(
            rt,
            namespace,
            info.name,
            await read_raw(request),
            field_manager=request.query.get("fieldManager", ""),
            subresource=info.subresource,
            dry_run=dry_run,
        )
        return respond(obj, status=201 if created else 200)
    if method == "PATCH":
        obj, warnings = await validated.patch(request, api, rt, namespace, info, dry_run=dry_run)
        return validated.warn(respond(obj), warnings)
    if method == "DELETE" and not info.subresource:
        options = await read_body(request, optional=True)
        result = api.delete(rt, namespace, info.name, options=options, dry_run=dry_run)
        pending = result.get("kind") != "Status" and bool(
            result["metadata"].get("deletionTimestamp")
        )
        still_there = api.store.get(rt.key, namespace, info.name) is not None
        return respond(result, status=202 if pending and still_there else 200)
    raise errors.method_not_allowed(method)


async def _collection(
    request: web.Request,
    ctx: RestContext,
    rt: ResourceType,
    info: RequestInfo,
    namespace: str,
    dry_run: bool,
) -> web.StreamResponse:
    api, method, query = ctx.api, request.method, request.query
    scope = namespace if (rt.namespaced and namespace) else None
    if method in ("GET", "HEAD"):
        labels, fields = selectors(query)
        check_field_selector(rt, fields)
        if info.name:
            fields = (*fields, FieldRequirement("metadata.name", info.name))
        if info.verb == "watch":
            options = _watch_options(ctx, query, render=_table_render(request, ctx, rt))
            options = _watch_encoding(request, rt, options)
            if ctx.watch_faults is not None:
                options = ctx.watch_faults(info, options)
            return await serve_watch(
                request,
                api,
                rt,
                scope,
                matches=matcher(api, rt, labels, fields),
                options=options,
            )
        items = api.list(rt, scope, labels=labels, fields=fields)
        items, page_meta = paginate(items, query, rv=api.store.rv)
        return _maybe_table(request, ctx, rt, items) or _list_response(api, rt, items, page_meta)
    if method == "POST":
        if info.subresource:
            raise errors.method_not_allowed(method)
        body, warnings = await validated.read_object(request, rt, "CreateOptions")
        return validated.warn(
            respond(api.create(rt, namespace, body, dry_run=dry_run), status=201), warnings
        )
    if method == "DELETE":
        labels, fields = selectors(query)
        check_field_selector(rt, fields)
        deleted = api.delete_collection(rt, scope, labels=labels, fields=fields)
        return respond(
            _list_body(rt, [d for d in deleted if d.get("kind") != "Status"], api.store.rv)
        )
    raise errors.method_not_allowed(method)


async def read_body(request: web.Request, *, optional: bool = False) -> Any:
    """JSON, YAML, or the protobuf that kubectl's typed clients send for a few kinds."""
    raw = await read_raw(request)
    if optional and not raw.strip():
        return None
    if "protobuf" in request.content_type:
        try:
            return protobuf.decode(raw)
        except protobuf.ProtobufError as err:
            raise errors.unsupported_media_type(f"{request.content_type} ({err})") from err
    return decode(raw, request.content_type)


def paginate(items: list[Obj], query: Any, *, rv: int) -> tuple[list[Obj], dict[str, Any]]:
    """`limit`/`continue`: a page and its list metadata (continue token, remaining count).

    Pages are cut from the current state after the last key of the previous page, not from a
    snapshot at the first page's resourceVersion (which upstream keeps until compaction).
    """
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    start = 0
    if query.get("continue"):
        try:
            token = json.loads(base64.urlsafe_b64decode(query["continue"].encode()))
            after = (str(token["ns"]), str(token["name"]))
        except (ValueError, KeyError, TypeError) as err:
            raise errors.bad_request("continue key is not valid: invalid continue token") from err
        keys = [(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in items]
        start = next((i for i, k in enumerate(keys) if k > after), len(items))
    try:
        limit = int(query.get("limit") or 0)
    except ValueError as err:
        raise errors.bad_request(f"invalid limit: {query.get('limit')!r}") from err
    if limit <= 0 or start + limit >= len(items):
        return items[start:], meta
    page = items[start : start + limit]
    last = page[-1]["metadata"]
    token = {"ns": last.get("namespace", ""), "name": last["name"], "rv": rv}
    meta["continue"] = base64.urlsafe_b64encode(json.dumps(token).encode()).decode()
    meta["remainingItemCount"] = len(items) - start - limit
    return page, meta


def _list_response(
    api: Api, rt: ResourceType, items: list[Obj], meta: dict[str, Any]
) -> web.Response:
    """The list as JSON, reusing each stored object's cached encoding (LIST is the hot path)."""
    head = wirejson.dumps({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta})
    parts = b",".join(api.store.encode(rt.key, o) for o in items)
    body = head[:-1] + b',"items":[' + parts + b"]}"
    return web.Response(body=body, content_type="application/json")


def _list_body(rt: ResourceType, items: list[Obj], rv: int) -> Obj:
    return {
        "kind": rt.list_kind,
        "apiVersion": rt.api_version,
        "metadata": {"resourceVersion": str(rv)},
        "items": items,
    }


def _table_render(
    request: web.Request, ctx: RestContext, rt: ResourceType
) -> Callable[[Obj], bytes] | None:
    """Watch events as one-row Tables when kubectl asks for Tables (`kubectl get -w`)."""
    if "as=Table" not in request.headers.get("Accept", ""):
        return None
    include = request.query.get("includeObject", "Metadata")

    def render(obj: Obj) -> bytes:
        doc = tables.table(rt, [obj], include=include, now=ctx.api.clock())
        return wirejson.dumps(doc)

    return render


def _watch_encoding(request: web.Request, rt: ResourceType, options: WatchOptions) -> WatchOptions:
    """Protobuf frames when the client prefers them and the table has the kind (else JSON)."""
    accept = request.headers.get("Accept", "")
    protobuf = protowatch.negotiate(accept, api_version=rt.api_version, kind=rt.kind)
    return replace(options, protobuf=protobuf, json_fallback=protowatch.accepts_json(accept))


def _watch_options(
    ctx: RestContext, query: Any, *, render: Callable[[Obj], bytes] | None = None
) -> WatchOptions:
    timeout = ctx.watch_timeout
    if query.get("timeoutSeconds"):
        try:
            # 0 means unset, as upstream (the server's default applies)
            timeout = float(int(query["timeoutSeconds"])) or ctx.watch_timeout
        except ValueError as err:
            raise errors.bad_request(
                f"invalid timeoutSeconds: {query['timeoutSeconds']!r}"
            ) from err
    return WatchOptions(
        resource_version=query.get("resourceVersion", ""),
        timeout=timeout,
        bookmarks=query.get("allowWatchBookmarks") in TRUE,
        send_initial_events=query.get("sendInitialEvents") in TRUE,
        bookmark_interval=ctx.bookmark_interval,
        render=render,
    )


async def _scale(
    request: web.Request,
    ctx: RestContext,
    rt: ResourceType,
    namespace: str,
    name: str,
    dry_run: bool,
) -> web.Response:
    if request.method in ("GET", "HEAD"):
        return respond(scale.get_scale(ctx.api, rt, namespace, name))
    if request.method == "PUT":
        body = await read_body(request)
        return respond(scale.update_scale(ctx.api, rt, namespace, name, body, dry_run=dry_run))
    if request.method == "PATCH":
        raw = await read_raw(request)
        return respond(
            scale.patch_scale(
                ctx.api, rt, namespace, name, request.content_type, raw, dry_run=dry_run
            )
        )
    raise errors.method_not_allowed(request.method)


def _review(ctx: RestContext, rt: ResourceType, body: Any, user: auth.User) -> Obj:
    if not isinstance(body, dict) or not isinstance(body.get("spec"), dict):
        raise errors.invalid(
            rt.kind, rt.group, "", [("FieldValueRequired", "spec", "Required value")]
        )
    body = {
        **body,
        "apiVersion": rt.api_version,
        "kind": rt.kind,
        "metadata": body.get("metadata") or {},
    }
    policy = ctx.policy()
    if rt.plural == "tokenreviews":
        return auth.token_review(policy, body)
    if rt.plural == "selfsubjectaccessreviews":
        return auth.access_review(policy, body, user=user)
    spec = body["spec"]
    if not spec.get("user") and not spec.get("groups"):
        raise errors.invalid(
            rt.kind,
            rt.group,
            "",
            [
                (
                    "FieldValueRequired",
                    "spec.user",
                    "Required value: at least one of user or group must be specified",
                )
            ],
        )
    return auth.access_review(policy, body)


def _maybe_table(
    request: web.Request, ctx: RestContext, rt: ResourceType, items: list[Obj]
) -> web.Response | None:
    """A Table when kubectl asks for one (`Accept: ...;as=Table;...`), else None."""
    if "as=Table" not in request.headers.get("Accept", ""):
        return None
    include = request.query.get("includeObject", "Metadata")
    return respond(tables.table(rt, items, include=include, now=ctx.api.clock()))
