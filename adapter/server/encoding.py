"""Compact JSON bodies, byte for byte what `json.dumps(body, separators=(",", ":"))` writes.

orjson encodes our documents several times faster than the standard library (the encoder was
8% of a wildcard request's CPU). Its output equals the standard library's for every document
of ASCII text, ints, bools, None, lists and str-keyed dicts, which is all the metrics APIs
send (values are Quantity strings, windows ints: no floats, whose exponent notation differs
between the two). They differ where orjson writes non-ASCII text or DEL as is (the standard
library writes `\\uXXXX` escapes) or refuses a value (a non-str key, an int past 64 bits);
those documents, rare here (a label value with an accent), go through the standard library, so
the bytes on the wire never change (`tests/adapter/test_encoding.py` over random documents).

Parts that many items share, or that requests repeat, can be encoded once (`fragment`, by
`dumps`, so with the same escapes) and put into a document as orjson `Fragment`s, which the
encoder copies as they are (`dumps_fragments`). orjson's output keeps a 4 KB buffer behind it:
`fragment` copies, and so must anything else that keeps an output for long.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["Fragment", "dumps", "dumps_fragments", "fragment"]

Fragment = orjson.Fragment


def dumps(body: Any) -> bytes:
    """`body` as compact JSON bytes, identical to the standard library's ASCII output."""
    try:
        out = orjson.dumps(body)
    except TypeError:  # orjson.JSONEncodeError is a TypeError: a value it cannot encode
        return _stdlib(body)
    # the standard library escapes DEL (0x7f) too, orjson writes it as is
    return out if out.isascii() and b"\x7f" not in out else _stdlib(body)


def fragment(value: Any) -> Fragment:
    """`value` encoded once, by `dumps`, to be put as is into documents `dumps_fragments` writes
    (orjson's `Fragment`): the parts many items share, or that requests repeat. The bytes are a
    copy of their own size, so a fragment kept for long holds no encoder buffer."""
    return Fragment(bytes(memoryview(dumps(value))))


def dumps_fragments(body: Any) -> bytes | None:
    """`body`, which may hold Fragments, as compact JSON: `dumps`' bytes when every text outside
    the fragments is ASCII without DEL, as the fragments are; None otherwise (the standard
    library cannot write fragments: encode the document without them)."""
    try:
        out = orjson.dumps(body)
    except TypeError:
        return None
    return out if out.isascii() and b"\x7f" not in out else None


def _stdlib(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()
