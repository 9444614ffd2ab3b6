"""Compact JSON bodies, byte for byte what `json.dumps(body, separators=(",", ":"))` writes.

orjson encodes our documents several times faster than the standard library (the encoder was
8% of a wildcard request's CPU). Its output equals the standard library's for every document
of ASCII text, ints, bools, None, lists and str-keyed dicts, which is all the metrics APIs
send (values are Quantity strings, windows ints: no floats, whose exponent notation differs
between the two). They differ where orjson writes non-ASCII text or DEL as is (the standard
library writes `\\uXXXX` escapes) or refuses a value (a non-str key, an int past 64 bits);
those documents, rare here (a label value with an accent), go through the standard library, so
the bytes on the wire never change (`tests/adapter/test_encoding.py` over random documents).

Compact JSON is compositional: text built from pieces `dumps` wrote is what `dumps` writes for
the whole (`adapter.server.documents` writes metric answers that way). orjson's output keeps a
4 KB buffer behind it: anything that keeps an output for long must keep a copy (decoded text,
or `bytes(memoryview(out))`).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["dumps"]


def dumps(body: Any) -> bytes:
    """`body` as compact JSON bytes, identical to the standard library's ASCII output."""
    try:
        out = orjson.dumps(body)
    except TypeError:  # orjson.JSONEncodeError is a TypeError: a value it cannot encode
        return _stdlib(body)
    # the standard library escapes DEL (0x7f) too, orjson writes it as is
    return out if out.isascii() and b"\x7f" not in out else _stdlib(body)


def _stdlib(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()
