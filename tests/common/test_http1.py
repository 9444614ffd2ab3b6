"""common.http1: the lean keep-alive client, against scripted servers that answer with exact
bytes (every way an answer can end, be cut, be malformed or be encoded)."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import Awaitable, Callable

import pytest

from common import http1
from common.http1 import HttpError, Origin

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[bool]]


class Script:
    """A server that reads each request and lets `handler(reader, writer, n)` answer the n-th
    (counting from 0 across connections); the handler returns False to close the connection."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[bytes] = []
        self.connections = 0
        self.server: asyncio.Server | None = None
        self.url = ""
        self._serving: set[asyncio.Task[None]] = set()
        self._writers: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> Script:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        for writer in self._writers:
            writer.close()
        for task in self._serving:
            task.cancel()
        await asyncio.gather(*self._serving, return_exceptions=True)
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._serving.add(task)
        self._writers.append(writer)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                request = head + (await reader.readexactly(length) if length else b"")
                self.requests.append(request)
                if not await self.handler(reader, writer, len(self.requests) - 1):
                    return
        finally:
            writer.close()


def ok(body: bytes, *extra: str) -> bytes:
    head = ["HTTP/1.1 200 OK", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def answer(data: bytes, *, keep: bool = True) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(data)
        await writer.drain()
        return keep

    return handler


async def test_keep_alive_reuses_one_connection_and_sends_a_well_formed_request() -> None:
    async with Script(answer(ok(b'{"a":1}', "Content-Type: application/json"))) as s:
        origin = Origin(s.url + "/prefix/")
        try:
            for _ in range(5):
                resp = await origin.request("GET", "/api/v1/query?query=up", [("X-A", "1")])
                assert (resp.status, resp.body) == (200, b'{"a":1}')
                assert resp.header("content-type") == "application/json"
                assert resp.headers[1] == ("Content-Type", "application/json")
            posted = await origin.request("POST", "/api/v1/query", [], b"query=up")
            assert posted.body == b'{"a":1}'
        finally:
            await origin.close()
    assert (origin.connections_made, s.connections) == (1, 1)
    port = s.url.rsplit(":", 1)[1]
    assert (
        s.requests[0]
        == (
            f"GET /prefix/api/v1/query?query=up HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "X-A: 1\r\n\r\n"
        ).encode()
    )
    assert s.requests[5].startswith(b"POST /prefix/api/v1/query HTTP/1.1\r\n")
    assert s.requests[5].endswith(b"Content-Length: 8\r\n\r\nquery=up")


async def test_chunked_and_close_delimited_answers() -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n"
    )
    async with Script(answer(chunked)) as s:
        origin = Origin(s.url)
        assert (await origin.request("GET", "/")).body == b"abcdefg"
        assert (await origin.request("GET", "/")).body == b"abcdefg"
        await origin.close()
    assert origin.connections_made == 1
    # no length and no chunks: the answer ends when the server closes
    async with Script(answer(b"HTTP/1.1 200 OK\r\n\r\nuntil the end", keep=False)) as s:
        origin = Origin(s.url)
        assert (await origin.request("GET", "/")).body == b"until the end"
        assert (await origin.request("GET", "/")).body == b"until the end"
        await origin.close()
    assert origin.connections_made == 2  # such a connection is never reused


async def test_repeated_headers_are_kept_in_order() -> None:
    async with Script(answer(ok(b"x", "Warning: 299 - a", "warning: 299 - b"))) as s:
        origin = Origin(s.url)
        resp = await origin.request("GET", "/")
        await origin.close()
    assert [v for k, v in resp.headers if k.lower() == "warning"] == ["299 - a", "299 - b"]
    assert resp.header("WARNING") == "299 - b"
    assert resp.header("x-absent") is None


async def test_connection_close_is_obeyed() -> None:
    async with Script(answer(ok(b"x", "Connection: close"), keep=False)) as s:
        origin = Origin(s.url)
        for _ in range(3):
            assert (await origin.request("GET", "/")).body == b"x"
        await origin.close()
    assert origin.connections_made == 3


