"""Input limits: what one request may send, and a metav1.Status for every violation.

Two layers, so no violation ends in a dropped connection or a plain-text error:

- the HTTP parser's hard limits (`handler_args()`: request line, header field size and count),
  answered by `StatusRequestHandler` as a Status (414 for the request line, 400 otherwise)
  instead of aiohttp's text page and logged traceback; install them with `LimitedAppRunner`;
- a middleware (`limits_middleware`) for the finer limits: request-URI length (414), body
  size (413), query parameters and label selectors (400). Install it first, so oversized input
  is refused before authentication spends a TokenReview on it.

`Limits.max_objects` bounds the objects one wildcard request may cover (`adapter.kube` applies
it when listing names); a larger match is a 400 asking for a narrower labelSelector.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError, LineTooLong
from aiohttp.typedefs import Middleware
from aiohttp.web_protocol import RequestHandler

from adapter.errors import BadRequest, StatusError
from adapter.server.status import status_response
from common.selectors import SelectorError, parse_selector

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SELECTOR_PARAMS = ("labelSelector", "metricLabelSelector")


@dataclass(frozen=True)
class Limits:
    """Sizes in bytes unless noted; defaults leave room for every real HPA request."""

    max_uri: int = 8192  # path + query; Go's net/http serves 1 MiB of headers, we need far less
    max_request_line: int = 16384  # parser hard limit; above max_uri so the middleware answers
    max_field_size: int = 8190  # one header line (aiohttp's default)
    max_headers: int = 64  # header count; the aggregator sends about a dozen
    max_body: int = 65536  # we serve GET only; a body is never needed
    max_query_params: int = 16  # labelSelector, metricLabelSelector, pretty, ...
    max_selector_length: int = 4096  # characters per selector parameter
    max_selector_values: int = 256  # requirements + set values in one selector
    max_objects: int = 10_000  # objects one wildcard request may cover


DEFAULT_LIMITS = Limits()


class RequestURITooLong(StatusError):
    code = 414
    reason = "RequestURITooLong"


class RequestEntityTooLarge(StatusError):
    code = 413
    reason = "RequestEntityTooLarge"  # metav1.StatusReasonRequestEntityTooLarge


def handler_args(limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """aiohttp parser limits (`web.AppRunner(app, **handler_args())` or `handler_args=`)."""
    return {
        "max_line_size": limits.max_request_line,
        "max_field_size": limits.max_field_size,
        "max_headers": limits.max_headers,
    }


def check_request(request: web.Request, limits: Limits) -> None:
    """Raise a 400/413/414 StatusError if `request` exceeds `limits`."""
    if len(request.raw_path) > limits.max_uri:
        raise RequestURITooLong(f"the request URI is longer than {limits.max_uri} bytes")
    length = request.content_length
    if (length or 0) > limits.max_body:
        raise RequestEntityTooLarge(f"the request body is larger than {limits.max_body} bytes")
    query = request.query
    if len(query) > limits.max_query_params:
        raise BadRequest(f"too many query parameters (more than {limits.max_query_params})")
    for param in SELECTOR_PARAMS:
        for text in query.getall(param, []):
            check_selector(param, text, limits)


def check_selector(param: str, text: str, limits: Limits) -> None:
    """Bound a selector's size; malformed selectors are left to the route (a 400 there too)."""
    if len(text) > limits.max_selector_length:
        raise BadRequest(f"{param}: longer than {limits.max_selector_length} characters")
    if text.count(",") < limits.max_selector_values:
        return  # cannot hold more terms than it has separators: skip the parse
    try:
        selector = parse_selector(text)
    except SelectorError:
        return
    terms = sum(max(1, len(r.values)) for r in selector.requirements)
    if terms > limits.max_selector_values:
        raise BadRequest(f"{param}: more than {limits.max_selector_values} values")


def limits_middleware(limits: Limits = DEFAULT_LIMITS) -> Middleware:
    """Refuse oversized requests with a Status before anything else runs."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            check_request(request, limits)
        except StatusError as err:
            log.info("refused %s %s: %s", request.method, request.path[:200], err.message)
            response = status_response(err)
            # an unread (maybe huge) body stays on the wire: close rather than drain it
            response.force_close()
            return response
        return await handler(request)

    return middleware


class StatusRequestHandler(RequestHandler):
    """aiohttp's connection handler, answering unparseable requests with a metav1.Status."""

    def handle_error(
        self,
        request: Any,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if not isinstance(exc, HttpProcessingError) or request.writer.output_size > 0:
            return super().handle_error(request, status, exc, message)
        err = _parse_error(exc, request_line_limit=self.max_line_size)
        # a client's malformed bytes are not our bug: one line, no traceback, no content
        log.info("refused an unparseable request (%d): %s", err.code, err.message)
        response = status_response(err)
        response.force_close()
        return response


def _parse_error(exc: HttpProcessingError, *, request_line_limit: int) -> StatusError:
    if isinstance(exc, LineTooLong):
        limit = exc.args[1] if len(exc.args) > 1 else None
        if limit == request_line_limit:
            return RequestURITooLong(f"the request line is longer than {limit} bytes")
        return BadRequest(f"a request header is too large (limit {limit} bytes)")
    if "header" in str(exc).lower():
        return BadRequest("malformed or too many request headers")
    return BadRequest("malformed HTTP request")


class _StatusServer(web.Server):
    def __call__(self) -> RequestHandler:
        return StatusRequestHandler(self, loop=self._loop, **self._kwargs)


class LimitedAppRunner(web.AppRunner):
    """`web.AppRunner` with the parser limits of `limits` and Status answers for violations."""

    def __init__(self, app: web.Application, *, limits: Limits = DEFAULT_LIMITS, **kw: Any):
        super().__init__(app, **{**handler_args(limits), **kw})

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        # only the handler class differs; aiohttp offers no public hook to choose it
        server.__class__ = _StatusServer
        return server
