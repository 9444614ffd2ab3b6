"""The guard over real TLS on uvloop, the adapter's default event loop (`--event-loop auto`):
uvloop has its own TLS transport, so the client certificate the guard reads, the SNI-time
context swap and a handshake refusal are checked on it too (test_guard_tls runs on asyncio)."""

from __future__ import annotations

import aiohttp
import pytest

from adapter import eventloop
from adapter.auth.options import AuthOptions, build_guard
from tests.adapter.security.harness import client_ssl, serve
from tests.adapter.security.test_guard_tls import FORGED, PODS, PROXY, STRANGER, cluster, get

SPOOFED = {"X-Remote-User": "carol", "X-Remote-Group": "system:masters"}
VIA_PROXY = {"X-Remote-User": "carol", "X-Remote-Group": "devs"}  # not a privileged group


async def _scenario(tmp_path) -> dict[str, object]:
    """What each kind of caller gets from a server on the running loop."""
    fake = cluster()
    guard = build_guard(AuthOptions(anonymous_auth=True), kube=fake)
    await guard.start()
    seen: dict[str, object] = {}
    try:
        async with serve(guard, tmp_path) as base:
            seen["proxy"] = (
                await get(base, PODS, headers=VIA_PROXY, ssl_ctx=client_ssl(PROXY, tmp_path))
            )[0]
            seen["stranger"] = (
                await get(base, PODS, headers=SPOOFED, ssl_ctx=client_ssl(STRANGER, tmp_path))
            )[0]
            seen["no-cert"] = (await get(base, PODS, headers=SPOOFED))[0]
            seen["token"] = (await get(base, PODS, token="hpa-token"))[0]
            try:
                await get(base, PODS, headers=SPOOFED, ssl_ctx=client_ssl(FORGED, tmp_path))
                seen["forged"] = "answered"
            except aiohttp.ClientError:
                seen["forged"] = "refused"
    finally:
        await guard.close()
    seen["carol-reviewed"] = any(spec["user"] == "carol" for spec in fake.access_reviews)
    return seen


@pytest.mark.parametrize("loop", ["uvloop"])
def test_client_certificates_on_uvloop(tmp_path, loop) -> None:
    seen = eventloop.run(_scenario(tmp_path), loop=loop)
    # the front-proxy certificate makes X-Remote-User trusted: carol may get pods
    assert seen["proxy"] == 200
    # a certificate of the right CA with a CN outside the allowed names: 401
    assert seen["stranger"] == 401
    # no certificate: the headers are ignored, the anonymous caller is not allowed
    assert seen["no-cert"] == 403
    assert seen["token"] == 200
    # another CA's certificate never completes the handshake
    assert seen["forged"] == "refused"
    assert seen["carol-reviewed"] is True  # only through the proxy's certificate
