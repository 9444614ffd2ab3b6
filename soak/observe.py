"""What the soak watches while it runs: adapter probes, process resources, replicas, and the
sandbox's audit of /scale writes. Each call returns what it saw, or None when the API or the
process could not be reached this time (that is a fault being injected, not a soak failure)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
import time
from pathlib import Path
from typing import Any

import aiohttp

from demo.rest import Rest, RestError

from . import fleet

__all__ = ["AdapterClient", "Fetch", "process_usage"]

ERRORS = (RestError, aiohttp.ClientError, TimeoutError, OSError, ValueError, KeyError)


class Fetch:
    """Reads through the sandbox as its admin, tolerating the faults the soak injects."""

    def __init__(self, rest: Rest) -> None:
        self.rest = rest

    async def get(self, path: str, **params: str) -> dict[str, Any] | None:
        try:
            return await self.rest.get(path, params=params or None)
        except ERRORS:
            return None

    async def replicas(self) -> dict[str, int] | None:
        """spec.replicas of every target, by name; None if either LIST failed."""
        workers = await self.get(f"/apis/{fleet.GROUP}/v1/namespaces/{fleet.NS}/workers")
        deployments = await self.get(f"/apis/apps/v1/namespaces/{fleet.NS}/deployments")
        if workers is None or deployments is None:
            return None
        items = workers.get("items", []) + deployments.get("items", [])
        return {o["metadata"]["name"]: int(o["spec"].get("replicas", 0)) for o in items}

    async def ready_pods(self) -> dict[str, list[str]] | None:
        """Ready pods by their `app` label."""
        doc = await self.get(f"/api/v1/namespaces/{fleet.NS}/pods")
        if doc is None:
            return None
        out: dict[str, list[str]] = {}
        for pod in doc.get("items", []):
            conditions = (pod.get("status") or {}).get("conditions") or []
            ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
            if ready and not pod["metadata"].get("deletionTimestamp"):
                app = (pod["metadata"].get("labels") or {}).get("app", "")
                out.setdefault(app, []).append(pod["metadata"]["name"])
        return out

    async def scale_writes(self, since: int) -> tuple[list[dict[str, Any]], int] | None:
        doc = await self.get("/sandbox/stats", since=str(since))
        if doc is None:
            return None
        return list(doc["scaleWrites"]), int(doc["next"])

    async def leader(self) -> str | None:
        doc = await self.get(
            f"/apis/coordination.k8s.io/v1/namespaces/{fleet.NS}/leases/promscaler-autoscaler"
        )
        return None if doc is None else str((doc.get("spec") or {}).get("holderIdentity", ""))


class AdapterClient:
    """Requests straight to one adapter replica, authenticated as the aggregator does (the
    sandbox's front-proxy client certificate and X-Remote-* headers)."""

    def __init__(self, *, ca_pem: bytes, cert: Path, key: Path) -> None:
        ctx = ssl.create_default_context(cadata=ca_pem.decode())
        ctx.load_cert_chain(cert, key)
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=ctx, force_close=True),
            headers={"X-Remote-User": "sandbox-admin", "X-Remote-Group": "system:masters"},
        )

    async def probe(self, port: int, path: str, *, limit: float) -> tuple[int, float]:
        """(HTTP status or 0 for no answer, seconds taken)."""
        started = time.monotonic()
        try:
            async with asyncio.timeout(limit):
                async with self.session.get(f"https://127.0.0.1:{port}{path}") as resp:
                    await resp.read()
                    return resp.status, time.monotonic() - started
        except (aiohttp.ClientError, OSError, TimeoutError):
            return 0, time.monotonic() - started

    async def metric(self, port: int, name: str) -> float:
        """One sample of the adapter's own /metrics (NaN when unreadable)."""
        return await _metric(self.session, f"https://127.0.0.1:{port}/metrics", name)

    async def close(self) -> None:
        await self.session.close()


async def _metric(session: aiohttp.ClientSession, url: str, name: str) -> float:
    with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError, ValueError):
        async with asyncio.timeout(3), session.get(url) as resp:
            for line in (await resp.text()).splitlines():
                if line.startswith(name + " "):
                    return float(line.split()[1])
    return float("nan")


async def autoscaler_tasks(session: aiohttp.ClientSession, port: int) -> float:
    url = f"http://127.0.0.1:{port}/metrics"
    return await _metric(session, url, "promscaler_autoscaler_asyncio_tasks")


def process_usage(pid: int) -> tuple[float, int] | None:
    """(RSS in MB, open fds) from /proc, or None when the process is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024, fds
    return None
