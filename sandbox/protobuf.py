"""Just enough of Kubernetes' protobuf encoding to read what kubectl sends as protobuf.

kubectl's typed clients POST some bodies as `application/vnd.kubernetes.protobuf`
(`kubectl auth can-i`, `kubectl create namespace|configmap|secret`); the answer may be JSON.
Field numbers are those of k8s.io/api's generated.proto. Other kinds are 415.
"""

from __future__ import annotations

import base64
from typing import Any

from sandbox import protomessages

MAGIC = b"k8s\x00"


class ProtobufError(ValueError):
    """The body is not a protobuf message this module understands."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def fields(data: bytes) -> dict[int, list[bytes | int]]:
    """Field number -> values (length-delimited as bytes, varints as int)."""
    found: dict[int, list[bytes | int]] = {}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            found.setdefault(number, []).append(value)
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise ProtobufError(f"field {number} is truncated ({size} bytes announced)")
            found.setdefault(number, []).append(data[pos : pos + size])
            pos += size
        elif wire == 1:  # a double (JSONSchemaProps' bounds); the table says where it may be
            if pos + 8 > len(data):
                raise ProtobufError(f"field {number} is truncated (a 64-bit value)")
            found.setdefault(number, []).append(protomessages.Fixed64(data[pos : pos + 8]))
            pos += 8
        elif wire == 5:  # no message of the table has a 32-bit fixed field: never skip one
            raise ProtobufError(f"field {number} has a fixed-width value the sandbox does not read")
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
    return found


def _str(msg: dict[int, list[bytes | int]], number: int) -> str:
    value = msg.get(number, [b""])[-1]
    return value.decode() if isinstance(value, bytes) else str(value)


def _msg(msg: dict[int, list[bytes | int]], number: int) -> dict[int, list[bytes | int]] | None:
    values = msg.get(number)
    value = values[-1] if values else None
    return fields(value) if isinstance(value, bytes) else None


_RESOURCE = ("namespace", "verb", "group", "version", "resource", "subresource", "name")


def _spec(spec: dict[int, list[bytes | int]], *, self_review: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # SelfSubjectAccessReviewSpec: 1 resourceAttributes, 2 nonResourceAttributes;
    # SubjectAccessReviewSpec: 1 resourceAttributes, 2 nonResourceAttributes, 3 user, 4 groups
    ra = _msg(spec, 1)
    if ra is not None:
        out["resourceAttributes"] = {
            k: _str(ra, i + 1) for i, k in enumerate(_RESOURCE) if i + 1 in ra
        }
    nra = _msg(spec, 2)
    if nra is not None:
        out["nonResourceAttributes"] = {"path": _str(nra, 1), "verb": _str(nra, 2)}
    if not self_review:
        out["user"] = _str(spec, 3)
        out["groups"] = [g.decode() for g in spec.get(4, []) if isinstance(g, bytes)]
    return out


def _map(msg: dict[int, list[bytes | int]], number: int, *, text: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in msg.get(number, []):
        if isinstance(entry, bytes):
            kv = fields(entry)
            value = kv.get(2, [b""])[-1]
            raw = value if isinstance(value, bytes) else b""
            out[_str(kv, 1)] = raw.decode() if text else base64.b64encode(raw).decode()
    return out


_META = (("name", 1), ("generateName", 2), ("namespace", 3), ("uid", 5), ("resourceVersion", 6))


def _meta(msg: dict[int, list[bytes | int]] | None) -> dict[str, Any]:
    # ObjectMeta: 1 name, 2 generateName, 3 namespace, 5 uid, 6 resourceVersion, 11 labels,
    # 12 annotations, 14 finalizers
    if msg is None:
        return {}
    meta: dict[str, Any] = {k: _str(msg, n) for k, n in _META if n in msg}
    for key, number in (("labels", 11), ("annotations", 12)):
        if number in msg:
            meta[key] = _map(msg, number)
    if 14 in msg:
        meta["finalizers"] = [f.decode() for f in msg[14] if isinstance(f, bytes)]
    return meta


def _object(kind: str, obj: dict[int, list[bytes | int]]) -> dict[str, Any]:
    out: dict[str, Any] = {"metadata": _meta(_msg(obj, 1))}
    if kind == "ConfigMap":  # 2 data, 3 binaryData
        if 2 in obj:
            out["data"] = _map(obj, 2)
        if 3 in obj:
            out["binaryData"] = _map(obj, 3, text=False)
    elif kind == "Secret":  # 2 data (bytes), 3 type, 4 stringData
        if 2 in obj:
            out["data"] = _map(obj, 2, text=False)
        if 3 in obj:
            out["type"] = _str(obj, 3)
        if 4 in obj:
            out["stringData"] = _map(obj, 4)
    elif kind == "DeleteOptions":  # 2 preconditions {1 uid, 2 resourceVersion}, 4 propagation
        pre = _msg(obj, 2)
        if pre is not None:
            out["preconditions"] = {
                k: _str(pre, n) for k, n in (("uid", 1), ("resourceVersion", 2)) if n in pre
            }
        if 4 in obj:
            out["propagationPolicy"] = _str(obj, 4)
        del out["metadata"]
    elif kind in ("SelfSubjectAccessReview", "SubjectAccessReview"):
        out["spec"] = _spec(_msg(obj, 2) or {}, self_review=kind.startswith("Self"))
    return out


SUPPORTED = {
    "Namespace",
    "ConfigMap",
    "Secret",
    "DeleteOptions",
    "SelfSubjectAccessReview",
    "SubjectAccessReview",
}


def decode(raw: bytes) -> dict[str, Any]:
    """A protobuf-encoded object of a SUPPORTED kind, as its JSON document."""
    if not raw.startswith(MAGIC):
        raise ProtobufError("missing the k8s protobuf magic prefix")
    unknown = fields(raw[len(MAGIC) :])
    type_meta = _msg(unknown, 1) or {}
    api_version, kind = _str(type_meta, 1), _str(type_meta, 2)
    body = unknown.get(2, [b""])[-1]
    message = fields(body if isinstance(body, bytes) else b"")
    top = protomessages.message_for(api_version, kind)
    if top is not None:
        try:
            obj = protomessages.decode_message(top, message, fields)
        except protomessages.BadField as err:
            raise ProtobufError(str(err)) from err
        return {"apiVersion": api_version, "kind": kind, **obj}
    if kind not in SUPPORTED:
        raise ProtobufError(f"protobuf bodies of {api_version} {kind!r} are not supported")
    obj = _object(kind, message)
    return {"apiVersion": api_version, "kind": kind, **obj}
