"""The path and query kube-aggregator forwards to an APIService's backend.

kube-aggregator does not relay the request line as it came: it builds a new URL from the
decoded path (`location.Path = req.URL.Path`) and from the parsed and re-encoded query
(`location.RawQuery = req.URL.Query().Encode()`), and Go writes that URL out with its own
escaping. So a backend sees `pods/%2A/rps` for `pods/*/rps`, query parameters sorted by name,
spaces as `+`, and every reserved character of a value escaped, whatever the client sent. The
sandbox forwards the same bytes, so an adapter tested here parses what a real cluster sends.

Go's rules (`net/url`): a path keeps letters, digits, `-_.~` and `$&+,/:;=@` and escapes every
other byte as %XX (upper-case hex; `*`, `(`, `)`, `!` and `'` too); a query component keeps
letters, digits and `-_.~`, writes a space as `+` and escapes every other byte. Parsing a
query skips pairs with a `;` and pairs with a bad escape, and turns `+` into a space.
"""

from __future__ import annotations

import re
import string
import urllib.parse

__all__ = ["forwarded_path_qs"]

# Strings below hold bytes as latin-1 characters (one character per byte), so that escaping is
# one `str.translate` and sorting compares bytes, as Go does.
_UNRESERVED = frozenset((string.ascii_letters + string.digits + "-_.~").encode())
_PATH_KEEPS = _UNRESERVED | frozenset(b"$&+,/:;=@")
_PATH = {b: (chr(b) if b in _PATH_KEEPS else f"%{b:02X}") for b in range(256)}
_QUERY = {b: (chr(b) if b in _UNRESERVED else f"%{b:02X}") for b in range(256)} | {0x20: "+"}
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def forwarded_path_qs(raw_path: str, raw_query: str) -> str:
    """The request target kube-aggregator sends for a request whose path and query arrived
    as `raw_path` and `raw_query` (still escaped, without the `?`)."""
    path = _unescape(_bytes(raw_path), plus_is_space=False)
    if path is None:  # Go's server answers 400 before any handler; keep the request as sent
        target = raw_path
    elif path == "*":
        target = "*"
    else:
        target = path.translate(_PATH)
    query = _encode(_parse_query(_bytes(raw_query)))
    return f"{target}?{query}" if query else target


def _bytes(text: str) -> str:
    """`text`'s UTF-8 bytes, one latin-1 character each (ASCII, the usual case, is unchanged)."""
    return text if text.isascii() else text.encode().decode("latin-1")


def _parse_query(raw: str) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for pair in raw.split("&"):
        if ";" in pair or not pair:
            continue
        key, _, value = pair.partition("=")
        k = _unescape(key, plus_is_space=True)
        v = _unescape(value, plus_is_space=True)
        if k is None or v is None:
            continue
        values.setdefault(k, []).append(v)
    return values


def _encode(values: dict[str, list[str]]) -> str:
    parts: list[str] = []
    for key in sorted(values):  # Go sorts the keys as byte strings
        name = key.translate(_QUERY)
        parts.extend(f"{name}={v.translate(_QUERY)}" for v in values[key])
    return "&".join(parts)


def _unescape(raw: str, *, plus_is_space: bool) -> str | None:
    """Percent-decoding as Go's `unescape`; None where Go reports an invalid escape."""
    if _BAD_ESCAPE.search(raw):
        return None
    if plus_is_space:
        raw = raw.replace("+", " ")
    if "%" in raw:
        raw = urllib.parse.unquote_to_bytes(raw).decode("latin-1")
    return raw
