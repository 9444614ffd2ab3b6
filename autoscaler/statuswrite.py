"""Writing an Autoscaler's status: only when it changed, as a merge patch of the subresource.

The recommendation history is persisted in status (so a new leader continues the stabilization
window) but, when nothing else changed, refreshed once per `history_refresh` seconds, or every
pass would be a status write. Each Autoscaler refreshes at its own point of that period, set by
its name: thousands created (or taken over) together would otherwise all refresh in the same
sync period, one round of writes every few rounds instead of a steady trickle. A pass whose
write was skipped is still the next pass's starting point (`base`): the leader decides from
exact history timestamps (which the controls' lastActiveTime is taken from), and only a new
leader starts from the persisted, older ones.
"""

from __future__ import annotations

import logging
import math
import zlib
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from operator import itemgetter
from typing import Any

from autoscaler.cluster import Cluster, ClusterError
from autoscaler.options import ControllerOptions, with_default_metrics
from autoscaler.statusview import reference, set_condition, targets
from common.kubetime import parse_time_ns

__all__ = ["StatusWriter", "failed_update"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]


class StatusWriter:
    def __init__(self, cluster: Cluster, *, options: ControllerOptions) -> None:
        self._cluster = cluster
        self._options = options
        # key -> (the persisted status a skipped write was compared with, the skipped status)
        self._unwritten: dict[str, tuple[JSON, JSON]] = {}

    def base(self, obj: JSON) -> JSON:
        """The status a pass starts from: the persisted one, or what the last pass computed when
        its write was skipped and nobody has changed the status since."""
        persisted = dict(obj.get("status") or {})
        held = self._unwritten.get(_key(obj))
        return dict(held[1]) if held is not None and held[0] == persisted else persisted

    def forget(self, key: str) -> None:
        self._unwritten.pop(key, None)

    async def flush(self, key: str) -> None:
        """Write the status whose write was skipped for `key` (namespace/name), if any: the
        history a handoff's next holder must start from."""
        held = self._unwritten.pop(key, None)
        if held is None:
            return
        persisted, new = held
        namespace, _, name = key.partition("/")
        patch: JSON = {k: None for k in persisted if k not in new}
        patch.update(new)
        try:
            await self._cluster.patch_status(namespace, name, patch)
        except ClusterError as e:
            log.warning("status of %s not flushed: %s", key, e, extra={"autoscaler": key})

    async def write(self, obj: JSON, old: JSON, status: JSON, history: Any) -> None:
        """Write `status` unless it equals the persisted one (as `_unchanged` judges); `old` is
        the status the pass started from."""
        spec = with_default_metrics(obj.get("spec") or {})
        new = {k: v for k, v in status.items() if v is not None}
        new["history"] = history
        new["observedGeneration"] = obj.get("metadata", {}).get("generation")
        new["reference"] = reference(spec.get("scaleTargetRef") or {})
        new["targets"] = targets(spec, new.get("currentMetrics"))
        if "lastScaleTime" not in new and old.get("lastScaleTime"):
            new["lastScaleTime"] = old["lastScaleTime"]
        persisted = dict(obj.get("status") or {})
        if self._unchanged(persisted, new, spec, _key(obj)):
            self._unwritten[_key(obj)] = (persisted, new)
            return  # no write (the HPA also skips no-op status updates)
        self._unwritten.pop(_key(obj), None)
        patch: JSON = {k: None for k in persisted if k not in new}  # merge patch: null removes
        patch.update(new)
        meta = obj.get("metadata", {})
        try:
            fresh = await self._cluster.patch_status(
                str(meta.get("namespace")), str(meta.get("name")), patch
            )
        except ClusterError as e:
            log.warning(
                "status of %s not written: %s", _key(obj), e, extra={"autoscaler": _key(obj)}
            )
            return
        obj["status"] = fresh.get("status", new) if fresh else new

    def _unchanged(self, old: JSON, new: JSON, spec: Mapping[str, Any], key: str) -> bool:
        """Equal apart from history, and the history equal in what it holds (the scale events,
        the set of recommended values) and persisted recently enough: in the same refresh period
        (`history_refresh` seconds, or half the downscale window when shorter, so a new leader's
        window is never far off), the periods of each Autoscaler shifted by its own phase."""
        old = {k: v for k, v in old.items() if v is not None}
        if {**old, "history": None} != {**new, "history": None}:
            return False
        before, after = old.get("history") or {}, new.get("history") or {}
        for events in ("scaleUpEvents", "scaleDownEvents"):
            if (before.get(events) or []) != (after.get(events) or []):
                return False
        recs_before = before.get("recommendations") or []
        recs_after = after.get("recommendations") or []
        values = {r.get("replicas") for r in recs_before}
        if values != {r.get("replicas") for r in recs_after}:
            return False
        if (before.get("recommendations") is None) != (after.get("recommendations") is None):
            return False
        limit = self._options.history_refresh
        window = _down_window(spec, self._options)
        if window > 0:
            limit = min(limit, window / 2)
        return _same_period(recs_before, recs_after, limit, key)


