"""Prometheus durations, and the window (range) a rule's query reports.

`window`/`windowSeconds` in API answers comes from the first range selector (`[2m]`) or
subquery range (`[5m:1m]`) in the metricsQuery's own text, outside string literals and
comments: the only place a rule states its window (the peer reports none).
"""

from __future__ import annotations

import re

from adapter.rules.templating import Template

__all__ = ["find_window", "parse_duration"]

_DURATION = re.compile(
    r"(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?"
)
_UNITS = (365 * 86400, 7 * 86400, 86400, 3600, 60, 1, 0.001)


def parse_duration(text: str) -> float:
    """A Prometheus duration (`90s`, `1h30m`, `5m`, `1d`, `500ms`) in seconds; ValueError."""
    match = _DURATION.fullmatch(text)
    if text == "0":
        return 0.0
    if not text or match is None:
        raise ValueError(f"not a valid duration {text!r} (e.g. 30s, 5m, 1h30m)")
    return sum(int(part) * unit for part, unit in zip(match.groups(), _UNITS, strict=True) if part)


_STRINGS_AND_COMMENTS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`|#[^\n]*')
_RANGE = re.compile(r"\[\s*((?:\d+(?:ms|[smhdwy]))+)\s*(?::[^\]]*)?\]")


def find_window(template: Template) -> int | None:
    """Seconds of the first range (`[2m]`, or the range of a subquery `[5m:1m]`) in the
    template's own text, outside string literals and comments; None when it has none."""
    text = _STRINGS_AND_COMMENTS.sub(" ", template.literal_text())
    match = _RANGE.search(text)
    return None if match is None else round(parse_duration(match.group(1)))
