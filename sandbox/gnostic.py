"""OpenAPI v2 as protobuf, the form kubectl asks /openapi/v2 for.

client-go's `OpenAPISchema()` accepts only `application/com.github.proto-openapi.spec.v2@v1.0
+protobuf`: a gnostic `openapi.v2.Document` message. This encodes the JSON document `openapi.v2`
builds, driven by a table of the gnostic messages it uses (field numbers from gnostic's
OpenAPIv2.proto); values kubectl reads as free-form (`default`, `enum`, `x-*` extensions) go in
gnostic's `Any` as YAML text (JSON is YAML).
"""

from __future__ import annotations

import json
import struct
from typing import Any

from sandbox.protoencode import varint as _varint

MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # what clients ask for
# what kube-openapi answers with: Go's mime parser refuses the "@" of the requested name
CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

# field kinds: s string, b bool, d double, i int64, rs repeated string, a Any, ra repeated Any,
# m message, rm repeated message, map name->message (repeated Named* {1 name, 2 value}),
# x the vendor extensions (every `x-` key) as repeated NamedAny
Field = tuple[str, int, str]
MESSAGES: dict[str, dict[str, Field]] = {
    "Document": {
        "swagger": ("s", 1, ""),
        "info": ("m", 2, "Info"),
        "paths": ("m", 8, "Paths"),
        "definitions": ("m", 9, "Definitions"),
        "x-": ("x", 16, ""),
    },
    "Info": {"title": ("s", 1, ""), "version": ("s", 2, ""), "description": ("s", 3, "")},
    "Paths": {"": ("map", 2, "PathItem")},
    "Definitions": {"": ("map", 1, "Schema")},
    "Properties": {"": ("map", 1, "Schema")},
    "PathItem": {
        "get": ("m", 2, "Operation"),
        "put": ("m", 3, "Operation"),
        "post": ("m", 4, "Operation"),
        "delete": ("m", 5, "Operation"),
        "patch": ("m", 8, "Operation"),
    },
    "Operation": {
        "description": ("s", 3, ""),
        "operationId": ("s", 5, ""),
        "parameters": ("rm", 8, "ParametersItem"),
        "responses": ("m", 9, "Responses"),
        "x-": ("x", 13, ""),
    },
    # only query parameters are written: ParametersItem.parameter(1) -> Parameter
    # .non_body_parameter(2) -> NonBodyParameter.query_parameter_sub_schema(3)
    "QueryParameter": {
        "required": ("b", 1, ""),
        "in": ("s", 2, ""),
        "description": ("s", 3, ""),
        "name": ("s", 4, ""),
        "type": ("s", 6, ""),
        "uniqueItems": ("b", 20, ""),
    },
    "Responses": {"": ("map", 1, "ResponseValue")},
    "Response": {"description": ("s", 1, "")},
    "Schema": {
        "$ref": ("s", 1, ""),
        "format": ("s", 2, ""),
        "title": ("s", 3, ""),
        "description": ("s", 4, ""),
        "default": ("a", 5, ""),
        "multipleOf": ("d", 6, ""),
        "maximum": ("d", 7, ""),
        "exclusiveMaximum": ("b", 8, ""),
        "minimum": ("d", 9, ""),
        "exclusiveMinimum": ("b", 10, ""),
        "maxLength": ("i", 11, ""),
        "minLength": ("i", 12, ""),
        "pattern": ("s", 13, ""),
        "maxItems": ("i", 14, ""),
        "minItems": ("i", 15, ""),
        "uniqueItems": ("b", 16, ""),
        "maxProperties": ("i", 17, ""),
        "minProperties": ("i", 18, ""),
        "required": ("rs", 19, ""),
        "enum": ("ra", 20, ""),
        "additionalProperties": ("m", 21, "AdditionalPropertiesItem"),
        "type": ("m", 22, "TypeItem"),
        "items": ("m", 23, "ItemsItem"),
        "allOf": ("rm", 24, "Schema"),
        "properties": ("m", 25, "Properties"),
        "discriminator": ("s", 26, ""),
        "readOnly": ("b", 27, ""),
        "example": ("a", 30, ""),
        "x-": ("x", 31, ""),
    },
}


def _tag(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _bytes(number: int, payload: bytes) -> bytes:
    return _tag(number, 2) + _varint(len(payload)) + payload


def _string(number: int, text: str) -> bytes:
    return _bytes(number, text.encode())


def _any(value: Any) -> bytes:
    return _string(2, json.dumps(value))  # gnostic Any: 2 yaml


def _named(number: int, name: str, payload: bytes) -> bytes:
    return _bytes(number, _string(1, name) + _bytes(2, payload))


def _scalar(kind: str, number: int, value: Any) -> bytes:
    if kind == "s":
        return _string(number, str(value))
    if kind == "b":
        return _tag(number, 0) + _varint(int(bool(value)))
    if kind == "i":
        return _tag(number, 0) + _varint(int(value))
    if kind == "d":
        return _tag(number, 1) + struct.pack("<d", float(value))
    if kind == "rs":
        return b"".join(_string(number, str(v)) for v in value)
    if kind == "a":
        return _bytes(number, _any(value))
    return b"".join(_bytes(number, _any(v)) for v in value)  # ra


def encode(message: str, value: Any) -> bytes:
    """`value` (a JSON document of gnostic message `message`) as protobuf."""
    special = _SPECIAL.get(message)
    if special is not None:
        return special(value)
    table = MESSAGES[message]
    if "" in table:  # a map message: every key is an entry
        _, number, inner = table[""]
        return b"".join(_named(number, k, encode(inner, v)) for k, v in value.items())
    out = bytearray()
    extensions = b""
    for key, item in value.items():
        if key.startswith("x-") and "x-" in table:
            extensions += _named(table["x-"][1], key, _any(item))
            continue
        spec = table.get(key)
        if spec is None or item is None:
            continue  # nothing else in the documents we build; kubectl ignores the rest
        kind, number, inner = spec
        if kind == "m":
            out += _bytes(number, encode(inner, item))
        elif kind == "rm":
            out += b"".join(_bytes(number, encode(inner, v)) for v in item)
        else:
            out += _scalar(kind, number, item)
    return bytes(out) + extensions


def _parameters_item(value: dict[str, Any]) -> bytes:
    query = encode("QueryParameter", value)
    return _bytes(1, _bytes(2, _bytes(3, query)))


def _response_value(value: dict[str, Any]) -> bytes:
    return _bytes(1, encode("Response", value))  # ResponseValue: 1 response


def _additional(value: Any) -> bytes:
    if isinstance(value, bool):  # AdditionalPropertiesItem: 1 schema, 2 boolean
        return _tag(2, 0) + _varint(int(value))
    return _bytes(1, encode("Schema", value))


def _type_item(value: Any) -> bytes:
    return b"".join(_string(1, t) for t in ([value] if isinstance(value, str) else value))


def _items_item(value: Any) -> bytes:
    schemas = value if isinstance(value, list) else [value]
    return b"".join(_bytes(1, encode("Schema", s)) for s in schemas)


_SPECIAL = {
    "ParametersItem": _parameters_item,
    "ResponseValue": _response_value,
    "AdditionalPropertiesItem": _additional,
    "TypeItem": _type_item,
    "ItemsItem": _items_item,
}


def document(doc: dict[str, Any]) -> bytes:
    return encode("Document", doc)
