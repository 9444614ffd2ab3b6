"""In-memory object storage with one global, monotonically increasing resourceVersion.

Stored objects are plain JSON dicts that are never mutated after they are stored (writers store a
new dict), so readers may serialise them without copying. Every write produces a `Change`, kept
in a bounded history (for watches that resume from a resourceVersion) and fanned out to
subscribers.
"""

from __future__ import annotations

import asyncio
import builtins
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sandbox import wirejson

Key = tuple[str, str]  # (group, plural)
Obj = dict[str, Any]


@dataclass(frozen=True)
class Change:
    """One write: ADDED, MODIFIED or DELETED, with the object before and after."""

    type: str
    rv: int
    key: Key
    obj: Obj  # for DELETED: the last state, carrying the deletion's resourceVersion
    old: Obj | None
    # encodings of this change's event lines, shared by every watcher that sends them
    lines: dict[tuple[str, str], bytes] = field(default_factory=dict, compare=False, repr=False)


class TooOld(Exception):
    """The requested resourceVersion is older than the retained history."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")


class Subscription:
    """A queue of changes to one resource type, fed by the store."""

    def __init__(self, store: Store, key: Key, namespace: str | None, limit: int) -> None:
        self.store = store
        self.key = key
        self.namespace = namespace
        self.queue: asyncio.Queue[Change | None] = asyncio.Queue()  # None: the stream ends
        self.limit = limit
        self.overflowed = False
        self.ended = False

    def offer(self, change: Change) -> None:
        if self.namespace is not None and change.obj["metadata"].get("namespace") != self.namespace:
            return
        if self.queue.qsize() >= self.limit:
            # a client that stopped reading must not grow memory without bound
            self.overflowed = True
            self.close()
            return
        self.queue.put_nowait(change)

    def close(self) -> None:
        self.store.unsubscribe(self)

    def end(self) -> None:
        """Wake the consumer and tell it to stop (the server is shutting down)."""
        self.ended = True
        self.queue.put_nowait(None)
        self.close()


class Store:
    """Objects by (group, plural) and (namespace, name); changes fanned out to subscribers."""

    def __init__(self, *, history: int = 10_000, subscriber_limit: int = 100_000) -> None:
        self.rv = 1
        self._objects: dict[Key, dict[tuple[str, str], Obj]] = {}
        self._history: deque[Change] = deque(maxlen=history)
        self._subs: dict[Key, set[Subscription]] = {}
        self._listeners: list[Callable[[Change], None]] = []
        self._subscriber_limit = subscriber_limit
        self._horizon = 0  # resourceVersion of the newest change evicted from the history
        # JSON of stored objects by id(): objects are immutable once stored, so encode once
        self._encoded: dict[int, bytes] = {}

    # ---- reads -------------------------------------------------------------------------------

    def get(self, key: Key, namespace: str, name: str) -> Obj | None:
        return self._objects.get(key, {}).get((namespace, name))

    def list(self, key: Key, namespace: str | None = None) -> list[Obj]:
        objs = self._objects.get(key, {})
        if namespace is None:
            return [objs[k] for k in sorted(objs)]
        return [o for (ns, n), o in sorted(objs.items()) if ns == namespace]

    def resource_keys(self) -> builtins.list[Key]:
        """Every (group, plural) that has held objects."""
        return builtins.list(self._objects)

    def count(self, key: Key) -> int:
        return len(self._objects.get(key, {}))

    def encode(self, key: Key, obj: Obj) -> bytes:
        """Compact JSON of `obj`, cached while `obj` is the stored version of its object."""
        meta = obj["metadata"]
        cached = self._encoded.get(id(obj))
        if cached is not None:
            return cached
        data = wirejson.dumps(obj)
        bucket = self._objects.get(key, {})
        if bucket.get((meta.get("namespace", ""), meta["name"])) is obj:
            self._encoded[id(obj)] = data  # only stored objects: their id stays theirs while cached
        return data

    # ---- writes ------------------------------------------------------------------------------

    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def put(self, key: Key, obj: Obj) -> Obj:
        """Store `obj` (stamping a new resourceVersion) and emit ADDED or MODIFIED."""
        rv = self.next_rv()
        meta = obj["metadata"]
        obj = {**obj, "metadata": {**meta, "resourceVersion": str(rv)}}
        ident = (meta.get("namespace", ""), meta["name"])
        bucket = self._objects.setdefault(key, {})
        old = bucket.get(ident)
        if old is not None:
            self._encoded.pop(id(old), None)
        bucket[ident] = obj
        self._emit(Change("MODIFIED" if old is not None else "ADDED", rv, key, obj, old))
        return obj

    def remove(self, key: Key, namespace: str, name: str) -> Obj | None:
        old = self._objects.get(key, {}).pop((namespace, name), None)
        if old is None:
            return None
        self._encoded.pop(id(old), None)
        rv = self.next_rv()
        last = {**old, "metadata": {**old["metadata"], "resourceVersion": str(rv)}}
        self._emit(Change("DELETED", rv, key, last, old))
        return last

    def drop_type(self, key: Key) -> None:
        for ns, name in list(self._objects.get(key, {})):
            self.remove(key, ns, name)

    # ---- change feed -------------------------------------------------------------------------

    def _emit(self, change: Change) -> None:
        if len(self._history) == self._history.maxlen:
            self._horizon = self._history[0].rv
        self._history.append(change)
        for sub in list(self._subs.get(change.key, ())):
            sub.offer(change)
        for listener in self._listeners:
            listener(change)

    def add_listener(self, listener: Callable[[Change], None]) -> None:
        """Call `listener` synchronously on every change (internal controllers)."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[Change], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def subscribe(self, key: Key, namespace: str | None) -> Subscription:
        sub = Subscription(self, key, namespace, self._subscriber_limit)
        self._subs.setdefault(key, set()).add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subs.get(sub.key, set()).discard(sub)

    def end_subscriptions(self) -> None:
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.end()

    def subscriber_count(self) -> int:
        return sum(len(s) for s in self._subs.values())

    def changes_since(self, key: Key, rv: int) -> builtins.list[Change]:
        """Changes to `key` after `rv`; TooOld when history no longer reaches back that far."""
        if rv < self._horizon:
            raise TooOld(rv, self._horizon + 1)
        return [c for c in self._history if c.rv > rv and c.key == key]
