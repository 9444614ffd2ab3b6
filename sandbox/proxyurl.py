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

import string

__all__ = ["forwarded_path_qs"]

_HEX = "0123456789ABCDEF"
_UNRESERVED = frozenset((string.ascii_letters + string.digits + "-_.~").encode())
_PATH_KEEPS = _UNRESERVED | frozenset(b"$&+,/:;=@")


def forwarded_path_qs(raw_path: str, raw_query: str) -> str:
    """The request target kube-aggregator sends for a request whose path and query arrived
    as `raw_path` and `raw_query` (still escaped, without the `?`)."""
    path = _unescape(raw_path.encode("latin-1"), plus_is_space=False)
    if path is None:  # Go's server answers 400 before any handler; keep the request as sent
        target = raw_path
    elif path == b"*":
        target = "*"
    else:
        target = _escape(path, _PATH_KEEPS, space_as_plus=False)
    query = _encode(_parse_query(raw_query))
    return f"{target}?{query}" if query else target


def _parse_query(raw: str) -> dict[bytes, list[bytes]]:
    values: dict[bytes, list[bytes]] = {}
    for pair in raw.encode("latin-1").split(b"&"):
        if b";" in pair or not pair:
            continue
        key, _, value = pair.partition(b"=")
        k = _unescape(key, plus_is_space=True)
        v = _unescape(value, plus_is_space=True)
        if k is None or v is None:
            continue
        values.setdefault(k, []).append(v)
    return values


def _encode(values: dict[bytes, list[bytes]]) -> str:
    parts: list[str] = []
    for key in sorted(values):  # Go sorts the keys as byte strings
        name = _escape(key, _UNRESERVED, space_as_plus=True)
        parts.extend(f"{name}={_escape(v, _UNRESERVED, space_as_plus=True)}" for v in values[key])
    return "&".join(parts)


def _unescape(raw: bytes, *, plus_is_space: bool) -> bytes | None:
    """Percent-decoding as Go's `unescape`; None where Go reports an invalid escape."""
    if b"%" not in raw and not (plus_is_space and b"+" in raw):
        return raw
    out = bytearray()
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == 0x25:  # '%'
            pair = raw[i + 1 : i + 3]
            if len(pair) < 2 or any(h not in b"0123456789abcdefABCDEF" for h in pair):
                return None
            out.append(int(pair, 16))
            i += 3
            continue
        out.append(0x20 if (c == 0x2B and plus_is_space) else c)
        i += 1
    return bytes(out)


def _escape(raw: bytes, keep: frozenset[int], *, space_as_plus: bool) -> str:
    out: list[str] = []
    for c in raw:
        if c in keep:
            out.append(chr(c))
        elif c == 0x20 and space_as_plus:
            out.append("+")
        else:
            out.append(f"%{_HEX[c >> 4]}{_HEX[c & 15]}")
    return "".join(out)
