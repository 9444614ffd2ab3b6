"""Why a metric could not be had this pass: a short reason per failure, and answers checked.

Every failure to get a metric is that metric's failure for the pass (controls.md, Fallback):
the metrics API not served (its APIService missing: 404), its adapter down or unavailable (503,
connection refused), a timeout, a 404 for the metric, an empty answer, a value that is not a
Quantity. `reason` is a bounded CamelCase word, used as the label of
`promscaler_autoscaler_metric_failures_total` and kept next to the message in the document's
metric entry. An answer with an unreadable value or time becomes such a failure here, so that
one bad sample is one failed metric and never a failed pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from autoscaler.cluster import failure
from autoscaler.kube.client import KubeError, KubeUnavailable
from common.kubetime import parse_time
from common.memo import remember
from common.quantity import QuantityError, parse_quantity

__all__ = ["REASONS", "check_entry", "failure", "reason_of"]

JSON = dict[str, Any]

# HTTP status -> reason; anything else 4xx is BadRequest, 5xx InternalError
_BY_STATUS = {
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    429: "TooManyRequests",
    503: "ServiceUnavailable",
    504: "Timeout",
}
REASONS = frozenset(
    {
        *_BY_STATUS.values(),
        "BadRequest",
        "InternalError",
        "Unavailable",
        "Empty",
        "InvalidValue",
        "PodsUnavailable",
        "InvalidSelector",
        "UnknownKind",
        "Unknown",
    }
)


def reason_of(error: BaseException) -> str:
    """The reason word for an exception raised while fetching a metric."""
    if isinstance(error, KubeUnavailable):
        cause = error.__cause__
        return "Timeout" if isinstance(cause, TimeoutError) else "Unavailable"
    if isinstance(error, KubeError):
        if error.status in _BY_STATUS:
            return _BY_STATUS[error.status]
        if 400 <= error.status < 500:
            return "BadRequest"
        return "InternalError" if error.status >= 500 else "Unavailable"
    reason = getattr(error, "reason", "")
    return reason if reason in REASONS else "Unknown"


def check_entry(entry: JSON) -> JSON:
    """`entry` itself when every sample in it is readable, else an InvalidValue failure naming
    the first bad field (the core would otherwise refuse the whole document)."""
    try:
        for i, item in enumerate(entry.get("items") or []):
            _check_item(item, f"items[{i}]")
        for i, pod in enumerate(entry.get("podMetrics") or []):
            _check_pod(pod, f"podMetrics[{i}]")
    except (QuantityError, ValueError, TypeError, AttributeError) as e:
        return failure("InvalidValue", f"invalid metric value: {e}")
    return entry


def _check_item(item: Mapping[str, Any], where: str) -> None:
    _quantity(item.get("value"), f"{where}.value")
    if item.get("timestamp") is not None:
        _time(item["timestamp"], f"{where}.timestamp")


def _check_pod(pod: Mapping[str, Any], where: str) -> None:
    if pod.get("timestamp") is not None:
        _time(pod["timestamp"], f"{where}.timestamp")
    for j, container in enumerate(pod.get("containers") or []):
        for name, value in (container.get("usage") or {}).items():
            _quantity(value, f"{where}.containers[{j}].usage.{name}")


def _quantity(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{where}: {value!r} is not a quantity")
    if isinstance(value, float) and not math.isfinite(value):  # NaN/Inf: JSON has no such
        raise ValueError(f"{where}: {value} is not a quantity")
    if isinstance(value, str) and value not in _QUANTITIES:
        try:
            parse_quantity(value)
        except QuantityError as e:
            raise ValueError(f"{where}: {e}") from e
        remember(_QUANTITIES, value, True, limit=_LIMIT)


def _time(value: Any, where: str) -> None:
    text = str(value)
    if text in _TIMES:
        return
    try:
        parse_time(text)
    except ValueError as e:
        raise ValueError(f"{where}: {value!r} is not an RFC3339 time") from e
    remember(_TIMES, text, True, limit=_LIMIT)


# Texts that parsed, as a quantity and as a time: an answer's values and timestamps repeat
# across passes and Autoscalers, so each is checked once while in use.
_QUANTITIES: dict[str, bool] = {}
_TIMES: dict[str, bool] = {}
_LIMIT = 4096
