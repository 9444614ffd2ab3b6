"""Protobuf responses (`application/vnd.kubernetes.protobuf`) encoded from the message table.

A client that lists the protobuf media type first in Accept (client-go's typed clients with a
protobuf content config send `application/vnd.kubernetes.protobuf, application/json`) gets
protobuf for objects and lists of the kinds `protomessages.KINDS` describes: `k8s\\x00` and a
runtime.Unknown (1 TypeMeta {1 apiVersion, 2 kind}, 2 raw message, 3 contentEncoding, 4
contentType). Anything the table cannot encode whole (a field it lacks, a custom resource, a
Status, a Table, a watch stream) stays JSON, which such clients accept too; a field is never
dropped to make an object fit.
"""

from __future__ import annotations

import base64
import functools
import json
import struct
from typing import Any

from aiohttp import web

from common.kubetime import parse_time, parse_time_ns
from sandbox import protomessages
from sandbox.protobuf import MAGIC

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
_TYPE_META = ("apiVersion", "kind")  # in the envelope, not in the message
_LIST_META = {"selfLink": 1, "resourceVersion": 2, "continue": 3, "remainingItemCount": 4}


class CannotEncode(ValueError):
    """The object has something the table does not describe: answer JSON instead."""


_ONE_BYTE = [bytes((n,)) for n in range(0x80)]  # most tags and lengths: one byte, no loop