def _down_window(spec: Mapping[str, Any], options: ControllerOptions) -> float:
    """The downscale stabilization window in seconds (behavior's, else the controller's)."""
    down = ((spec.get("behavior") or {}).get("scaleDown")) or {}
    window = down.get("stabilizationWindowSeconds")
    return float(options.downscale_stabilization if window is None else window)


# History timestamps are whole seconds and every Autoscaler's pass stamps the same clock, so a
# few thousand distinct stamps cover the downscale windows of all of them: parse each once.
_stamp_ns = lru_cache(maxsize=4096)(parse_time_ns)
_timestamp = itemgetter("timestamp")


def _newest(recommendations: list[Any]) -> int:
    """The newest timestamp (ns) of a history's recommendations; raises on an empty list or a
    missing or unparsable timestamp."""
    return max(map(_stamp_ns, map(_timestamp, recommendations)))


def _same_period(before: list[Any], after: list[Any], period: float, key: str) -> bool:
    """Whether the newest persisted recommendation and the newest new one fall in the same
    refresh period of `key`: periods of `period` seconds, shifted by a phase in [0, period)
    taken from the key. Stable across processes (not `hash`, which is salted per process), so a
    shard's next holder keeps the phase. The persisted history is never more than one period
    old, and an Autoscaler whose status changes nothing else is written once per period."""
    try:
        old, new = _newest(before) / 1e9, _newest(after) / 1e9
    except (KeyError, ValueError, TypeError):  # empty or unparsable: refresh
        return False
    if new <= old:
        return True  # the same instant, or a clock that stepped back: nothing newer to persist
    shift = _phase(key) * period
    return math.floor((old + shift) / period) == math.floor((new + shift) / period)


def _phase(key: str) -> float:
    """A fraction in [0, 1) fixed by `key`."""
    return zlib.crc32(key.encode()) / 2**32


def failed_update(
    result: Mapping[str, Any], old: Mapping[str, Any], now: datetime, error: str
) -> tuple[JSON, Any]:
    """Upstream on a failed scale update: AbleToScale=False/FailedUpdateScale, the previous
    desiredReplicas, and no scale event recorded. The core says what to keep, when it can."""
    status = dict(result.get("failedUpdateStatus") or result.get("status") or {})
    history = result.get("failedUpdateHistory") or result.get("history")
    msg = f"the HPA controller was unable to update the target scale: {error}"
    conditions = list(status.get("conditions") or [])
    conditions = set_condition(conditions, "AbleToScale", "False", "FailedUpdateScale", msg, now)
    status["conditions"] = conditions
    if "failedUpdateStatus" not in result:
        status["desiredReplicas"] = old.get("desiredReplicas", status.get("currentReplicas"))
        status.pop("lastScaleTime", None)
        if old.get("lastScaleTime"):
            status["lastScaleTime"] = old["lastScaleTime"]
        history = {**(history or {}), **_events_of(old.get("history"))}
    return status, history


def _events_of(history: Any) -> JSON:
    """The scale events of an old history: a failed rescale must not count as one."""
    history = history or {}
    return {k: history.get(k) or [] for k in ("scaleUpEvents", "scaleDownEvents")}


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata", {})
    return f"{meta.get('namespace')}/{meta.get('name')}"
