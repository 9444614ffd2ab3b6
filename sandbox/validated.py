"""Create, update and patch bodies under the request's `fieldValidation` (see fieldvalidation)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from sandbox import errors, fieldvalidation, protobuf
from sandbox.bodies import decode, read_raw
from sandbox.operations import Api
from sandbox.patchbody import apply_patch
from sandbox.requestinfo import RequestInfo
from sandbox.resources import ResourceType
from sandbox.store import Obj


def _protobuf(raw: bytes, content_type: str) -> Any:
    # protobuf has no unknown or duplicate fields to report
    try:
        return protobuf.decode(raw)
    except protobuf.ProtobufError as err:
        raise errors.unsupported_media_type(f"{content_type} ({err})") from err


async def read_object(
    request: web.Request, rt: ResourceType, options_kind: str
) -> tuple[Any, list[str]]:
    """A create/update body under the request's fieldValidation: (body, warnings to send)."""
    mode = fieldvalidation.directive(request.query, options_kind)
    if "protobuf" in request.content_type:
        return _protobuf(await read_raw(request), request.content_type), []
    raw = await read_raw(request)
    if not raw.strip():
        return decode(raw, request.content_type), []  # raises upstream's 400
    body, findings = fieldvalidation.decode_object(rt, raw, request.content_type)
    if findings and mode == fieldvalidation.STRICT:
        raise fieldvalidation.strict_error(rt, findings, decoding=True)
    return body, findings.warnings() if mode == fieldvalidation.WARN else []


async def patch(
    request: web.Request,
    api: Api,
    rt: ResourceType,
    namespace: str,
    info: RequestInfo,
    *,
    dry_run: bool,
) -> tuple[Obj, list[str]]:
    """Merge, strategic merge or JSON patch, under the request's fieldValidation."""
    mode = fieldvalidation.directive(request.query, "PatchOptions")
    raw = await read_raw(request)
    old = api.get(rt, namespace, info.name)
    patched = apply_patch(rt, old, request.content_type, raw)
    cleaned, unknown = fieldvalidation.unknown_after_patch(rt, old, patched)
    found = fieldvalidation.patch_findings(request.content_type, raw) + unknown
    findings = fieldvalidation.Findings(tuple(found))
    if findings and mode == fieldvalidation.STRICT:
        raise fieldvalidation.strict_error(rt, findings, decoding=False)
    obj, _ = api.update(
        rt, namespace, info.name, cleaned, subresource=info.subresource, dry_run=dry_run
    )
    return obj, list(found) if mode == fieldvalidation.WARN else []


def warn(response: web.Response, warnings: list[str]) -> web.Response:
    for text in warnings:
        response.headers.add("Warning", fieldvalidation.warning_header(text))
    return response
