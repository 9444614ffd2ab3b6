"""Watches on held targets: a target whose replicas drift from what its Autoscaler holds it at
(`promscaler.dev/paused-replicas`) gets its Autoscaler reconciled at once, not at the next
sync period.

One watch per held target, pinned to the object by `fieldSelector=metadata.name=NAME` (held
targets are few: a pause is an operator's act), started when a pass holds the target and
stopped when none does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autoscaler.kube.client import KubeClient
from autoscaler.kube.informer import Informer

__all__ = ["TargetWatcher"]

log = logging.getLogger(__name__)


@dataclass
class _Held:
    path: str  # the target's /scale path
    replicas: int
    informer: Informer


class TargetWatcher:
    """`hold(key, scale_path, n)`: call `on_drift(key)` whenever the target's spec.replicas is
    not n; `release(key)` ends it."""

    def __init__(self, kube: KubeClient, on_drift: Callable[[str], None]) -> None:
        self._kube = kube
        self._on_drift = on_drift
        self._held: dict[str, _Held] = {}
        self._stopping: set[asyncio.Task[None]] = set()  # kept until done (no lost tasks)

    def hold(self, key: str, scale_path: str, replicas: int) -> None:
        held = self._held.get(key)
        if held is not None and held.path == scale_path:
            held.replicas = replicas  # same target, maybe a new N: no new watch
            return
        self.release(key)
        object_path, _, _ = scale_path.rpartition("/")  # .../deployments/web/scale
        collection, _, name = object_path.rpartition("/")
        informer = Informer(
            self._kube,
            collection,
            field_selector=f"metadata.name={name}",
            on_event=lambda kind, obj: self._seen(key, kind, obj),
        )
        self._held[key] = _Held(scale_path, replicas, informer)
        informer.start()
        log.info("watching %s for drift from %d replicas", object_path, replicas)

    def release(self, key: str) -> None:
        held = self._held.pop(key, None)
        if held is not None:
            task = asyncio.ensure_future(held.informer.stop())
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    def held(self) -> dict[str, int]:
        return {key: h.replicas for key, h in self._held.items()}

    async def close(self) -> None:
        held, self._held = self._held, {}
        await asyncio.gather(*(h.informer.stop() for h in held.values()), *self._stopping)

    def _seen(self, key: str, kind: str, obj: dict[str, Any]) -> None:
        held = self._held.get(key)
        if held is None or kind == "DELETED":
            return
        replicas = (obj.get("spec") or {}).get("replicas")
        if replicas is not None and int(replicas) != held.replicas:
            self._on_drift(key)
