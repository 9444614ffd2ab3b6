"""core/v1 Events about Autoscalers, aggregated like client-go's event recorder.

The first occurrence of (object, type, reason, message) creates an Event; repeats patch its
`count` and `lastTimestamp` instead of creating new objects, which is what `kubectl describe`
shows as "x5 over 2m". An event that cannot be written is logged and dropped: events are
advisory and must never fail a reconcile.

The recorder remembers the last 4,096 keys, as client-go's does. A key is kept as a 16-byte
digest, not as its strings: messages carry metric values and errors, so nearly every key is new,
and their text held until forgotten was most of what a leading controller's heap grew by.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from autoscaler.kube.client import MERGE_PATCH, KubeClient, KubeError, NotFound
from common.kubetime import format_time

__all__ = ["EventRecorder"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Seen:
    name: str
    count: int


def _digest(*parts: str) -> bytes:
    """One key's 16-byte digest (each part prefixed by its length, so no two keys' texts meet)."""
    text = "".join(f"{len(part)}:{part}" for part in parts)
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


class EventRecorder:
    def __init__(
        self,
        kube: KubeClient,
        *,
        component: str,
        max_keys: int = 4096,  # aggregation memory; the oldest keys are forgotten first
    ) -> None:
        self._kube = kube
        self._component = component
        self._instance = f"{socket.gethostname()}-{os.getpid()}"
        self._seen: OrderedDict[bytes, _Seen] = OrderedDict()
        self._max_keys = max_keys

    async def record(
        self, obj: Mapping[str, Any], *, type_: str, reason: str, message: str
    ) -> None:
        meta = obj.get("metadata", {})
        namespace = str(meta.get("namespace", "default"))
        key = _digest(namespace, str(meta.get("uid", meta.get("name"))), type_, reason, message)
        now = datetime.now(UTC)
        seen = self._seen.get(key)
        try:
            if seen is not None and await self._bump(namespace, seen, now):
                self._seen.move_to_end(key)
                return
            name = await self._create(obj, namespace, type_, reason, message, now)
        except KubeError as e:
            log.warning(
                "event %s on %s/%s not recorded: %s", reason, namespace, meta.get("name"), e
            )
            return
        self._seen[key] = _Seen(name, 1)
        while len(self._seen) > self._max_keys:
            self._seen.popitem(last=False)

    async def _bump(self, namespace: str, seen: _Seen, now: datetime) -> bool:
        """Count one more occurrence; False when the Event is gone (events have a TTL)."""
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/events/{seen.name}"
        body = {"count": seen.count + 1, "lastTimestamp": format_time(now)}
        try:
            await self._kube.request("PATCH", path, body=body, content_type=MERGE_PATCH)
        except NotFound:
            return False
        seen.count += 1
        return True

    async def _create(
        self,
        obj: Mapping[str, Any],
        namespace: str,
        type_: str,
        reason: str,
        message: str,
        now: datetime,
    ) -> str:
        meta = obj.get("metadata", {})
        event = {
            "involvedObject": {
                "apiVersion": obj.get("apiVersion", "promscaler.dev/v1alpha1"),
                "kind": obj.get("kind", "Autoscaler"),
                "name": meta.get("name"),
                "namespace": namespace,
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            },
            "type": type_,
            "reason": reason,
            "message": message[:1024],  # the API's own limit for event messages
            "count": 1,
            "firstTimestamp": format_time(now),
            "lastTimestamp": format_time(now),
            "source": {"component": self._component},
            "reportingComponent": self._component,
            "reportingInstance": self._instance,
        }
        name = f"{meta.get('name', 'autoscaler')}.{time.time_ns():x}"  # the recorder's naming
        body = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name}, **event}
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/events"
        await self._kube.request("POST", path, body=body)
        return name
