"""The delegating authenticator: front proxy, client certificates, tokens, anonymous."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pytest
from multidict import CIMultiDict

from adapter.auth.authn import AuthenticationFailed, Authenticator
from adapter.auth.authn_config import AuthnConfig, DynamicAuthnConfig, RequestHeaderConfig
from adapter.auth.certs import CABundle
from adapter.server.auth_seam import ANONYMOUS, UserInfo
from tests.adapter.security.fakes import FakeCluster
from tests.adapter.security.pki import NOW, issue, make_ca

FRONT_CA = make_ca("front-proxy-ca")
CLIENT_CA = make_ca("client-ca")
OTHER_CA = make_ca("someone-else")
PROXY = issue(FRONT_CA, "front-proxy-client")
STRANGER_PROXY = issue(FRONT_CA, "not-the-aggregator")
ALICE_CERT = issue(CLIENT_CA, "alice", orgs=("dev", "ops"))
FORGED = issue(OTHER_CA, "front-proxy-client")
EXPIRED = issue(CLIENT_CA, "old", not_after=NOW - dt.timedelta(minutes=1))
BOB = UserInfo(name="bob", groups=("team",), uid="u-1")


def config(allowed=("front-proxy-client",)) -> DynamicAuthnConfig:
    return DynamicAuthnConfig(
        AuthnConfig(
            client_ca=CABundle.from_pem(CLIENT_CA.pem, source="test"),
            request_header=RequestHeaderConfig(
                ca=CABundle.from_pem(FRONT_CA.pem, source="test"),
                allowed_names=allowed,
                uid_headers=("X-Remote-Uid",),
            ),
        ),
        follow_configmap=False,
    )


@dataclass
class Clock:
    t: float = 0.0

    def __call__(self) -> float:
        return self.t


def make(anonymous=True, cluster=None, clock=None, allowed=("front-proxy-client",)):
    return Authenticator(
        config=config(allowed),
        tokens=cluster if cluster is not None else FakeCluster(tokens={"good": BOB}),
        token_ttl=10.0,
        anonymous=anonymous,
        clock=clock or Clock(),
        wall_clock=lambda: NOW,
    )


@dataclass(frozen=True)
class Case:
    headers: list[tuple[str, str]] = field(default_factory=list)
    cert: bytes | None = None
    anonymous: bool = True
    want: UserInfo | None = None  # None: 401
    allowed: tuple[str, ...] = ("front-proxy-client",)


SPOOF = [("X-Remote-User", "admin"), ("X-Remote-Group", "system:masters")]
CASES = [
    pytest.param(
        Case(
            headers=[
                *SPOOF,
                ("X-Remote-Group", "g2"),
                ("X-Remote-Extra-Scopes", "a"),
                ("X-Remote-Extra-Acme.com%2fproject", "p"),
            ],
            cert=PROXY.der,
            want=UserInfo(
                name="admin",
                groups=("system:masters", "g2", "system:authenticated"),
                extra={"scopes": ("a",), "acme.com/project": ("p",)},
            ),
        ),
        id="front-proxy-trusted-with-extras",
    ),
    pytest.param(
        Case(
            headers=[("X-Remote-User", "u"), ("X-Remote-Uid", "id-7")],
            cert=PROXY.der,
            want=UserInfo(name="u", groups=("system:authenticated",), uid="id-7"),
        ),
        id="front-proxy-uid-header",
    ),
    pytest.param(Case(headers=SPOOF, want=ANONYMOUS), id="spoofed-headers-without-cert-ignored"),
    pytest.param(Case(headers=SPOOF, anonymous=False), id="spoofed-headers-no-anonymous-401"),
    pytest.param(Case(headers=SPOOF, cert=FORGED.der), id="spoofed-headers-other-ca-401"),
    pytest.param(Case(headers=SPOOF, cert=STRANGER_PROXY.der), id="spoofed-cn-not-allowed-401"),
    pytest.param(
        Case(
            headers=SPOOF,
            cert=STRANGER_PROXY.der,
            allowed=(),
            want=UserInfo(name="admin", groups=("system:masters", "system:authenticated")),
        ),
        id="any-cn-when-allowed-names-empty",
    ),
    pytest.param(
        Case(
            headers=SPOOF,
            cert=ALICE_CERT.der,
            want=UserInfo(name="alice", groups=("dev", "ops", "system:authenticated")),
        ),
        id="client-cert-headers-ignored-cn-and-o-used",
    ),
    pytest.param(Case(cert=EXPIRED.der), id="expired-client-cert-401"),
    pytest.param(
        Case(
            headers=[("Authorization", "Bearer good")],
            want=UserInfo(name="bob", groups=("team", "system:authenticated"), uid="u-1"),
        ),
        id="token",
    ),
    pytest.param(
        Case(
            headers=[*SPOOF, ("Authorization", "Bearer good")],
            want=UserInfo(name="bob", groups=("team", "system:authenticated"), uid="u-1"),
        ),
        id="token-with-spoofed-headers-is-token-user",
    ),
    pytest.param(Case(headers=[("Authorization", "Bearer bad")]), id="bad-token-401-not-anonymous"),
    pytest.param(
        Case(headers=[("Authorization", "Bearer ")], want=ANONYMOUS),
        id="bare-bearer-word-is-no-credential-as-upstream",
    ),
    pytest.param(Case(headers=[("Authorization", "Bearer  x")]), id="empty-token-401"),
    pytest.param(Case(headers=[("Authorization", "Bearer a b")]), id="malformed-bearer-401"),
    pytest.param(
        Case(headers=[("Authorization", "Basic Zm9vOmJhcg==")], want=ANONYMOUS),
        id="other-scheme-ignored",
    ),
    pytest.param(Case(want=ANONYMOUS), id="anonymous"),
    pytest.param(Case(anonymous=False), id="anonymous-off-401"),
    pytest.param(
        Case(headers=[("X-Remote-Group", "g")], cert=PROXY.der, want=ANONYMOUS),
        id="front-proxy-without-user-header-names-nobody",
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_authenticate(case: Case):
    authn = make(anonymous=case.anonymous, allowed=case.allowed)
    headers = CIMultiDict(case.headers)
    if case.want is None:
        with pytest.raises(AuthenticationFailed) as info:
            await authn.authenticate(headers, case.cert)
        assert info.value.code == 401
        assert info.value.message == "Unauthorized"
        assert "good" not in info.value.why
        assert "bad" not in info.value.why
    else:
        user = await authn.authenticate(headers, case.cert)
        assert user.name == case.want.name
        assert user.groups == case.want.groups
        assert dict(user.extra) == dict(case.want.extra)
        assert user.uid == case.want.uid


async def test_token_reviews_are_cached_for_the_ttl_and_errors_are_not():
    cluster = FakeCluster(tokens={"good": BOB})
    clock = Clock()
    authn = make(cluster=cluster, clock=clock)
    headers = CIMultiDict([("Authorization", "Bearer good")])
    for _ in range(5):
        await authn.authenticate(headers, None)
    assert cluster.token_reviews == 1
    clock.t = 10.5
    await authn.authenticate(headers, None)
    assert cluster.token_reviews == 2
    cluster.down = True
    clock.t = 30
    for _ in range(2):
        with pytest.raises(AuthenticationFailed):
            await authn.authenticate(headers, None)
    assert cluster.token_reviews == 4, "a failed review must not be cached"
    cluster.down = False
    assert (await authn.authenticate(headers, None)).name == "bob"


async def test_rejected_tokens_are_cached_too():
    cluster = FakeCluster()
    authn = make(cluster=cluster)
    headers = CIMultiDict([("Authorization", "Bearer nope")])
    for _ in range(3):
        with pytest.raises(AuthenticationFailed):
            await authn.authenticate(headers, None)
    assert cluster.token_reviews == 1


async def test_concurrent_requests_share_one_token_review():
    import asyncio

    cluster = FakeCluster(tokens={"good": BOB})
    authn = make(cluster=cluster)
    headers = CIMultiDict([("Authorization", "Bearer good")])
    users = await asyncio.gather(*(authn.authenticate(headers, None) for _ in range(20)))
    assert {u.name for u in users} == {"bob"}
    assert cluster.token_reviews == 1


def test_configmap_fills_what_flags_leave_empty_and_flags_win():
    flags = AuthnConfig(client_ca=CABundle.from_pem(CLIENT_CA.pem, source="flag"))
    dynamic = DynamicAuthnConfig(flags, follow_configmap=True)
    assert dynamic.config.request_header is None
    first = dynamic.generation
    dynamic.update_from_configmap(
        {
            "client-ca-file": OTHER_CA.pem.decode(),
            "requestheader-client-ca-file": FRONT_CA.pem.decode(),
            "requestheader-allowed-names": '["front-proxy-client"]',
            "requestheader-username-headers": '["X-Remote-User"]',
            "requestheader-group-headers": '["X-Remote-Group"]',
            "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
        }
    )
    assert dynamic.generation > first
    assert dynamic.config.client_ca.pem == CLIENT_CA.pem  # the flag wins
    rh = dynamic.config.request_header
    assert rh is not None
    assert rh.allowed_names == ("front-proxy-client",)
    assert rh.username_headers == ("X-Remote-User",)
    cas = dynamic.client_cas()
    assert FRONT_CA.pem.strip() in cas
    assert CLIENT_CA.pem.strip() in cas
    assert OTHER_CA.pem.strip() not in cas


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"requestheader-client-ca-file": "not a pem"}, id="bad-pem"),
        pytest.param(
            {
                "requestheader-client-ca-file": FRONT_CA.pem.decode(),
                "requestheader-allowed-names": "front-proxy",
            },
            id="names-not-json",
        ),
        pytest.param(
            {
                "requestheader-client-ca-file": FRONT_CA.pem.decode(),
                "requestheader-group-headers": '{"a": 1}',
            },
            id="headers-not-a-list",
        ),
    ],
)
def test_an_unreadable_configmap_keeps_the_previous_settings(data, caplog):
    dynamic = DynamicAuthnConfig(AuthnConfig(), follow_configmap=True)
    dynamic.update_from_configmap({"requestheader-client-ca-file": FRONT_CA.pem.decode()})
    before = dynamic.config
    dynamic.update_from_configmap(data)
    assert dynamic.config == before
    assert "ignoring unreadable" in caplog.text
    assert "BEGIN CERTIFICATE" not in caplog.text
