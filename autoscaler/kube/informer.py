"""A list-then-watch cache of one collection (Autoscalers, or the pods of one namespace).

The shape of client-go's reflector, small: LIST for a resourceVersion, WATCH from it, apply
events to a dict keyed by namespace/name, relist on 410 Gone, back off on errors. Callers read
`objects` at any time and may pass `on_event` to hear about changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from autoscaler.kube.client import Gone, KubeClient, KubeError, sleep_or_stop

__all__ = ["Informer"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]
OnEvent = Callable[[str, JSON], None]  # (ADDED | MODIFIED | DELETED, object)


def object_key(obj: JSON) -> str:
    meta = obj.get("metadata", {})
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


class Informer:
    """Keeps `objects` in step with the collection at `path`.

    `synced` is set after the first successful LIST. Errors are logged and retried with
    backoff (up to `max_backoff` seconds); the loop ends only when `stop()` is called.
    """

    def __init__(
        self,
        kube: KubeClient,
        path: str,
        *,
        label_selector: str = "",
        field_selector: str = "",
        on_event: OnEvent | None = None,
        max_backoff: float = 10.0,  # seconds; below client-go's 30s, for quick recovery
        watch_timeout: int = 240,  # seconds per watch call; the server may end it sooner
    ) -> None:
        self._kube = kube
        self.path = path
        self._selector = label_selector
        self._fields = field_selector
        self._on_event = on_event
        self._max_backoff = max_backoff
        self._watch_timeout = watch_timeout
        self.objects: dict[str, JSON] = {}
        self.synced = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"informer {self.path}")

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        backoff = 0.2
        while not self._stop.is_set():
            try:
                version = await self._list()
                backoff = 0.2
                while not self._stop.is_set():
                    version = await self._watch(version)
            except Gone:
                continue  # our resourceVersion expired: relist at once
            except KubeError as e:
                log.warning("informer %s: %s (retrying in %.1fs)", self.path, e, backoff)
            except ValueError as e:  # a garbled watch line
                log.warning("informer %s: bad watch data: %s", self.path, e)
            if await sleep_or_stop(self._stop, backoff):
                return
            backoff = min(backoff * 2, self._max_backoff)

    def _query(self) -> list[tuple[str, str]]:
        query = [("labelSelector", self._selector)] if self._selector else []
        return query + ([("fieldSelector", self._fields)] if self._fields else [])

    async def _list(self) -> str:
        doc = await self._kube.request("GET", self.path, query=self._query(), request_timeout=60)
        fresh = {object_key(o): o for o in doc.get("items") or []}
        old, self.objects = self.objects, fresh
        for key, obj in fresh.items():
            if self._on_event and old.get(key) != obj:
                self._on_event("ADDED" if key not in old else "MODIFIED", obj)
        for key in old.keys() - fresh.keys():
            if self._on_event:
                self._on_event("DELETED", old[key])
        self.synced.set()
        return str(doc.get("metadata", {}).get("resourceVersion", ""))

    async def _watch(self, version: str) -> str:
        query = [*self._query(), ("resourceVersion", version)]
        events = self._kube.watch(self.path, query=query, timeout_seconds=self._watch_timeout)
        async for event in events:
            kind, obj = event.get("type"), event.get("object") or {}
            if kind == "ERROR":
                code = int(obj.get("code", 0))
                if code == 410:
                    raise Gone(410, "Expired", str(obj.get("message", "")))
                raise KubeError(code, str(obj.get("reason", "")), str(obj.get("message", "")))
            version = str(obj.get("metadata", {}).get("resourceVersion", version))
            if kind == "BOOKMARK":
                continue
            key = object_key(obj)
            if kind == "DELETED":
                self.objects.pop(key, None)
            else:
                self.objects[key] = obj
            if self._on_event and kind in ("ADDED", "MODIFIED", "DELETED"):
                self._on_event(str(kind), obj)
        return version
