"""Watch streams as protobuf (`application/vnd.kubernetes.protobuf;stream=watch`).

client-go's typed informers watch built-in kinds with protobuf first in Accept. Upstream's
stream serializer for protobuf is the *raw* one: each event is a 4-byte big-endian length, then
a meta/v1 WatchEvent message (1 type, 2 RawExtension {1 raw}) with no `k8s\\x00` envelope of its
own; `raw` holds the object as the ordinary serializer writes it, envelope included. The
response's Content-Type is the media type with `;stream=watch`; a JSON stream's stays
`application/json`. Custom resources have no protobuf (a CRD's serializers are JSON and YAML):
a client that accepts only protobuf gets 406, one that also accepts JSON gets JSON.
"""

from __future__ import annotations

from typing import Any

from sandbox import errors, protomessages
from sandbox.protoencode import (
    JSON_MEDIA,
    MEDIA_TYPE,
    CannotEncode,
    _field,  # the same wire writer as responses
    accept_clauses,
    encode,
    encode_message,
    envelope,
)

CONTENT_TYPE = f"{MEDIA_TYPE};stream=watch"
JSON_STREAM = "application/json;stream=watch"

__all__ = ["CONTENT_TYPE", "CannotEncode", "accepts_json", "frame", "negotiate"]


def _streamable(accept: str) -> list[str]:
    """Media types of the clauses a watch can be served as, in the client's preference."""
    found = []
    for media, params in accept_clauses(accept):
        if params.get("stream", "watch") != "watch":
            continue  # another stream schema than watch matches nothing, as upstream
        if media == MEDIA_TYPE and "as" in params:
            continue  # objects as protobuf Tables: the sandbox writes Tables as JSON only
        found.append(media)
    return found


def negotiate(accept: str, *, api_version: str, kind: str) -> bool:
    """True to stream protobuf, False for JSON; 406 when the client accepts neither."""
    protobuf_ok = protomessages.message_for(api_version, kind) is not None
    if not accept.strip():
        return False  # no Accept: the server's first serializer, JSON
    for media in _streamable(accept):
        if media in JSON_MEDIA:
            return False
        if media == MEDIA_TYPE and protobuf_ok:
            return True
    accepted = [JSON_STREAM, CONTENT_TYPE] if protobuf_ok else [JSON_STREAM]
    raise errors.not_acceptable(accepted)


def accepts_json(accept: str) -> bool:
    """Whether JSON would do too, for a stream whose first objects protobuf cannot say."""
    return not accept.strip() or any(m in JSON_MEDIA for m in _streamable(accept))


def _length_delimited(message: bytes) -> bytes:
    return len(message).to_bytes(4, "big") + message


def frame(event_type: str, obj: dict[str, Any]) -> bytes:
    """One framed WatchEvent; CannotEncode when the table cannot say the object whole."""
    if obj.get("kind") == "Status":  # an ERROR event: metav1.Status, in every group as v1
        body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        raw = envelope("v1", "Status", encode_message("Status", body))
    else:
        raw = encode(obj)
    event = _field(1, event_type.encode()) + _field(2, _field(1, raw))
    return _length_delimited(event)
