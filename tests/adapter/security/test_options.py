"""k8s.io/apiserver's authentication/authorization flags: names, defaults, syntax."""

from __future__ import annotations

import argparse

import pytest

from adapter.auth.options import (
    MODE_ALWAYS_ALLOW,
    AuthOptions,
    add_auth_arguments,
    build_guard,
    client_cas_provider,
    parse_duration,
)
from adapter.errors import ConfigError
from adapter.server.auth_seam import ALLOW_ALL
from tests.adapter.security.fakes import FakeCluster
from tests.adapter.security.pki import make_ca


def parse(*argv: str) -> AuthOptions:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_auth_arguments(parser)
    return AuthOptions.from_namespace(parser.parse_args(list(argv)))


def test_defaults_are_upstreams():
    assert parse() == AuthOptions()
    opts = AuthOptions()
    assert opts.token_cache_ttl == 10
    assert opts.authorized_ttl == 10
    assert opts.unauthorized_ttl == 10
    assert opts.always_allow_paths == ("/healthz", "/readyz", "/livez")
    assert opts.anonymous_auth
    assert not opts.authentication_skip_lookup


@pytest.mark.parametrize(
    ("argv", "field", "want"),
    [
        pytest.param(["--anonymous-auth=false"], "anonymous_auth", False, id="go-bool-false"),
        pytest.param(
            ["--authentication-skip-lookup"], "authentication_skip_lookup", True, id="bare-bool"
        ),
        pytest.param(
            ["--authentication-token-webhook-cache-ttl=1m30s"],
            "token_cache_ttl",
            90.0,
            id="duration",
        ),
        pytest.param(
            ["--authorization-webhook-cache-unauthorized-ttl", "250ms"],
            "unauthorized_ttl",
            0.25,
            id="duration-ms",
        ),
        pytest.param(
            ["--authorization-always-allow-paths=/healthz,/metrics"],
            "always_allow_paths",
            ("/healthz", "/metrics"),
            id="slice-replaces-default",
        ),
        pytest.param(
            ["--requestheader-allowed-names=a", "--requestheader-allowed-names=b,c"],
            "requestheader_allowed_names",
            ("a", "b", "c"),
            id="slice-repeated",
        ),
        pytest.param(
            ["--authorization-mode=AlwaysAllow"], "authorization_mode", "AlwaysAllow", id="mode"
        ),
    ],
)
def test_flag_syntax(argv, field, want):
    assert getattr(parse(*argv), field) == want


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--anonymous-auth=maybe"], id="bad-bool"),
        pytest.param(["--authentication-token-webhook-cache-ttl=10"], id="duration-without-unit"),
        pytest.param(["--authorization-mode=RBAC"], id="unknown-mode"),
    ],
)
def test_bad_flag_values_are_refused(argv):
    with pytest.raises(argparse.ArgumentError):
        parse(*argv)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10s", 10), ("1h30m", 5400), ("0", 0), ("1.5s", 1.5), ("100us", 1e-4)],
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


def test_unreadable_ca_files_name_the_flag(tmp_path):
    bad = tmp_path / "ca.crt"
    bad.write_text("garbage")
    with pytest.raises(ConfigError, match="--client-ca-file"):
        AuthOptions(client_ca_file=str(bad)).flag_config()
    with pytest.raises(ConfigError, match="--requestheader-client-ca-file"):
        AuthOptions(requestheader_client_ca_file=str(tmp_path / "missing")).flag_config()


def test_always_allow_without_cluster_is_allow_all_and_warns(caplog):
    guard = build_guard(AuthOptions(authorization_mode=MODE_ALWAYS_ALLOW), kube=None)
    assert guard is ALLOW_ALL
    assert "AlwaysAllow" in caplog.text
    assert client_cas_provider(guard)() is None


def test_delegation_without_cluster_is_a_config_error():
    with pytest.raises(ConfigError):
        build_guard(AuthOptions(), kube=None)


def test_client_cas_come_from_the_flag_files(tmp_path):
    ca = make_ca("front")
    path = tmp_path / "front.crt"
    path.write_bytes(ca.pem)
    guard = build_guard(
        AuthOptions(requestheader_client_ca_file=str(path), authentication_skip_lookup=True),
        kube=FakeCluster(),
    )
    assert ca.pem.strip() in client_cas_provider(guard)()


def test_ca_files_given_by_flags_are_reloaded_when_they_change(tmp_path, caplog):
    from adapter.auth.authn_config import DynamicAuthnConfig
    from adapter.auth.options import FlagFileReloader

    first, second = make_ca("front-1"), make_ca("front-2")
    path = tmp_path / "front.crt"
    path.write_bytes(first.pem)
    options = AuthOptions(requestheader_client_ca_file=str(path))
    config = DynamicAuthnConfig(options.flag_config(), follow_configmap=False)
    reloader = FlagFileReloader(options, config)
    reloader.check()
    assert first.pem.strip() in config.client_cas()
    path.write_bytes(b"half-written")
    reloader.check()
    assert first.pem.strip() in config.client_cas(), "an unreadable file keeps the old CA"
    assert "keeping the previous client CAs" in caplog.text
    path.write_bytes(second.pem + b"\n")
    reloader.check()
    assert second.pem.strip() in config.client_cas()
    assert first.pem.strip() not in config.client_cas()


async def test_an_unreadable_configmap_fails_start_up_unless_tolerated(tmp_path):
    from adapter.errors import KubeUnavailable

    class Unreachable(FakeCluster):
        async def watch_configmap(self, namespace, name):
            raise KubeUnavailable()
            yield  # an async generator that fails at once

    path = tmp_path / "client.crt"
    path.write_bytes(make_ca("client").pem)
    options = AuthOptions(client_ca_file=str(path))
    guard = build_guard(options, kube=Unreachable())
    guard._services[-1]._timeout = 0.3  # the first-read wait, shortened for the test
    with pytest.raises(ConfigError, match="extension-apiserver-authentication"):
        await guard.start()
    assert all(s._task is None for s in guard._services), "nothing left running"
    tolerant = build_guard(
        AuthOptions(authentication_tolerate_lookup_failure=True), kube=Unreachable()
    )
    tolerant._services[-1]._timeout = 0.3
    await tolerant.start()
    await tolerant.close()
