"""The watch stream: newline-delimited JSON events, resumable from a resourceVersion.

Semantics of the real API server's watch cache: without a resourceVersion (or "0") the stream
starts with a synthetic ADDED per existing object; with one it replays the retained history after
it, or sends a single ERROR event (410 Expired) when history no longer reaches back; objects that
move into or out of a label/field selector arrive as ADDED or DELETED; BOOKMARKs when asked.
Events are newline-delimited JSON, or length-delimited protobuf frames (`protowatch`) for a
client that asks for protobuf first on a kind of the message table.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace

from aiohttp import web

from common.selectors import EVERYTHING
from sandbox import errors, protowatch, wirejson
from sandbox.operations import Api
from sandbox.resources import ResourceType
from sandbox.store import Change, Obj, Subscription, TooOld

TRUE = ("true", "True", "1")


@dataclass(frozen=True)
class WatchOptions:
    """Parsed watch query parameters and server settings."""

    resource_version: str = ""
    timeout: float = 1800.0  # seconds until the server ends the stream (upstream: 30-60 min)
    bookmarks: bool = False
    send_initial_events: bool = False
    bookmark_interval: float = 5.0  # seconds of quiet before a BOOKMARK (upstream: ~1 min)
    poll: float = 1.0  # seconds between checks that the client is still there
    # each event's object as the client asked for it (a Table for kubectl get -w), else JSON
    render: Callable[[Obj], bytes] | None = None
    max_events: int = 0  # end the stream after this many change events (0: never; faults)
    expire: bool = False  # answer a resume with 410 Expired whatever the history (faults)
    protobuf: bool = False  # frame events as protobuf (protowatch.negotiate chose it)
    json_fallback: bool = False  # JSON would do too: used when the first objects cannot be framed


def _line(kind: str, encoded_object: bytes) -> bytes:
    return b'{"type":"' + kind.encode() + b'","object":' + encoded_object + b"}\n"


class _Stream:
    def __init__(self, response: web.StreamResponse, rt: ResourceType, *, protobuf: bool) -> None:
        self.response = response
        self.rt = rt
        self.protobuf = protobuf

    async def send(self, kind: str, obj: Obj) -> None:
        if self.protobuf:
            await self.response.write(protowatch.frame(kind, obj))
        else:
            await self.response.write(_line(kind, wirejson.dumps(obj)))

    async def cannot_frame(self, err: protowatch.CannotEncode) -> None:
        """End a protobuf stream with an ERROR event rather than drop or garble an object."""
        why = f"the sandbox cannot encode this object as protobuf: {err}"
        await self.send("ERROR", errors.internal(why).status())

    async def bookmark(self, rv: int, *, initial_end: bool = False) -> None:
        meta: dict[str, object] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        await self.send(
            "BOOKMARK", {"kind": self.rt.kind, "apiVersion": self.rt.api_version, "metadata": meta}
        )


def translate(change: Change, matches: Callable[[Obj], bool]) -> tuple[str, Obj] | None:
    """The event a filtered watcher sees for `change`, if any."""
    now = matches(change.obj)
    before = change.old is not None and matches(change.old)
    if change.type == "DELETED":
        return ("DELETED", change.obj) if before else None
    if change.type == "ADDED" or not before:
        return ("ADDED", change.obj) if now else None
    if now:
        return ("MODIFIED", change.obj)
    # left the selector: DELETED with the previous state at the new resourceVersion
    assert change.old is not None
    old_meta = {
        **change.old["metadata"],
        "resourceVersion": change.obj["metadata"]["resourceVersion"],
    }
    return ("DELETED", {**change.old, "metadata": old_meta})


def _encoded(change: Change, kind: str, obj: Obj) -> bytes:
    """JSON of a change's object, encoded once and shared by every watcher that sends it."""
    key = (kind, obj.get("apiVersion", ""))
    data = change.lines.get(key)
    if data is None:
        data = change.lines[key] = wirejson.dumps(obj)
    return data


def _framed(change: Change, kind: str, obj: Obj) -> bytes:
    """A change's protobuf frame, encoded once for every watcher (CannotEncode passes through)."""
    key = (kind, "protobuf " + obj.get("apiVersion", ""))
    data = change.lines.get(key)
    if data is None:
        data = change.lines[key] = protowatch.frame(kind, obj)
    return data


def _backlog_frames(api: Api, rt: ResourceType, backlog: list[tuple[str, Obj]]) -> list[bytes]:
    return [protowatch.frame(kind, api.view(rt, obj)) for kind, obj in backlog]


