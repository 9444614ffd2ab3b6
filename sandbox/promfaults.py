"""A fault proxy in front of a real Prometheus (test and soak tooling, never the product).

    async with PromFaultProxy(upstream=prom.url) as proxy:   # proxy.url for the adapter
        proxy.set(PromFaultPlan(seed=1, rates={"error": 0.2, "nan": 0.1}))

Each request is forwarded to the upstream unchanged, unless the plan picks a fault for it
(one random draw per request from `random.Random(seed)`, so the same seed and the same request
order give the same faults): `latency` (an exponential delay with the plan's mean), `error`
(a 5xx with Prometheus's error body), `hang` (no answer for `hang_seconds`, past any client's
timeout, then the connection is dropped), and on query answers only: `empty` (no series), `nan`
and `inf` (every sample NaN or +Inf), `partial` (every other series dropped and a Thanos-style
`warnings` entry added). Every injected fault is logged (logger `sandbox.promfaults`) and counted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

__all__ = ["KINDS", "PromFaultPlan", "PromFaultProxy"]

log = logging.getLogger(__name__)
KINDS = ("latency", "error", "hang", "empty", "nan", "inf", "partial")
DATA_KINDS = frozenset({"empty", "nan", "inf", "partial"})  # only a query's answer has samples
QUERY_PATHS = frozenset({"/api/v1/query", "/api/v1/query_range"})
HOP_HEADERS = frozenset({"content-length", "transfer-encoding", "connection", "content-encoding"})


@dataclass(frozen=True)
class PromFaultPlan:
    seed: int = 0
    rates: Mapping[str, float] = field(default_factory=dict)  # kind -> share of requests, 0..1
    latency_seconds: float = 0.5  # the mean of an injected delay (exponential)
    error_code: int = 503  # what `error` answers (500, 502, 503)
    hang_seconds: float = 60.0  # how long `hang` holds a request: past any client timeout
    paths: tuple[str, ...] = ()  # only requests under these path prefixes (empty: all)

    def __post_init__(self) -> None:
        unknown = set(self.rates) - set(KINDS)
        if unknown:
            raise ValueError(f"rates: unknown fault kind {sorted(unknown)[0]!r} (one of {KINDS})")
        if any(not 0 <= r <= 1 for r in self.rates.values()) or sum(self.rates.values()) > 1:
            raise ValueError("rates: each between 0 and 1, and at most 1 together")


class PromFaultProxy:
    """An aiohttp server on 127.0.0.1 that forwards to `upstream` and injects the plan's faults."""

    def __init__(self, *, upstream: str, port: int = 0) -> None:
        self.upstream = upstream.rstrip("/")
        self.port = port
        self.injected: Counter[str] = Counter()
        self.forwarded = 0
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._hung: set[asyncio.Task[Any]] = set()
        self.set(PromFaultPlan())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set(self, plan: PromFaultPlan) -> None:
        self.plan = plan
        self.rng = random.Random(plan.seed)
        log.info("prometheus fault plan set (seed %d): %s", plan.seed, plan)

    async def __aenter__(self) -> PromFaultProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(auto_decompress=True)
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    # ---- one request -------------------------------------------------------------------

    def _pick(self, path: str) -> str | None:
        """The fault for this request, or None: one draw, whatever the path."""
        draw = self.rng.random()
        if self.plan.paths and not path.startswith(self.plan.paths):
            return None
        for kind in KINDS:
            rate = self.plan.rates.get(kind, 0.0)
            if draw < rate:
                return None if kind in DATA_KINDS and path not in QUERY_PATHS else kind
            draw -= rate
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        kind = self._pick(request.path)
        if kind is not None:
            self.injected[kind] += 1
            log.info(
                "prometheus fault injected: %s on %s (seed %d, #%d)",
                kind,
                request.path,
                self.plan.seed,
                self.injected[kind],
            )
        if kind == "hang":
            await asyncio.sleep(self.plan.hang_seconds)
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=504)
        if kind == "error":
            return _prometheus_error(self.plan.error_code)
        if kind == "latency":
            await asyncio.sleep(self.rng.expovariate(1 / max(self.plan.latency_seconds, 1e-3)))
        status, headers, body = await self._forward(request)
        if kind in DATA_KINDS and status == 200:
            body = _rewrite(body, kind)
        return web.Response(status=status, headers=headers, body=body)

    async def _forward(self, request: web.Request) -> tuple[int, dict[str, str], bytes]:
        assert self._session is not None
        self.forwarded += 1
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        headers.pop("Host", None)
        try:
            async with self._session.request(
                request.method,
                self.upstream + request.path_qs,
                headers=headers,
                data=await request.read(),
                allow_redirects=False,
            ) as resp:
                body = await resp.read()
                out = {k: v for k, v in resp.headers.items() if k.lower() not in HOP_HEADERS}
                return resp.status, out, body
        except aiohttp.ClientError as err:
            # the upstream itself is down: a gateway answers 502, as a real proxy would
            log.info("prometheus upstream unreachable: %s", err)
            return 502, {"Content-Type": "text/plain"}, b"upstream unreachable\n"


def _prometheus_error(code: int) -> web.Response:
    body = {"status": "error", "errorType": "internal", "error": "injected fault"}
    return web.json_response(body, status=code)


def _rewrite(body: bytes, kind: str) -> bytes:
    try:
        doc = json.loads(body)
        result = doc["data"]["result"]
    except (ValueError, KeyError, TypeError):
        return body  # not a query answer after all
    if kind == "empty":
        doc["data"]["result"] = [] if isinstance(result, list) else result
    elif kind in ("nan", "inf"):
        text = "NaN" if kind == "nan" else "+Inf"
        for series in result if isinstance(result, list) else []:
            if "value" in series:
                series["value"] = [series["value"][0], text]
            for sample in series.get("values", []):
                sample[1] = text
    elif kind == "partial" and isinstance(result, list):
        doc["data"]["result"] = result[::2]
        doc.setdefault("warnings", []).append("partial response: a store did not answer")
    return json.dumps(doc).encode()
