"""A lean HTTP/1.1 client for one origin: keep-alive connections on asyncio protocols, each
response read by httptools (llhttp, the parser Node.js and aiohttp's C extension use).

Why not aiohttp's client, which the adapter used before: a Prometheus query through an
`aiohttp.ClientSession` cost 0.65-0.77 ms of CPU, through this client 0.29-0.39 ms, and read by
hand from a plain asyncio stream 0.25-0.31 ms (bench/bench_prometheus_client.py,
docs/adapter.md); the adapter sends one such query per request it cannot batch or coalesce.
What this client does is what that exchange needs and no more:

- requests are GET or POST with a complete body (Content-Length; never chunked);
- responses end by Content-Length, chunked encoding or the connection's close, and are read
  whole into memory (gzip or deflate undone, off the event loop when large);
- connections are kept alive and reused, at most `limit` at once; a request that finds its
  reused connection closed by the peer before any answer is sent once more on a new one (the
  peer may close an idle connection at any moment: the race every HTTP client has);
- no redirects, proxies, cookies or retries beyond that one. Timeouts are the caller's
  (`asyncio.timeout` around `request`): a cancelled request closes its connection.

Every failure to exchange is an `HttpError` (an OSError: connection refused or reset, a
malformed answer, an answer cut short), with a message that names no URL or header.
"""

from __future__ import annotations

import asyncio
import ssl
import time
import zlib
from collections.abc import Sequence
from typing import NamedTuple, cast
from urllib.parse import urlsplit

import httptools

__all__ = ["HttpError", "Origin", "Response"]

# answers larger than this are decompressed in a worker thread, off the event loop
_INLINE_DECOMPRESS = 1 << 20


class HttpError(ConnectionError):
    """The exchange failed: no connection, the connection lost, or a malformed answer."""


class Response(NamedTuple):
    status: int
    headers: list[tuple[str, str]]  # as the peer sent them, in order, repeated ones too
    body: bytes

    def header(self, name: str) -> str | None:
        """The last value of header `name` (any case), or None."""
        name = name.lower()
        found = None
        for key, value in self.headers:
            if key.lower() == name:
                found = value
        return found


class _Cut(HttpError):
    """The connection ended before a complete answer; `answered` when some of it had come."""

    def __init__(self, message: str, *, answered: bool) -> None:
        super().__init__(message)
        self.answered = answered


