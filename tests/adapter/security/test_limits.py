"""Oversized or malformed input gets a 400/413/414 metav1.Status, never a dropped connection.

Raw TLS sockets, so nothing on the client side trims or refuses what we send.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass

import pytest

from adapter.auth.limits import Limits
from adapter.server.auth_seam import ALLOW_ALL
from tests.adapter.security.harness import CM, client_ssl, serve

PODS = f"{CM}/namespaces/default/pods/*/http_requests"


async def raw(base: str, data: bytes) -> tuple[int, dict]:
    host, port = base.removeprefix("https://").split(":")
    reader, writer = await asyncio.open_connection(
        host, int(port), ssl=client_ssl(), server_hostname="localhost"
    )
    try:
        writer.write(data)
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        status = int(head.split(b" ", 2)[1])
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        body = await asyncio.wait_for(reader.readexactly(length), 5)
        return status, json.loads(body)
    finally:
        writer.close()
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 2)


def request(target: str, headers: list[tuple[str, str]] = ()) -> bytes:
    lines = [f"GET {target} HTTP/1.1", "Host: localhost", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@dataclass(frozen=True)
class Case:
    data: bytes
    code: int
    reason: str


LIMITS = Limits()
CASES = [
    pytest.param(
        Case(request(PODS + "?labelSelector=" + "a" * 9000), 414, "RequestURITooLong"),
        id="uri-over-max-uri",
    ),
    pytest.param(
        Case(request("/" + "a" * 20000), 414, "RequestURITooLong"), id="request-line-over-parser"
    ),
    pytest.param(
        Case(request(PODS, [("X-Big", "b" * 9000)]), 400, "BadRequest"), id="header-too-large"
    ),
    pytest.param(
        Case(request(PODS, [(f"X-H{i}", "v") for i in range(100)]), 400, "BadRequest"),
        id="too-many-headers",
    ),
    pytest.param(
        Case(request(PODS, [("Content-Length", "1000000")]), 413, "RequestEntityTooLarge"),
        id="body-too-large",
    ),
    pytest.param(
        Case(request(PODS + "?labelSelector=" + "k%3Dv%2C" * 600), 400, "BadRequest"),
        id="selector-too-long",
    ),
    pytest.param(
        Case(
            request(PODS + "?labelSelector=k+in+(" + ",".join(f"v{i}" for i in range(300)) + ")"),
            400,
            "BadRequest",
        ),
        id="selector-too-many-values",
    ),
    pytest.param(
        Case(request(PODS + "?" + "&".join(f"p{i}=1" for i in range(20))), 400, "BadRequest"),
        id="too-many-query-params",
    ),
    pytest.param(Case(b"\x16\x03garbage\r\n\r\n", 400, "BadRequest"), id="garbage-request-line"),
    pytest.param(
        Case(b"GET /apis HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400, "BadRequest"),
        id="malformed-header",
    ),
]


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.mark.parametrize("case", CASES)
async def test_violations_get_a_status(case: Case, tmp_path, caplog):
    async with serve(ALLOW_ALL, tmp_path) as base:
        status, body = await raw(base, case.data)
    assert status == case.code
    assert body["kind"] == "Status"
    assert body["code"] == case.code
    assert body["reason"] == case.reason
    assert "Traceback" not in caplog.text


async def test_requests_within_limits_pass(tmp_path):
    selector = ",".join(f"k{i}=v" for i in range(50))
    async with serve(ALLOW_ALL, tmp_path) as base:
        status, body = await raw(base, request(f"{PODS}?labelSelector={selector}"))
    assert status == 200, body
