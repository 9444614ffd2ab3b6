"""The aiohttp application: routes, the one middleware (request id, auth, Status errors,
metrics, request log), health endpoints and self-metrics."""

from __future__ import annotations

import itertools
import logging
import os
import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from adapter.errors import MethodNotAllowed, NotFound, StatusError
from adapter.provider.history import RangeHistory
from adapter.provider.resource_provider import ResourceMetricsProvider
from adapter.provider.seams import MetricsProvider
from adapter.server import resource_routes, routes
from adapter.server.auth_seam import ALLOW_ALL, RequestGuard, UserInfo
from adapter.server.responses import ResponseCache
from adapter.server.status import status_response

log = logging.getLogger("adapter.server")
access_log = logging.getLogger("adapter.access")

GUARD: web.AppKey[RequestGuard] = web.AppKey("guard", RequestGuard)
REGISTRY = web.AppKey("registry", CollectorRegistry)
USER = web.RequestKey("user", UserInfo)  # the admitted user
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class RequestMetrics:
    """Request self-metrics."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "promscaler_adapter_requests_total",
            "HTTP requests by route and code.",
            ["route", "code"],
            registry=registry,
        )
        self.latency = Histogram(
            "promscaler_adapter_request_duration_seconds",
            "HTTP request latency by route.",
            ["route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=registry,
        )
        # each (route, code)'s children, looked up once: `labels()` checks its arguments and
        # takes a lock on every call (routes and codes are a small fixed set)
        self._children: dict[tuple[str, int], tuple[Counter, Histogram]] = {}

    def record(self, route: str, code: int, seconds: float) -> None:
        """Count one request and observe its latency."""
        children = self._children.get((route, code))
        if children is None:
            children = (self.requests.labels(route, str(code)), self.latency.labels(route))
            self._children[(route, code)] = children
        children[0].inc()
        children[1].observe(seconds)


# request ids: a random prefix per process and a counter, 16 hex digits as a uuid4's first 16
# were (a uuid4 per request read the kernel's random source every time)
_ID_PREFIX = os.urandom(4).hex()
_ids = itertools.count(1)


def _request_id() -> str:
    return f"{_ID_PREFIX}{next(_ids) & 0xFFFFFFFF:08x}"


def _unexpected(request: web.Request, err: Exception) -> StatusError:
    if isinstance(err, web.HTTPNotFound):
        return NotFound.no_route()
    if isinstance(err, web.HTTPMethodNotAllowed):
        return MethodNotAllowed.for_method()
    log.exception("unexpected error on %s", request.path)  # a bug: keep the detail in logs
    return StatusError("an unexpected error; the adapter's log has the detail")


def _middleware(metrics: RequestMetrics, guard: RequestGuard) -> Middleware:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        request_id = request.headers.get("X-Request-Id") or _request_id()
        user: UserInfo | None = None
        try:
            user = await guard.admit(request)
            request[USER] = user
            response = await handler(request)
        except StatusError as err:
            response = status_response(err)
        except web.HTTPException as err:
            if err.status < 400:
                raise
            response = status_response(_unexpected(request, err))
        except Exception as err:
            response = status_response(_unexpected(request, err))
        response.headers["X-Request-Id"] = request_id
        route = request.get(routes.ROUTE, "other")
        elapsed = time.perf_counter() - started
        metrics.record(route, response.status, elapsed)
        if access_log.isEnabledFor(logging.DEBUG) or response.status >= 500:
            access_log.log(
                logging.WARNING if response.status >= 500 else logging.DEBUG,
                "request",
                extra={
                    "request_id": request_id,
                    "method": request.method,
                    "path": request.path,  # no query string: selectors may be sensitive
                    "code": response.status,
                    "route": route,
                    "duration_ms": round(elapsed * 1000, 3),
                    "user": user.name if user else "",
                },
            )
        return response

    return middleware


async def _healthz(request: web.Request) -> web.Response:
    request[routes.ROUTE] = "health"
    return web.Response(text="ok")


async def _readyz(request: web.Request) -> web.Response:
    request[routes.ROUTE] = "health"
    if request.app[routes.PROVIDER].ready():
        return web.Response(text="ok")
    body = (
        "[-]discovery failed: the first metric discovery pass has not finished\nreadyz check failed"
    )
    return web.Response(status=503, text=body)


async def _metrics(request: web.Request) -> web.Response:
    request[routes.ROUTE] = "metrics"
    body = generate_latest(request.app[REGISTRY])
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


def build_app(
    provider: MetricsProvider,
    *,
    guard: RequestGuard = ALLOW_ALL,
    registry: CollectorRegistry | None = None,
    response_ttl: float = 0.0,
    resource_provider: ResourceMetricsProvider | None = None,
    history: RangeHistory | None = None,
) -> web.Application:
    """The metrics API server app. `registry` receives the request self-metrics and is what
    /metrics exposes (pass the one the provider and client registered on). `response_ttl`
    (seconds, 0 = off) keeps rendered metric answers for identical requests (`--cache-ttl`).
    `resource_provider` serves metrics.k8s.io while its rules are set. `history` serves
    history.promscaler.dev (range reads of external, object and pods metrics); without it that
    group is a 404."""
    registry = registry if registry is not None else CollectorRegistry()
    metrics = RequestMetrics(registry)
    app = web.Application(middlewares=[_middleware(metrics, guard)])
    app[routes.PROVIDER] = provider
    app[GUARD] = guard
    app[REGISTRY] = registry
    app[routes.RESPONSES] = ResponseCache(ttl=response_ttl)
    if resource_provider is not None:
        app[resource_routes.RESOURCE_PROVIDER] = resource_provider
    if history is not None:
        app[routes.HISTORY] = history
    get = app.router.add_get
    # metrics.k8s.io first: aiohttp tries routes in the order they were added
    for path in ("/apis", "/apis/"):
        app.router.add_route("*", path, resource_routes.handle_root)
    for path in ("/apis/metrics.k8s.io", "/apis/metrics.k8s.io/{tail:.*}"):
        app.router.add_route("*", path, resource_routes.handle_group)
    # every method reaches the /apis parser: as go-restful, an unroutable path is a 404 whatever
    # the method, and only a routable one is a 405 for a method other than GET
    app.router.add_route("*", "/apis/{tail:.*}", routes.handle_apis)
    get("/openapi/v2", resource_routes.handle_openapi_v2, allow_head=False)
    get("/openapi/v3", resource_routes.handle_openapi_v3, allow_head=False)
    get("/openapi/v3/{tail:.*}", resource_routes.handle_openapi_v3, allow_head=False)
    get("/version", routes.handle_version, allow_head=False)
    for path in ("/healthz", "/livez", "/healthz/ping", "/livez/ping"):
        get(path, _healthz, allow_head=False)
    get("/readyz", _readyz, allow_head=False)
    get("/metrics", _metrics, allow_head=False)
    return app