def varint(value: int) -> bytes:
    """A protobuf varint (negative int64s as ten-byte two's complement)."""
    if 0 <= value < 0x80:
        return _ONE_BYTE[value]
    value &= (1 << 64) - 1  # negative int64s are ten-byte two's complement
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _int(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


@functools.cache  # the table never changes: one name index per message
def _fields_by_name(message: str) -> dict[str, tuple[int, bool, str]]:
    table = protomessages.messages()[message]
    return {name: (number, rep, kind) for number, (name, rep, kind, _) in table.items()}


def encode_message(message: str, obj: dict[str, Any]) -> bytes:
    """`obj` (JSON) as `message`, fields in number order as Go writes them."""
    by_name = _fields_by_name(message)
    inlined = {k: v for k, v in obj.items() if k not in by_name}
    if inlined and protomessages.INLINE in by_name:  # fields of an inlined message
        obj = {k: v for k, v in obj.items() if k in by_name} | {protomessages.INLINE: inlined}
    parts: list[tuple[int, bytes]] = []
    for key, value in obj.items():
        if value is None:
            continue  # null is an absent field, whatever its type
        if key not in by_name:
            raise CannotEncode(f"{message} has no field {key!r} in the table")
        number, repeated, kind = by_name[key]
        listed = repeated and not protomessages.is_map(kind)
        if listed and not isinstance(value, list):
            raise CannotEncode(f"{message}.{key} is not a list")
        values = value if listed else [value]
        parts.append((number, b"".join(_value(number, kind, v) for v in values)))
    return b"".join(payload for _, payload in sorted(parts, key=lambda p: p[0]))


def _value(number: int, kind: str, value: Any) -> bytes:
    if value is None:
        return b""  # null is an absent field
    if kind in ("int", "bool"):
        if not isinstance(value, int):
            raise CannotEncode(f"field {number}: {value!r} is not an integer")
        return _int(number, int(value))
    if kind == "string":
        return _field(number, str(value).encode())
    if kind == "bytes":
        return _field(number, base64.b64decode(value))
    if kind == "double":  # wire type 1: eight little-endian bytes
        if not isinstance(value, int | float):
            raise CannotEncode(f"field {number}: {value!r} is not a number")
        return varint(number << 3 | 1) + struct.pack("<d", float(value))
    if protomessages.is_map(kind):
        if not isinstance(value, dict):
            raise CannotEncode(f"field {number}: {value!r} is not a map")
        inner = {"map": "string", "qmap": "quantity", "bmap": "bytes"}.get(kind, kind[4:])
        return b"".join(
            _field(number, _field(1, k.encode()) + _value(2, inner, v))
            for k, v in sorted(value.items())  # Go writes map entries sorted by key
        )
    return _field(number, _special(kind, value))


def _special(kind: str, value: Any) -> bytes:
    if kind == "quantity":
        return _field(1, str(value).encode())
    if kind == "intstr":  # 1 type (0 int, 1 string), 2 intVal, 3 strVal
        if isinstance(value, str):
            return _int(1, 1) + _field(3, value.encode())
        return _int(1, 0) + _int(2, int(value))
    if kind == "time":  # 1 seconds, 2 nanos (Time has whole seconds)
        return _int(1, int(parse_time(str(value)).timestamp()))
    if kind == "mtime":  # MicroTime: 1 seconds, 2 nanos (zero nanos are not written)
        seconds, nanos = divmod(parse_time_ns(str(value)), 1_000_000_000)
        return _int(1, seconds) + (_int(2, nanos) if nanos else b"")
    if kind == "json":  # 1 raw: the value's JSON text
        return _field(1, json.dumps(value, separators=(",", ":")).encode())
    if kind in protomessages.SCHEMA_OR:
        return _schema_or(kind, value)
    if not isinstance(value, dict):
        raise CannotEncode(f"{kind}: {value!r} is not an object")
    return encode_message(kind, value)


def _schema_or(kind: str, value: Any) -> bytes:
    """A schema, or the list / bool / strings its JSON may be instead (as Go unmarshals it)."""
    if kind == "schemaOrBool":  # 1 allows (true with a schema), 2 schema
        if isinstance(value, bool):
            return _int(1, int(value))
        return _int(1, 1) + _field(2, _special("JSONSchemaProps", value))
    if isinstance(value, list):  # 2: the schemas, or the property names
        inner = "JSONSchemaProps" if kind == "schemaOrArray" else "string"
        return b"".join(_value(2, inner, v) for v in value)
    return _field(1, _special("JSONSchemaProps", value))


def encode(doc: dict[str, Any]) -> bytes:
    """A JSON object or list of a kind in the table, as the protobuf envelope."""
    api_version, kind = str(doc.get("apiVersion", "")), str(doc.get("kind", ""))
    body = {k: v for k, v in doc.items() if k not in _TYPE_META}
    item_kind = kind.removesuffix("List") if kind.endswith("List") else ""
    top = protomessages.message_for(api_version, item_kind or kind)
    if top is None:
        raise CannotEncode(f"{api_version} {kind} is not in the table")
    raw = _list(top, body) if item_kind else encode_message(top, body)
    return envelope(api_version, kind, raw)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """`k8s\\x00` and the runtime.Unknown around an encoded message, as Go writes it: its
    contentEncoding (3) and contentType (4) are written empty, not left out."""
    type_meta = _field(1, api_version.encode()) + _field(2, kind.encode())
    return MAGIC + _field(1, type_meta) + _field(2, raw) + _field(3, b"") + _field(4, b"")


def _list(top: str, body: dict[str, Any]) -> bytes:
    meta = body.get("metadata") or {}
    if set(body) - {"metadata", "items"} or set(meta) - set(_LIST_META):
        raise CannotEncode("a list field the table does not describe")
    meta_raw = b"".join(
        _int(n, int(meta[k])) if k == "remainingItemCount" else _field(n, str(meta[k]).encode())
        for k, n in _LIST_META.items()
        if k in meta
    )
    items = b"".join(
        _field(2, encode_message(top, {k: v for k, v in item.items() if k not in _TYPE_META}))
        for item in body.get("items") or []
    )
    return _field(1, meta_raw) + items


def accept_clauses(accept: str) -> list[tuple[str, dict[str, str]]]:
    """Accept's media types with their parameters, most preferred first (by q, then order)."""
    found: list[tuple[float, int, str, dict[str, str]]] = []
    for index, clause in enumerate(accept.split(",")):
        media, *raw_params = (part.strip() for part in clause.split(";"))
        params = dict(p.partition("=")[::2] for p in raw_params if p)
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 0.0  # a malformed weight: skipped, as goautoneg does
        if media and q > 0:
            found.append((-q, index, media.lower(), params))
    return [(media, params) for _, _, media, params in sorted(found)]


# clauses that select JSON: what upstream's negotiation matches against its first serializer
JSON_MEDIA = ("application/json", "application/*", "*/*")


def wants_protobuf(accept: str) -> bool:
    """Protobuf is the client's most preferred type the sandbox writes (by q, then order, as
    upstream's negotiation); JSON otherwise (kubectl and most clients prefer JSON, or list
    only it). Protobuf Tables (`as=Table`) are not written: such a clause is passed over."""
    for media, params in accept_clauses(accept):
        if media == MEDIA_TYPE and "as" not in params:
            return True
        if media in JSON_MEDIA:
            return False
    return False


def negotiate(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
    """The JSON `response` as protobuf when the client prefers it and the table covers it."""
    if not wants_protobuf(request.headers.get("Accept", "")):
        return response
    if not isinstance(response, web.Response) or response.content_type != "application/json":
        return response
    body = response.body
    if not isinstance(body, bytes) or response.status >= 300:
        return response  # a Status stays JSON, as client-go reads errors either way
    try:
        data = encode(json.loads(body))
    except (CannotEncode, ValueError, TypeError, KeyError, AttributeError):
        return response
    out = web.Response(body=data, status=response.status, content_type=MEDIA_TYPE)
    for name in response.headers.getall("Warning", []):
        out.headers.add("Warning", name)
    return out
