"""Events about HPAs as kube-controller-manager's event recorder writes them: core/v1 Events
from the component `horizontal-pod-autoscaler`, named `<hpa>.<hex nanoseconds>`; a repeat of
the same (type, reason, message) for the same object bumps `count` and `lastTimestamp`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from common.kubetime import format_time
from sandbox.hpa_client import ApiClient, CallError

log = logging.getLogger(__name__)
COMPONENT = "horizontal-pod-autoscaler"
MERGE = "application/merge-patch+json"
REMEMBERED = 4096  # (object, event) pairs kept for aggregation; the recorder's LRU is 4096 too


class EventRecorder:
    """Best effort, as upstream's: a failed write is logged and dropped."""

    def __init__(self, api: ApiClient, *, clock: Callable[[], datetime]) -> None:
        self._api = api
        self._clock = clock
        self._seen: dict[tuple[str, ...], tuple[str, int]] = {}

    async def event(self, hpa: dict[str, Any], type_: str, reason: str, message: str) -> None:
        meta = hpa.get("metadata") or {}
        ns, uid = str(meta.get("namespace", "")), str(meta.get("uid", ""))
        key = (ns, uid, type_, reason, message)
        now = self._clock()
        seen = self._seen.get(key)
        try:
            if seen is not None:
                name, count = seen
                await self._api.call(
                    "PATCH",
                    f"/api/v1/namespaces/{ns}/events/{name}",
                    body={"count": count + 1, "lastTimestamp": format_time(now)},
                    content_type=MERGE,
                )
                self._seen[key] = (name, count + 1)
                return
            name = f"{meta.get('name')}.{int(now.timestamp() * 1e9):x}"
            await self._api.call(
                "POST",
                f"/api/v1/namespaces/{ns}/events",
                body=_body(hpa, name, type_, reason, message, now),
            )
        except CallError as err:
            log.warning("event %s on %s/%s not written: %s", reason, ns, meta.get("name"), err)
            self._seen.pop(key, None)
            return
        if len(self._seen) >= REMEMBERED:
            self._seen.pop(next(iter(self._seen)))
        self._seen[key] = (name, 1)


def _body(
    hpa: dict[str, Any], name: str, type_: str, reason: str, message: str, now: datetime
) -> dict[str, Any]:
    meta = hpa.get("metadata") or {}
    stamp = format_time(now)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": meta.get("namespace")},
        "involvedObject": {
            "kind": "HorizontalPodAutoscaler",
            "namespace": meta.get("namespace"),
            "name": meta.get("name"),
            "uid": meta.get("uid"),
            "apiVersion": "autoscaling/v2",
            "resourceVersion": meta.get("resourceVersion"),
        },
        "reason": reason,
        "message": message,
        "source": {"component": COMPONENT},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "type": type_,
        "eventTime": None,
        "reportingComponent": COMPONENT,
        "reportingInstance": "",
    }