async def test_an_idle_connection_closed_by_the_peer_is_replaced_once() -> None:
    # the server answers and then closes every connection without saying so (a proxy's idle
    # timeout): the next request finds its connection gone, and goes on a new one
    async with Script(answer(ok(b"fine"), keep=False)) as s:
        origin = Origin(s.url)
        assert (await origin.request("GET", "/")).body == b"fine"
        await asyncio.sleep(0.05)  # the close reaches us while the connection is idle
        assert (await origin.request("GET", "/")).body == b"fine"
        await origin.close()
    assert (len(s.requests), origin.connections_made) == (2, 2)


async def test_a_request_the_peer_drops_unanswered_on_a_reused_connection_goes_once_more() -> None:
    # the race every keep-alive client has: the request is written as the server closes
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n == 1:
            return False  # read, then closed without a word
        writer.write(ok(b"fine"))
        await writer.drain()
        return True

    async with Script(handler) as s:
        origin = Origin(s.url)
        assert (await origin.request("GET", "/")).body == b"fine"
        assert (await origin.request("GET", "/")).body == b"fine"
        await origin.close()
    assert (len(s.requests), origin.connections_made) == (3, 2)

    # once more only: a server that drops every later request is an error, not a loop
    async def drops(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n >= 1:
            return False
        writer.write(ok(b"fine"))
        await writer.drain()
        return True

    async with Script(drops) as s:
        origin = Origin(s.url)
        await origin.request("GET", "/")
        with pytest.raises(HttpError, match="closed before the answer ended"):
            await origin.request("GET", "/")
        await origin.close()
    assert len(s.requests) == 3


async def test_the_second_attempt_takes_a_new_connection_not_another_idle_one() -> None:
    # two idle connections, both closed by the server as the next request arrives on them
    seen: dict[int, int] = {}

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        seen[id(writer)] = seen.get(id(writer), 0) + 1
        if seen[id(writer)] > 1:
            return False  # each connection answers its first request only
        await asyncio.sleep(0.02)  # the first two requests overlap: two connections
        writer.write(ok(b"fine"))
        await writer.drain()
        return True

    async with Script(handler) as s:
        origin = Origin(s.url)
        await asyncio.gather(origin.request("GET", "/"), origin.request("GET", "/"))
        assert len(origin._idle) == 2
        assert (await origin.request("GET", "/")).body == b"fine"
        await origin.close()
    assert origin.connections_made == 3


async def test_an_answer_cut_short_is_an_error_and_not_resent() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
        await writer.drain()
        return False

    async with Script(handler) as s:
        origin = Origin(s.url)
        with pytest.raises(HttpError, match="closed before the answer ended"):
            await origin.request("GET", "/")
        await origin.close()
    assert len(s.requests) == 1


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"SMTP ready\r\n\r\n", id="not-http"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", id="bad-length"),
        pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", id="chunk"),
    ],
)
async def test_a_malformed_answer_is_an_error(data: bytes) -> None:
    async with Script(answer(data)) as s:
        origin = Origin(s.url)
        with pytest.raises(HttpError, match="malformed HTTP answer"):
            await origin.request("GET", "/")
        await origin.close()


async def test_bytes_nobody_asked_for_retire_the_connection() -> None:
    # two answers to one request: the second must not be read as the next request's
    async with Script(answer(ok(b"one") + ok(b"two"))) as s:
        origin = Origin(s.url)
        assert (await origin.request("GET", "/")).body == b"one"
        assert (await origin.request("GET", "/")).body == b"one"
        await origin.close()
    assert origin.connections_made == 2