class _Connection(asyncio.Protocol):
    """One connection: one request at a time, its answer parsed as it arrives."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._parser = httptools.HttpResponseParser(self)
        self._waiter: asyncio.Future[Response] | None = None
        self._headers: list[tuple[str, str]] = []
        self._body: list[bytes] = []
        self._answered = False  # any byte of the current answer has come
        self._delimited = True  # the answer's end is marked (length or chunks), not the close
        self._keep_alive = False  # the answer lets the connection carry another request
        self._complete = False  # the answer has ended

    # -- asyncio.Protocol ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not subclasses

    def data_received(self, data: bytes) -> None:
        self._answered = True
        if self._waiter is None or self._complete:  # bytes nobody asked for: retire it
            self._abort()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as err:
            self._fail(HttpError(f"malformed HTTP answer: {err}"))
            self._abort()

    def eof_received(self) -> bool:
        return False  # close the transport: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if not self._delimited and self._status is not None:  # the close ends this answer
            self._finish()
            return
        why = "the connection closed before the answer ended"
        self._fail(_Cut(f"{why}: {exc}" if exc else why, answered=self._answered))

    # -- httptools callbacks ---------------------------------------------------------------

    _status: int | None = None

    def on_message_begin(self) -> None:
        if self._complete:  # a second answer to one request: stop before it touches the first
            raise HttpError("more than one answer to a request")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        self._status = self._parser.get_status_code()
        self._delimited = any(
            k.lower() in ("content-length", "transfer-encoding") for k, _ in self._headers
        )

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        # the parser knows whether the connection stays open only until its next message
        self._keep_alive = self._parser.should_keep_alive()
        self._complete = True
        self._finish()

    # -- the client's side -----------------------------------------------------------------

    def _finish(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
            waiter.set_result(Response(self._status or 0, self._headers, body))

    def _fail(self, err: HttpError) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(err)

    def _abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    async def exchange(self, request: bytes) -> Response:
        """Send one request and wait for its whole answer."""
        if self.closed or self.transport is None or self.transport.is_closing():
            raise _Cut("the connection is closed", answered=False)
        self._headers, self._body, self._status = [], [], None
        self._answered, self._delimited, self._keep_alive = False, True, False
        self._complete = False
        self._waiter = self._loop.create_future()
        try:
            self.transport.write(request)
            return await self._waiter
        finally:
            self._waiter = None

    @property
    def reusable(self) -> bool:
        return self._keep_alive and self._delimited and not self.closed

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class Origin:
    """Requests to one scheme://host:port (and path prefix) over up to `limit` connections.

    Create inside a running event loop; `await close()` when done. `ssl_context` is used for
    https: a context, True for the system's defaults, or False to skip verification.
    """

    def __init__(
        self,
        url: str,
        *,
        ssl_context: ssl.SSLContext | bool = True,
        server_hostname: str | None = None,
        limit: int = 64,
        idle_timeout: float = 15.0,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl: ssl.SSLContext | None = None
        self._server_hostname = None
        if parts.scheme == "https":
            self._ssl = _context(ssl_context)
            # the name the certificate must carry: the URL's host unless told otherwise
            self._server_hostname = server_hostname or self._host
        host = f"[{self._host}]" if ":" in self._host else self._host
        default_port = self._port == (443 if parts.scheme == "https" else 80)
        self._host_header = host if default_port else f"{host}:{self._port}"
        self.prefix = parts.path.rstrip("/")  # the URL's path, before every request's own
        self._idle: list[_Connection] = []
        self._slots = asyncio.Semaphore(limit)
        self._idle_timeout = idle_timeout
        self._closed = False
        self.connections_made = 0  # tests and benchmarks read it

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    async def request(
        self,
        method: str,
        target: str,
        headers: Sequence[tuple[str, str]] = (),
        body: bytes | None = None,
    ) -> Response:
        """Send `method target` (target: the path after the prefix, with its query string,
        already percent-encoded) and return the answer, decompressed. Not HEAD: its answer
        announces a body that never comes, and the parser cannot be told."""
        if method == "HEAD":
            raise ValueError("common.http1 does not send HEAD requests")
        request = self._encode(method, target, headers, body)
        async with self._slots:
            for attempt in (1, 2):
                # the second attempt goes on a new connection: another idle one may have been
                # closed in the same moment (a restarted Prometheus closes them all)
                conn, reused = self._take() if attempt == 1 else (None, False)
                if conn is None:
                    conn = await self._connect()
                try:
                    response = await conn.exchange(request)
                except _Cut as err:
                    conn.close()
                    if reused and not err.answered and attempt == 1:
                        continue  # the peer closed an idle connection under us: once more
                    raise
                except BaseException:  # cancelled (a timeout), or anything unforeseen
                    conn._abort()
                    raise
                if conn.reusable and not self._closed:
                    conn.idle_since = time.monotonic()
                    self._idle.append(conn)
                else:
                    conn.close()
                return await _decoded(response)
        raise AssertionError("unreachable")  # pragma: no cover

    def _take(self) -> tuple[_Connection | None, bool]:
        if self._closed:
            raise HttpError("the client is closed")
        stale = time.monotonic() - self._idle_timeout
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed and conn.idle_since > stale:
                return conn, True
            conn.close()
        return None, False

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, conn = await loop.create_connection(
                lambda: _Connection(loop),
                self._host,
                self._port,
                ssl=self._ssl,
                server_hostname=self._server_hostname,
            )
        except ssl.SSLError as err:
            raise HttpError(f"TLS handshake failed: {err.reason or err}") from err
        except OSError as err:
            raise HttpError(f"cannot connect: {err.strerror or type(err).__name__}") from err
        self.connections_made += 1
        return conn

    def _encode(
        self, method: str, target: str, headers: Sequence[tuple[str, str]], body: bytes | None
    ) -> bytes:
        lines = [f"{method} {self.prefix}{target} HTTP/1.1", f"Host: {self._host_header}"]
        lines += [f"{name}: {value}" for name, value in headers]
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        head = "\r\n".join(lines)
        # a CR or LF inside a value (a token file with a stray line, say) would start a new
        # header or request: refuse it rather than send it
        if head.count("\n") != len(lines) - 1 or head.count("\r") != len(lines) - 1:
            raise HttpError("a request line or header value contains CR or LF")
        data = (head + "\r\n\r\n").encode("latin-1")
        return data + body if body else data


def _context(value: ssl.SSLContext | bool) -> ssl.SSLContext:
    if isinstance(value, ssl.SSLContext):
        return value
    context = ssl.create_default_context()
    if value is False:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


async def _decoded(response: Response) -> Response:
    """The answer with its Content-Encoding (gzip or deflate) undone."""
    encoding = (response.header("content-encoding") or "identity").strip().lower()
    if encoding in ("identity", ""):
        return response
    if encoding in ("gzip", "x-gzip"):
        wbits = 16 + zlib.MAX_WBITS
    elif encoding == "deflate":
        wbits = zlib.MAX_WBITS
    else:
        raise HttpError(f"an answer in an encoding not asked for: {encoding[:40]!r}")
    body = response.body
    try:
        if len(body) > _INLINE_DECOMPRESS:
            loop = asyncio.get_running_loop()
            plain = await loop.run_in_executor(None, zlib.decompress, body, wbits)
        else:
            plain = zlib.decompress(body, wbits)
    except zlib.error as err:
        raise HttpError(f"a corrupt {encoding} answer") from err
    # the body is no longer encoded: say so, and give its length as it now is
    headers = [
        (k, v)
        for k, v in response.headers
        if k.lower() not in ("content-encoding", "content-length")
    ]
    return Response(response.status, headers, plain)
