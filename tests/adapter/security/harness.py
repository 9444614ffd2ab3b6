"""Serve the real adapter app over real TLS with a given guard, as __main__ does."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from aiohttp import web

from adapter.auth.limits import LimitedAppRunner, Limits, limits_middleware
from adapter.auth.options import client_cas_provider
from adapter.server.app import build_app
from adapter.server.auth_seam import RequestGuard
from adapter.server.tls import ServingTLS, TLSOptions
from tests.adapter.fakes import FakeProvider
from tests.adapter.security.pki import Issued

T = TypeVar("T")
CM = "/apis/custom.metrics.k8s.io/v1beta2"
EM = "/apis/external.metrics.k8s.io/v1beta1"


def fake_provider() -> FakeProvider:
    return FakeProvider(
        custom={("pods", "http_requests"): {"web-1": "1500m", "web-2": "2"}},
        external={"queue_depth": [({"queue": "orders"}, "42")]},
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def serve(
    guard: RequestGuard,
    tmp_path: Path,
    *,
    provider: FakeProvider | None = None,
    limits: Limits | None = None,
    port: int | None = None,
) -> AsyncIterator[str]:
    """Start the app on 127.0.0.1 with TLS; yields the base URL."""
    tls = ServingTLS(
        TLSOptions(cert_dir=str(tmp_path / "serving")), client_cas=client_cas_provider(guard)
    )
    app = build_app(provider or fake_provider(), guard=guard)
    app.middlewares.insert(0, limits_middleware(limits or Limits()))
    runner = LimitedAppRunner(app, limits=limits or Limits(), access_log=None)
    await runner.setup()
    port = port or free_port()
    site = web.TCPSite(runner, "127.0.0.1", port, ssl_context=tls.context)
    await site.start()
    try:
        yield f"https://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def client_ssl(cert: Issued | None = None, tmp_path: Path | None = None) -> ssl.SSLContext:
    """A client context that skips server verification (not under test) and may present `cert`."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if cert is not None:
        assert tmp_path is not None
        certfile, keyfile = cert.write(tmp_path, f"client-{id(cert)}")
        ctx.load_cert_chain(certfile, keyfile)
    return ctx


class ThreadedServer:
    """An app served on 127.0.0.1 (plain HTTP) from its own thread and event loop, so sync
    code (hypothesis tests, http.client) can call it; `make_app` runs inside that loop."""

    def __init__(self, make_app: Callable[[], Awaitable[web.Application]]) -> None:
        self.port = free_port()
        self._make_app = make_app
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ThreadedServer:
        started = threading.Event()
        self._started = started
        self._thread.start()
        assert started.wait(10), "the threaded server did not start"
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._started.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        app = await self._make_app()
        app.middlewares.insert(0, limits_middleware(Limits()))
        self._runner = LimitedAppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    def call(self, coro: Awaitable[T]) -> T:
        """Run `coro` on the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(30)  # type: ignore[arg-type]

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            self.call(self._runner.cleanup())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def get(self, target: str, *, token: str | None = None) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            # the target goes on the wire exactly as given
            conn.putrequest("GET", target, skip_accept_encoding=True)
            if token:
                conn.putheader("Authorization", f"Bearer {token}")
            conn.endheaders()
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()
