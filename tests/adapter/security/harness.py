"""Serve the real adapter app over real TLS with a given guard, as __main__ does."""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web

from adapter.auth.limits import LimitedAppRunner, Limits, limits_middleware
from adapter.auth.options import client_cas_provider
from adapter.server.app import build_app
from adapter.server.auth_seam import RequestGuard
from adapter.server.tls import ServingTLS, TLSOptions
from tests.adapter.fakes import FakeProvider
from tests.adapter.security.pki import Issued

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