async def serve_watch(
    request: web.Request,
    api: Api,
    rt: ResourceType,
    namespace: str | None,
    *,
    matches: Callable[[Obj], bool],
    options: WatchOptions,
) -> web.StreamResponse:
    store = api.store
    start_rv: int | None = None
    if options.resource_version not in ("", "0") and not options.send_initial_events:
        try:
            start_rv = int(options.resource_version)
        except ValueError as err:
            raise errors.bad_request(
                f"invalid resource version: {options.resource_version}"
            ) from err
    # subscribe before taking the snapshot: no await in between, so no change can fall through
    sub = store.subscribe(rt.key, namespace)
    try:
        expired: str | None = None
        backlog: list[tuple[str, Obj]] = []
        if start_rv is None:
            backlog = [
                ("ADDED", o) for o in api.list(rt, namespace, labels=EVERYTHING) if matches(o)
            ]
        else:
            try:
                for change in store.changes_since(rt.key, start_rv):
                    ns_ok = (
                        namespace is None or change.obj["metadata"].get("namespace") == namespace
                    )
                    event = translate(change, matches) if ns_ok else None
                    if event:
                        backlog.append(event)
            except TooOld as err:
                expired = str(err)
            if options.expire:
                expired = str(TooOld(start_rv, store.rv))
        snapshot_rv = store.rv
        frames: list[bytes] | None = None
        if options.protobuf:
            try:
                frames = _backlog_frames(api, rt, backlog)
            except protowatch.CannotEncode as err:
                if not options.json_fallback:
                    raise errors.internal(f"cannot encode as protobuf: {err}") from err
                options = replace(options, protobuf=False)  # JSON, which the client accepts too
        ctype = protowatch.CONTENT_TYPE if options.protobuf else "application/json"
        response = web.StreamResponse(
            status=200, headers={"Content-Type": ctype, "Cache-Control": "no-cache, private"}
        )
        await response.prepare(request)
        stream = _Stream(response, rt, protobuf=options.protobuf)
        with contextlib.suppress(ConnectionError, asyncio.CancelledError, RuntimeError):
            if expired is not None:
                await stream.send("ERROR", errors.gone(expired).status())
                return response
            if frames is not None:
                for start in range(0, len(frames), 256):  # a few large writes, as for JSON
                    await stream.response.write(b"".join(frames[start : start + 256]))
            else:
                await _write_json_backlog(stream, api, rt, backlog, options=options)
            if options.send_initial_events and options.bookmarks:
                await stream.bookmark(snapshot_rv, initial_end=True)
            await _follow(request, api, rt, sub, stream, matches=matches, options=options)
        return response
    finally:
        sub.close()


async def _write_json_backlog(
    stream: _Stream,
    api: Api,
    rt: ResourceType,
    backlog: list[tuple[str, Obj]],
    *,
    options: WatchOptions,
) -> None:
    render = options.render or (lambda o: api.store.encode(rt.key, o))
    for start in range(0, len(backlog), 256):  # a few large writes, not one per object
        chunk = backlog[start : start + 256]
        lines = [_line(k, render(api.view(rt, o))) for k, o in chunk]
        await stream.response.write(b"".join(lines))


async def _next_changes(sub: Subscription, wait: float) -> list[Change | None]:
    """Every queued change, waiting up to `wait` seconds for the first ([] on timeout)."""
    if sub.queue.empty():
        try:
            async with asyncio.timeout(wait):  # no wait_for: it costs a task per event on 3.11
                first = await sub.queue.get()
        except TimeoutError:
            return []
        changes = [first]
    else:
        changes = []
    while not sub.queue.empty():
        changes.append(sub.queue.get_nowait())
    return changes


def _event_lines(
    api: Api,
    rt: ResourceType,
    changes: list[Change | None],
    *,
    matches: Callable[[Obj], bool],
    options: WatchOptions,
) -> list[bytes]:
    """The encoded events a watcher sends for `changes` (up to the end marker, None)."""
    lines = []
    for change in changes:
        if change is None:
            break
        event = translate(change, matches)
        if event is not None:
            obj = api.view(rt, event[1])
            # the object of a change is immutable: encode it once for all watchers
            if options.protobuf:
                lines.append(_framed(change, event[0], obj))
                continue
            data = options.render(obj) if options.render else None
            lines.append(_line(event[0], data or _encoded(change, event[0], obj)))
    return lines


async def _follow(
    request: web.Request,
    api: Api,
    rt: ResourceType,
    sub: Subscription,
    stream: _Stream,
    *,
    matches: Callable[[Obj], bool],
    options: WatchOptions,
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + options.timeout
    last_sent = loop.time()
    sent = 0
    while not (sub.overflowed or sub.ended):
        now = loop.time()
        if now >= deadline:
            return
        transport = request.transport
        if transport is None or transport.is_closing():
            return  # the client went away; free the subscription
        wait = min(deadline - now, options.poll)
        if options.bookmarks:
            wait = min(wait, max(0.0, last_sent + options.bookmark_interval - now))
        changes = await _next_changes(sub, wait)
        if not changes:
            if options.bookmarks and loop.time() - last_sent >= options.bookmark_interval:
                await stream.bookmark(api.store.rv)
                last_sent = loop.time()
            continue
        try:
            lines = _event_lines(api, rt, changes, matches=matches, options=options)
        except protowatch.CannotEncode as err:
            await stream.cannot_frame(err)
            return
        if options.max_events and sent + len(lines) >= options.max_events:
            await stream.response.write(b"".join(lines[: options.max_events - sent]))
            return  # cut, as a proxy or an API server restart would
        sent += len(lines)
        if lines:
            await stream.response.write(b"".join(lines))  # one TLS record for a burst
            last_sent = loop.time()
        if None in changes:
            return