async def test_encodings(monkeypatch: pytest.MonkeyPatch) -> None:
    text = b'{"status":"success"}' * 50
    deflated = zlib.compress(text)
    for data, want in [
        (ok(gzip.compress(text), "Content-Encoding: gzip"), text),
        (ok(deflated, "Content-Encoding: deflate"), text),
        (ok(text, "Content-Encoding: identity"), text),
    ]:
        async with Script(answer(data)) as s:
            origin = Origin(s.url)
            resp = await origin.request("GET", "/")
            await origin.close()
        assert resp.body == want
        if resp.header("content-length") != str(len(want)):  # decoded: the headers say so
            assert [k for k, _ in resp.headers] == []
    # a large answer is decompressed off the event loop, to the same bytes
    monkeypatch.setattr(http1, "_INLINE_DECOMPRESS", 10)
    async with Script(answer(ok(gzip.compress(text), "Content-Encoding: gzip"))) as s:
        origin = Origin(s.url)
        assert (await origin.request("GET", "/")).body == text
        await origin.close()
    for data, message in [
        (ok(b"not gzip at all", "Content-Encoding: gzip"), "corrupt gzip"),
        (ok(b"x", "Content-Encoding: br"), "encoding not asked for"),
    ]:
        async with Script(answer(data)) as s:
            origin = Origin(s.url)
            with pytest.raises(HttpError, match=message):
                await origin.request("GET", "/")
            await origin.close()


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\rb"])
async def test_a_header_value_with_cr_or_lf_is_refused_before_sending(value: str) -> None:
    async with Script(answer(ok(b""))) as s:
        origin = Origin(s.url)
        with pytest.raises(HttpError, match="CR or LF"):
            await origin.request("GET", "/", [("Authorization", value)])
        with pytest.raises(HttpError, match="CR or LF"):
            await origin.request("GET", "/x\r\nX-Injected: 1")
        await origin.close()
    assert s.requests == []


async def test_cancelled_request_closes_its_connection() -> None:
    hung = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n == 0:
            hung.set()
            await asyncio.sleep(30)  # Prometheus hung
        writer.write(ok(b"late"))
        await writer.drain()
        return True

    async with Script(handler) as s:
        origin = Origin(s.url)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await origin.request("GET", "/")
        assert hung.is_set()
        assert origin._idle == []
        assert (await origin.request("GET", "/")).body == b"late"
        await origin.close()
    assert origin.connections_made == 2


async def test_at_most_limit_connections_at_once() -> None:
    open_now = 0
    most = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        nonlocal open_now, most
        open_now += 1
        most = max(most, open_now)
        await asyncio.sleep(0.02)
        open_now -= 1
        writer.write(ok(b"x"))
        await writer.drain()
        return True

    async with Script(handler) as s:
        origin = Origin(s.url, limit=3)
        bodies = await asyncio.gather(*(origin.request("GET", "/") for _ in range(12)))
        await origin.close()
    assert [b.body for b in bodies] == [b"x"] * 12
    assert most == 3
    assert origin.connections_made == 3


async def test_idle_connections_expire() -> None:
    async with Script(answer(ok(b"x"))) as s:
        origin = Origin(s.url, idle_timeout=0.05)
        await origin.request("GET", "/")
        await origin.request("GET", "/")
        await asyncio.sleep(0.1)
        await origin.request("GET", "/")
        await origin.close()
    assert origin.connections_made == 2


async def test_refused_and_closed() -> None:
    async with Script(answer(ok(b"x"))) as s:
        url = s.url
    origin = Origin(url)  # the server is gone: nothing listens on that port
    with pytest.raises(HttpError, match="cannot connect"):
        await origin.request("GET", "/")
    await origin.close()
    with pytest.raises(HttpError, match="closed"):
        await origin.request("GET", "/")


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://[::1]:9090", "[::1]:9090"),
        ("https://prom.example:443/x", "prom.example"),
        ("http://prom.example", "prom.example"),
    ],
)
def test_host_header(url: str, host: str) -> None:
    origin = Origin(url)
    line, host_line = origin._encode("GET", "/q", [], None).split(b"\r\n")[:2]
    assert line == f"GET {origin.prefix}/q HTTP/1.1".encode()
    assert host_line == f"Host: {host}".encode()


async def test_head_is_refused() -> None:
    origin = Origin("http://127.0.0.1:9")
    with pytest.raises(ValueError, match="HEAD"):
        await origin.request("HEAD", "/")
    await origin.close()


@pytest.mark.parametrize("url", ["ftp://h/", "http:///nohost", "prometheus:9090"])
def test_not_an_http_url(url: str) -> None:
    with pytest.raises(ValueError, match="not an http"):
        Origin(url)
