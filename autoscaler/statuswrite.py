"""Writing an Autoscaler's status: only when it changed, as a merge patch of the subresource.

The recommendation history is persisted in status (so a new leader continues the stabilization
window) but refreshed at most every `history_refresh` seconds when nothing else changed, or
every pass would be a status write. A pass whose write was skipped is still the next pass's
starting point (`base`): the leader decides from exact history timestamps (which the controls'
lastActiveTime is taken from), and only a new leader starts from the persisted, older ones.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from autoscaler.cluster import Cluster, ClusterError
from autoscaler.options import ControllerOptions, with_default_metrics
from autoscaler.statusview import reference, set_condition, targets
from common.kubetime import parse_time

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
        if self._unchanged(persisted, new, spec):
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

    def _unchanged(self, old: JSON, new: JSON, spec: Mapping[str, Any]) -> bool:
        """Equal apart from history, and the history equal in what it holds (the scale events,
        the set of recommended values) and persisted recently enough: within `history_refresh`
        seconds and half the downscale window, so a new leader's window is never far off."""
        old = {k: v for k, v in old.items() if v is not None}
        if {**old, "history": None} != {**new, "history": None}:
            return False
        before, after = old.get("history") or {}, new.get("history") or {}
        for key in ("scaleUpEvents", "scaleDownEvents"):
            if (before.get(key) or []) != (after.get(key) or []):
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
        return _age(recs_before, recs_after) < limit


def _down_window(spec: Mapping[str, Any], options: ControllerOptions) -> float:
    """The downscale stabilization window in seconds (behavior's, else the controller's)."""
    down = ((spec.get("behavior") or {}).get("scaleDown")) or {}
    window = down.get("stabilizationWindowSeconds")
    return float(options.downscale_stabilization if window is None else window)


# History timestamps are whole seconds and every Autoscaler's pass stamps the same clock, so a
# few thousand distinct stamps cover the downscale windows of all of them: parse each once.
_stamp = lru_cache(maxsize=4096)(parse_time)


def _age(before: list[Any], after: list[Any]) -> float:
    """Seconds between the newest persisted recommendation and the newest new one."""
    try:
        old = max(_stamp(str(r["timestamp"])) for r in before)
        new = max(_stamp(str(r["timestamp"])) for r in after)
    except (KeyError, ValueError):  # empty or unparsable: refresh
        return float("inf")
    return (new - old).total_seconds()


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
