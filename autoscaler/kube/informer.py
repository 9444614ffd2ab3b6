"""A list-then-watch cache of one collection (Autoscalers, or the pods of one namespace).

The shape of client-go's reflector, small: LIST for a resourceVersion, WATCH from it, apply
events to a dict keyed by namespace/name, back off on errors. A watch that breaks (the
connection lost, the server restarting) is resumed from the last resourceVersion seen, as the
reflector does; only 410 Gone (that version is no longer kept) or a failed LIST lists again, so
a reconnect at 10,000 objects costs one WATCH, not a LIST of them all. Callers read `objects` at
any time and may pass `on_event` to hear about changes, and `transform` to keep less of each
object (client-go's SetTransform). `metadata.managedFields` is never kept: a real API server
puts it on every object (often a third of its bytes), no pass reads it, and at 10,000
Autoscalers and their pods it would be most of what the caches hold (controller-runtime strips
it the same way).
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
Transform = Callable[[JSON], JSON]


def _without_managed_fields(obj: JSON) -> JSON:
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


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
        transform: Transform | None = None,  # what of each object to keep (and pass on)
        give_up_forbidden: bool = False,  # a 403 on LIST ends the loop (`forbidden` says so)
    ) -> None:
        self._kube = kube
        self.path = path
        self._selector = label_selector
        self._fields = field_selector
        self._on_event = on_event
        self._max_backoff = max_backoff
        self._watch_timeout = watch_timeout
        self._transform = transform
        self._give_up = give_up_forbidden
        self.objects: dict[str, JSON] = {}
        self.synced = asyncio.Event()
        # True from a LIST or a watch event until the next error: `objects` is current then
        # (up to the watch's delivery delay); a resumed watch turns it on at its first event
        self.live = False
        self.forbidden: KubeError | None = None  # the 403 that ended the loop
        self._version = ""  # the last resourceVersion seen; "" lists again
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
                if not self._version:
                    self._version = await self._list()
                    backoff = 0.2
                while not self._stop.is_set():
                    await self._watch()
                    backoff = 0.2  # a watch that ended normally (its timeout): resume at once
            except Gone:
                self.live, self._version = False, ""  # our resourceVersion expired: relist
                continue
            except KubeError as e:
                self.live = False
                if e.status == 403 and self._give_up and not self._version:
                    self.forbidden = e
                    log.info("informer %s: forbidden, not watching: %s", self.path, e)
                    return
                log.warning("informer %s: %s (retrying in %.1fs)", self.path, e, backoff)
            except ValueError as e:  # a garbled watch line: list again
                self.live, self._version = False, ""
                log.warning("informer %s: bad watch data: %s", self.path, e)
            if await sleep_or_stop(self._stop, backoff):
                return
            backoff = min(backoff * 2, self._max_backoff)

    def _query(self) -> list[tuple[str, str]]:
        query = [("labelSelector", self._selector)] if self._selector else []
        return query + ([("fieldSelector", self._fields)] if self._fields else [])

    async def _list(self) -> str:
        doc = await self._kube.request("GET", self.path, query=self._query(), request_timeout=60)
        keep = self._transform or (lambda o: o)
        fresh = {object_key(o): keep(_without_managed_fields(o)) for o in doc.get("items") or []}
        old, self.objects = self.objects, fresh
        for key, obj in fresh.items():
            if self._on_event and old.get(key) != obj:
                self._on_event("ADDED" if key not in old else "MODIFIED", obj)
        for key in old.keys() - fresh.keys():
            if self._on_event:
                self._on_event("DELETED", old[key])
        self.synced.set()
        self.live = True
        return str(doc.get("metadata", {}).get("resourceVersion", ""))

    async def _watch(self) -> None:
        """Watch from `_version` until the server ends the stream; `_version` follows the
        events, so a broken stream resumes where it broke."""
        query = [*self._query(), ("resourceVersion", self._version)]
        events = self._kube.watch(self.path, query=query, timeout_seconds=self._watch_timeout)
        async for event in events:
            kind, obj = event.get("type"), event.get("object") or {}
            if kind == "ERROR":
                code = int(obj.get("code", 0))
                if code == 410:
                    raise Gone(410, "Expired", str(obj.get("message", "")))
                raise KubeError(code, str(obj.get("reason", "")), str(obj.get("message", "")))
            self._version = str(obj.get("metadata", {}).get("resourceVersion", self._version))
            self.live = True
            if kind == "BOOKMARK":
                continue
            obj = _without_managed_fields(obj)
            if self._transform is not None:
                obj = self._transform(obj)
            key = object_key(obj)
            if kind == "DELETED":
                self.objects.pop(key, None)
            else:
                self.objects[key] = obj
            if self._on_event and kind in ("ADDED", "MODIFIED", "DELETED"):
                self._on_event(str(kind), obj)
