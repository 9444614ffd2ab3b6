"""Reading JSON fields with errors that name the field path, and cached scalar conversions.

`DocumentError` is the one error of a bad document: its message starts with the path of the
offending field (`autoscaler.spec.metrics[1].pods.target.averageValue: ...`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from autoscaler.core.model import NS
from common.kubetime import TimeError, format_time_ns, parse_time_ns
from common.memo import remember
from common.quantity import QuantityError, milli_value

__all__ = [
    "DocumentError",
    "as_bool",
    "as_float",
    "as_int",
    "as_list",
    "as_obj",
    "as_str",
    "duration_ns",
    "history_time",
    "milli",
    "status_time",
    "time_ns",
]


class DocumentError(ValueError):
    """A decide document (or part of one) is not valid; the message names the field."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


_MISSING: Any = object()


def _get(obj: Mapping[str, Any], key: str, path: str, required: bool) -> Any:
    value = obj.get(key, _MISSING)
    if value is _MISSING or value is None:
        if required:
            raise DocumentError(f"{path}.{key}" if path else key, "is required")
        return None
    return value


def as_obj(
    obj: Mapping[str, Any], key: str, path: str, *, required: bool = False
) -> dict[str, Any]:
    value = _get(obj, key, path, required)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DocumentError(_join(path, key), f"must be an object, not {_kind(value)}")
    return value


def as_list(obj: Mapping[str, Any], key: str, path: str, *, required: bool = False) -> list[Any]:
    value = _get(obj, key, path, required)
    if value is None:
        return []
    if not isinstance(value, list):
        raise DocumentError(_join(path, key), f"must be a list, not {_kind(value)}")
    return value


def as_int(
    obj: Mapping[str, Any],
    key: str,
    path: str,
    *,
    required: bool = False,
    default: int | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int | None:
    value = _get(obj, key, path, required)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise DocumentError(_join(path, key), f"must be an integer, not {_kind(value)}")
    if minimum is not None and value < minimum:
        raise DocumentError(_join(path, key), f"must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise DocumentError(_join(path, key), f"must be at most {maximum}, not {value}")
    return value


def as_float(obj: Mapping[str, Any], key: str, path: str, *, default: float) -> float:
    value = _get(obj, key, path, False)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DocumentError(_join(path, key), f"must be a number, not {_kind(value)}")
    return float(value)


def as_bool(obj: Mapping[str, Any], key: str, path: str, *, default: bool) -> bool:
    value = _get(obj, key, path, False)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise DocumentError(_join(path, key), f"must be true or false, not {_kind(value)}")
    return value


def as_str(
    obj: Mapping[str, Any], key: str, path: str, *, required: bool = False, default: str = ""
) -> str:
    value = _get(obj, key, path, required)
    if value is None:
        return default
    if not isinstance(value, str):
        raise DocumentError(_join(path, key), f"must be a string, not {_kind(value)}")
    return value


_MILLI_CACHE: dict[str, int] = {}
_CACHE_LIMIT = 65536  # distinct strings remembered; documents repeat the same few quantities


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    """Keep `value` for `key`; a full memo starts afresh (`common.memo`)."""
    remember(memo, key, value, limit=_CACHE_LIMIT)


def milli(value: Any, path: str) -> int:
    """A Quantity (string, or a JSON number as the API also accepts) in thousandths, rounded up."""
    if isinstance(value, str):
        cached = _MILLI_CACHE.get(value)
        if cached is not None:
            return cached
        text = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        text = repr(value)
    else:
        raise DocumentError(path, f"must be a quantity string such as 500m, not {_kind(value)}")
    try:
        result = milli_value(text)
    except QuantityError as e:
        raise DocumentError(path, str(e)) from e
    _remember(_MILLI_CACHE, text, result)
    return result


_TIME_CACHE: dict[str, int] = {}


def time_ns(value: Any, path: str) -> int:
    """An RFC3339 time as nanoseconds since the epoch."""
    if isinstance(value, str):
        cached = _TIME_CACHE.get(value)
        if cached is not None:
            return cached
    try:
        result = parse_time_ns(value)
    except TimeError as e:
        raise DocumentError(path, str(e)) from e
    _remember(_TIME_CACHE, value, result)
    return result


_FORMATTED: dict[int, str] = {}


def status_time(ns: int) -> str:
    """metav1.Time: seconds precision."""
    return history_time(ns - ns % NS)


def history_time(ns: int) -> str:
    """Full nanosecond precision, memoized (a step writes the same instants many times)."""
    text = _FORMATTED.get(ns)
    if text is None:
        text = format_time_ns(ns)
        _remember(_FORMATTED, ns, text)
    return text


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_NS = {"ns": 1, "us": 1000, "µs": 1000, "ms": 1_000_000, "s": NS, "m": 60 * NS, "h": 3600 * NS}


_DURATIONS: dict[str, int] = {}


def duration_ns(value: Any, path: str) -> int:
    """A Go duration string (`30s`, `1m0s`, `1.5s`) or a number of seconds, in nanoseconds."""
    if isinstance(value, str):
        cached = _DURATIONS.get(value)
        if cached is None:
            cached = _parse_duration(value, path)
            _remember(_DURATIONS, value, cached)
        return cached
    return _parse_duration(value, path)


def _parse_duration(value: Any, path: str) -> int:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value * NS)
    if not isinstance(value, str) or not value:
        raise DocumentError(path, f"must be a duration such as 30s, not {_kind(value)}")
    text = value[1:] if value[0] in "+-" else value
    total = 0
    pos = 0
    for m in _DURATION.finditer(text):
        if m.start() != pos:
            break
        total += _component_ns(m.group(1), _UNIT_NS[m.group(2)])
        pos = m.end()
    if pos != len(text) or text == "":
        if text == "0":
            return 0
        raise DocumentError(
            path, f"invalid duration {value!r}: expected a Go duration such as 30s or 1m0s"
        )
    return -total if value[0] == "-" else total


def _component_ns(number: str, unit: int) -> int:
    """One `<number><unit>` of time.ParseDuration: the whole part exactly, the fraction as Go
    adds it (`uint64(float64(f) * (float64(unit) / scale))`), so 1.005s is 1005000000ns."""
    whole, _, fraction = number.partition(".")
    ns = int(whole or "0") * unit
    fraction = fraction[:18]  # Go stops reading fraction digits before its int64 overflows
    if fraction:
        ns += int(float(int(fraction)) * (float(unit) / 10 ** len(fraction)))
    return ns


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), f"a {type(value).__name__}"
    )
