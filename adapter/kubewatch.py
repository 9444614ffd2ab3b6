"""LIST then WATCH of one collection, as client-go's reflector: pages of LIST_PAGE objects,
a watch resumed from the last resourceVersion (bookmarks asked for), a relist on 410 Gone, and
a jittered back-off while the API is unreachable."""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import aiohttp

from adapter.errors import KubeUnavailable

if TYPE_CHECKING:
    from adapter.kube import KubeClient

__all__ = ["LIST_PAGE", "REQUEST_TIMEOUT", "WATCH_TIMEOUT", "Gone", "list_and_watch"]

log = logging.getLogger("adapter.kube")

REQUEST_TIMEOUT = 10.0  # seconds per API call; also k8s.io/apiserver's webhook timeout
WATCH_TIMEOUT = 300  # seconds a watch lasts before the server closes it and we re-watch
LIST_PAGE = 500  # objects per LIST page, as client-go's reflector


class Gone(Exception):
    """A watch's resourceVersion is too old (HTTP 410 or an ERROR event with code 410)."""


async def list_and_watch(
    kube: KubeClient, path: str, *, query: list[tuple[str, str]], accept: str = "application/json"
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """("SYNC", {"items": [...]}) after each full LIST, then ("ADDED"|"MODIFIED"|"DELETED", obj).

    Re-watches from the last resourceVersion when a watch ends, relists on 410 Gone, and backs
    off (jittered, up to 30 s) while the API is unreachable. Runs until cancelled.
    """
    backoff = 0.5
    while True:
        try:
            items, version = await _list_all(kube, path, query=query, accept=accept)
            yield "SYNC", {"items": items}
            backoff = 0.5
            while True:
                async for kind, obj in _watch(kube, path, query, version, accept):
                    version = obj.get("metadata", {}).get("resourceVersion", version)
                    if kind != "BOOKMARK":
                        yield kind, obj
        except Gone:
            log.info("watch of %s expired (410); relisting", path)
        except KubeUnavailable as exc:
            log.warning("cannot list/watch %s: %s (retrying in %.1fs)", path, exc, backoff)
            await asyncio.sleep(backoff * (0.5 + random.random()))
            backoff = min(backoff * 2, 30.0)


async def _list_all(
    kube: KubeClient, path: str, *, query: list[tuple[str, str]], accept: str
) -> tuple[list[dict[str, Any]], str]:
    items: list[dict[str, Any]] = []
    token = ""
    while True:
        page = [*query, ("limit", str(LIST_PAGE))] + ([("continue", token)] if token else [])
        body = await kube.json("GET", path, query=page, accept=accept)
        items.extend(body.get("items") or [])
        meta = body.get("metadata") or {}
        token = meta.get("continue") or ""
        if not token:
            return items, str(meta.get("resourceVersion", ""))


async def _watch(
    kube: KubeClient, path: str, query: list[tuple[str, str]], version: str, accept: str
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    params = [
        *query,
        ("watch", "true"),
        ("resourceVersion", version),
        ("allowWatchBookmarks", "true"),
        ("timeoutSeconds", str(WATCH_TIMEOUT)),
    ]
    timeout = aiohttp.ClientTimeout(sock_connect=REQUEST_TIMEOUT, sock_read=WATCH_TIMEOUT + 30)
    response = await kube.request("GET", path, query=params, accept=accept, request_timeout=timeout)
    try:
        if response.status == 410:
            raise Gone()
        if response.status != 200:
            raise KubeUnavailable(f"the Kubernetes API answered {response.status} to a watch")
        async for line in response.content:
            if not line.strip():
                continue
            event = json.loads(line)
            kind, obj = event.get("type", ""), event.get("object") or {}
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise Gone()
                raise KubeUnavailable(f"watch error: {obj.get('message', '')}")
            yield kind, obj
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        raise KubeUnavailable("the watch connection failed") from exc
    finally:
        response.release()
