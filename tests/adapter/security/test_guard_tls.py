"""The guard in the real server over real TLS: who gets in, with which Status, and rotation."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import pytest

from adapter.auth.options import AuthOptions, build_guard
from adapter.server.auth_seam import UserInfo
from tests.adapter.security.fakes import FakeCluster
from tests.adapter.security.harness import CM, EM, client_ssl, serve
from tests.adapter.security.pki import issue, make_ca

FRONT_CA = make_ca("front-proxy-ca")
OTHER_CA = make_ca("other-ca")
PROXY = issue(FRONT_CA, "front-proxy-client")
STRANGER = issue(FRONT_CA, "someone")
FORGED = issue(OTHER_CA, "front-proxy-client")
HPA = UserInfo(name="hpa", groups=("system:serviceaccounts",))
PODS = f"{CM}/namespaces/default/pods/*/http_requests"


def configmap(ca=FRONT_CA) -> dict[str, str]:
    return {
        "requestheader-client-ca-file": ca.pem.decode(),
        "requestheader-allowed-names": '["front-proxy-client"]',
        "requestheader-username-headers": '["X-Remote-User"]',
        "requestheader-group-headers": '["X-Remote-Group"]',
        "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
    }


def cluster() -> FakeCluster:
    return FakeCluster(
        tokens={"hpa-token": HPA, "eve-token": UserInfo(name="eve")},
        allow={("hpa", "get", "pods"), ("hpa", "list", "queue_depth"), ("carol", "get", "pods")},
        configmap=configmap(),
    )


async def get(base, path, *, token=None, headers=None, ssl_ctx=None):
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    async with (
        aiohttp.ClientSession() as session,
        session.get(base + path, headers=hdrs, ssl=ssl_ctx or client_ssl()) as resp,
    ):
        return resp.status, await resp.text()


@pytest.fixture
async def served(tmp_path):
    fake = cluster()
    guard = build_guard(AuthOptions(anonymous_auth=True), kube=fake)
    await guard.start()
    async with serve(guard, tmp_path) as base:
        yield base, fake, tmp_path
    await guard.close()


async def test_token_client_without_certificate_connects_and_is_authorized(served):
    base, fake, _ = served
    status, body = await get(base, PODS, token="hpa-token")
    assert status == 200, body
    assert {i["describedObject"]["name"] for i in json.loads(body)["items"]} == {"web-1", "web-2"}
    status, _ = await get(base, f"{EM}/namespaces/default/queue_depth", token="hpa-token")
    assert status == 200
    spec = fake.access_reviews[-1]
    assert spec["resourceAttributes"]["verb"] == "list"


async def test_denied_user_gets_403_status(served):
    base, _, _ = served
    status, body = await get(base, PODS, token="eve-token")
    assert status == 403
    got = json.loads(body)
    assert got["kind"] == "Status"
    assert got["reason"] == "Forbidden"
    assert got["code"] == 403
    assert 'User "eve" cannot get resource "pods/http_requests"' in got["message"]


async def test_bad_token_gets_401_status(served, caplog):
    base, _, _ = served
    status, body = await get(base, PODS, token="s3cret-wrong-token")
    assert status == 401
    assert json.loads(body)["reason"] == "Unauthorized"
    assert "s3cret-wrong-token" not in caplog.text
    assert "denied 401" in caplog.text


async def test_front_proxy_certificate_makes_headers_trusted(served):
    base, _, tmp = served
    headers = {"X-Remote-User": "carol", "X-Remote-Group": "devs"}
    status, body = await get(base, PODS, headers=headers, ssl_ctx=client_ssl(PROXY, tmp))
    assert status == 200, body


@pytest.mark.parametrize(
    "who",
    [pytest.param("none", id="no-client-cert"), pytest.param("cn", id="cn-not-allowed")],
)
async def test_spoofed_headers_are_not_trusted(served, who):
    base, fake, tmp = served
    ctx = client_ssl(STRANGER, tmp) if who == "cn" else client_ssl()
    headers = {"X-Remote-User": "carol", "X-Remote-Group": "system:masters"}
    status, body = await get(base, PODS, headers=headers, ssl_ctx=ctx)
    # no certificate: the headers are ignored and the caller is anonymous (not allowed here);
    # a front-proxy certificate with a CN outside the allowed names is a 401
    assert status == (401 if who == "cn" else 403), body
    assert all(spec["user"] != "carol" for spec in fake.access_reviews)


async def test_certificate_from_another_ca_is_refused_at_the_handshake(served):
    base, fake, tmp = served
    headers = {"X-Remote-User": "carol"}
    with pytest.raises(aiohttp.ClientError):
        await get(base, PODS, headers=headers, ssl_ctx=client_ssl(FORGED, tmp))
    assert all(spec["user"] != "carol" for spec in fake.access_reviews)


async def test_health_paths_need_no_credentials_even_without_anonymous(tmp_path):
    guard = build_guard(
        AuthOptions(anonymous_auth=False, authentication_skip_lookup=True), kube=cluster()
    )
    async with serve(guard, tmp_path) as base:
        for path in ("/healthz", "/livez", "/readyz"):
            assert (await get(base, path))[0] == 200
        assert (await get(base, "/metrics"))[0] == 401
        assert (await get(base, "/apis"))[0] == 401


async def test_rotating_the_request_header_ca_takes_effect_without_restart(served):
    base, fake, tmp = served
    headers = {"X-Remote-User": "carol"}
    assert (await get(base, PODS, headers=headers, ssl_ctx=client_ssl(PROXY, tmp)))[0] == 200
    new_ca = make_ca("front-proxy-ca-2")
    new_proxy = issue(new_ca, "front-proxy-client")
    fake.set_configmap(configmap(new_ca))
    deadline = time.monotonic() + 5
    while True:
        try:
            status, _ = await get(base, PODS, headers=headers, ssl_ctx=client_ssl(new_proxy, tmp))
        except aiohttp.ClientError:
            status = 0
        if status == 200 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert status == 200
    # the old CA is no longer trusted: the handshake or the authenticator refuses it
    try:
        status, _ = await get(base, PODS, headers=headers, ssl_ctx=client_ssl(PROXY, tmp))
    except aiohttp.ClientError:
        status = 0
    assert status in (0, 401)


async def test_authorization_outage_is_503_and_token_outage_401(served):
    base, fake, _ = served
    assert (await get(base, PODS, token="hpa-token"))[0] == 200  # the token review is cached
    fake.down = True
    status, body = await get(base, f"{CM}/namespaces/x/pods/*/http_requests", token="hpa-token")
    assert status == 503, body
    assert json.loads(body)["reason"] == "ServiceUnavailable"
    assert (await get(base, PODS, token="hpa-token"))[0] == 200, "cached decisions still serve"
    status, body = await get(base, PODS, token="eve-token")
    assert status == 401, body  # a token that cannot be reviewed is not a credential (upstream)


async def test_a_configmap_that_appears_after_start_up_takes_effect(tmp_path):
    # OpenSSL decides at start-up whether client certificates are ever requested: the guard
    # must make TLS request them even before the first CA is known
    fake = cluster()
    fake.set_configmap(None)
    guard = build_guard(AuthOptions(), kube=fake)
    await guard.start()
    try:
        async with serve(guard, tmp_path) as base:
            headers = {"X-Remote-User": "carol"}
            status, _ = await get(base, PODS, token="hpa-token")
            assert status == 200, "token clients connect while no CA is known"
            fake.set_configmap(configmap())
            await asyncio.sleep(1.2)  # the TLS layer rechecks client CAs every second
            status, body = await get(
                base, PODS, headers=headers, ssl_ctx=client_ssl(PROXY, tmp_path)
            )
            assert status == 200, body
    finally:
        await guard.close()
