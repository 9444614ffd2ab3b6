"""A trickling watch is read on the work queue's grid: after a small read the socket is left
unread until the next multiple of `watch_coalesce` seconds, so events arriving meanwhile wait in
the kernel and are read together (autoscaler/kube/client.py). Over TLS too, where pausing the
transport alone would leave the TLS layer reading the socket; on asyncio's loop and uvloop's,
whose TLS transports differ."""

from __future__ import annotations

import array
import asyncio
import fcntl
import json
import math
import ssl
import termios
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from autoscaler.kube import client as kube_client
from autoscaler.kube.client import KubeClient, connect
from common import eventloop
from sandbox.certs import issue, make_ca

PERIOD = 0.4  # seconds: long enough that "before the grid point" is unambiguous on a busy CI

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "{server}"{extra}}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""


def unread_bytes(transport: asyncio.BaseTransport) -> int:
    """Bytes the kernel holds for the socket under `transport` that nobody has read yet."""
    sock = transport.get_extra_info("socket")
    count = array.array("i", [0])
    fcntl.ioctl(sock.fileno(), termios.FIONREAD, count)
    return count[0]


def event(n: int, pad: int = 0) -> bytes:
    obj = {"metadata": {"name": f"o{n}", "resourceVersion": str(n)}, "pad": "x" * pad}
    return json.dumps({"type": "MODIFIED", "object": obj}).encode() + b"\n"


class Stream:
    """A watch endpoint whose events the test sends one at a time (`send`)."""

    def __init__(self) -> None:
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        await resp.prepare(request)
        while (data := await self.outbox.get()) is not None:
            await resp.write(data)
        return resp


async def _serve(tmp: Path, stream: Stream, tls: bool) -> tuple[web.AppRunner, str, str]:
    app = web.Application()
    app.router.add_get("/w", stream.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    context, extra = None, ""
    if tls:
        now = datetime.now(UTC)
        ca = make_ca("test-ca", now=now)
        cert, key = issue(ca, "server", now=now, hosts=("127.0.0.1",), server=True).write(
            tmp, "server"
        )
        ca_path, _ = ca.write(tmp, "ca")
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        extra = f", certificate-authority: {ca_path}"
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"{'https' if tls else 'http'}://127.0.0.1:{port}", extra


async def _client(tmp: Path, server: str, extra: str, coalesce: float) -> KubeClient:
    path = tmp / "kubeconfig"
    path.write_text(KUBECONFIG.format(server=server, extra=extra))
    client = await connect(str(path))
    client.watch_coalesce = coalesce
    return client


async def _until(check: Any, limit: float = 5.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def _scenario(tmp: Path, tls: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    held: list[asyncio.BaseTransport] = []
    real = kube_client._stop_socket_reads

    def spy(transport: asyncio.Transport) -> Any:
        held.append(transport)
        return real(transport)

    monkeypatch.setattr(kube_client, "_stop_socket_reads", spy)
    stream = Stream()
    runner, server, extra = await _serve(tmp, stream, tls)
    client = await _client(tmp, server, extra, PERIOD)
    got: list[tuple[float, str]] = []

    async def consume() -> None:
        async for ev in client.watch("/w"):
            got.append((time.monotonic(), ev["object"]["metadata"]["name"]))

    seen: dict[str, Any] = {}
    task = asyncio.create_task(consume())
    try:
        # start just after a grid point, so the hold after the first read lasts most of PERIOD
        now = time.monotonic()
        await asyncio.sleep(math.ceil(now / PERIOD) * PERIOD + 0.02 - now)
        stream.outbox.put_nowait(event(1))
        await _until(lambda: len(got) == 1 and held)
        grid = math.ceil(got[0][0] / PERIOD) * PERIOD
        for n in (2, 3, 4):
            stream.outbox.put_nowait(event(n))
        await asyncio.sleep(0.1)
        seen["early"] = [name for _, name in got]  # what was delivered before the grid point
        seen["in_kernel"] = unread_bytes(held[0])  # left in the socket meanwhile
        seen["before_grid"] = time.monotonic() < grid
        await _until(lambda: len(got) == 4)
        seen["late_at"] = [round(t - grid, 3) for t, _ in got[1:]]
        seen["after"] = unread_bytes(held[0])
        # a burst: a big event sent during a hold is read in big reads after it, and a read of
        # COALESCE_BELOW bytes or more is followed by no hold, so the event after it comes at once
        now = time.monotonic()
        await asyncio.sleep(math.ceil(now / PERIOD) * PERIOD + 0.02 - now)
        stream.outbox.put_nowait(event(5))
        await _until(lambda: len(got) == 5)
        stream.outbox.put_nowait(event(6, pad=400_000))  # arrives during the hold after 5
        await _until(lambda: len(got) == 6)
        stream.outbox.put_nowait(event(7))
        await _until(lambda: len(got) == 7)
        seen["after_burst"] = round(got[6][0] - got[5][0], 3)
        seen["names"] = [name for _, name in got]
        stream.outbox.put_nowait(None)
        await asyncio.wait_for(task, 5)
    finally:
        task.cancel()
        stream.outbox.put_nowait(None)  # the handler ends, so the server's cleanup does not wait
        await client.close()
        await runner.cleanup()
    return seen


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_events_of_a_trickle_wait_in_the_socket_for_the_grid(
    tmp_path: Path, loop: str, tls: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = eventloop.run(_scenario(tmp_path, tls, monkeypatch), loop=loop)
    assert seen["before_grid"], "the check ran after the grid point: the test cannot tell"
    assert seen["early"] == ["o1"]  # 2-4 were sent but not delivered before the grid point
    assert seen["in_kernel"] > 0  # they waited unread in the socket, not in a buffer of ours
    assert all(-0.005 <= t < 0.2 for t in seen["late_at"])  # then came at the grid point
    assert seen["after"] == 0
    assert seen["after_burst"] < PERIOD / 2  # no hold after the big read
    assert seen["names"] == [f"o{n}" for n in range(1, 8)]  # all, in order


async def _plain_scenario(tmp: Path) -> list[float]:
    stream = Stream()
    runner, server, extra = await _serve(tmp, stream, tls=False)
    client = await _client(tmp, server, extra, 0.0)
    got: list[float] = []

    async def consume() -> None:
        async for _ in client.watch("/w"):
            got.append(time.monotonic())

    task = asyncio.create_task(consume())
    try:
        stream.outbox.put_nowait(event(1))
        await _until(lambda: len(got) == 1)
        sent = time.monotonic()
        stream.outbox.put_nowait(event(2))
        await _until(lambda: len(got) == 2)
        stream.outbox.put_nowait(None)
        await asyncio.wait_for(task, 5)
    finally:
        task.cancel()
        stream.outbox.put_nowait(None)  # the handler ends, so the server's cleanup does not wait
        await client.close()
        await runner.cleanup()
    return [got[1] - sent]


def test_without_coalescing_an_event_is_read_as_it_comes(tmp_path: Path) -> None:
    [delay] = eventloop.run(_plain_scenario(tmp_path), loop="asyncio")
    assert delay < PERIOD / 2
