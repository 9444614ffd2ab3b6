"""HTTPS serving (self-signed, rotation, minimum version) and the real kubectl against it."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp import web

from adapter.errors import ConfigError
from adapter.server.app import build_app
from adapter.server.tls import ServingTLS, TLSOptions, ensure_self_signed
from tests.adapter.fakes import FakeLister
from tests.adapter.stack import make_stack, series
from tests.adapter.test_server_routes import provider
from tests.support.prometheus import free_port, remote_write


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


async def serve(app: web.Application, context: ssl.SSLContext):
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=context).start()
    return runner, port


async def peer_cert(port: int, **client_kw) -> bytes:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    for key, value in client_kw.items():
        setattr(ctx, key, value)
    _reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
    der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    writer.close()
    await writer.wait_closed()
    return der


def der_of(path: str) -> bytes:
    return ssl.PEM_cert_to_DER_cert(Path(path).read_text())


async def test_self_signed_certificate_is_kept_in_cert_dir(tmp_path):
    tls = ServingTLS(TLSOptions(cert_dir=str(tmp_path / "certs")))
    assert (tmp_path / "certs" / "apiserver.crt").exists()
    runner, port = await serve(build_app(provider()), tls.context)
    try:
        der = await peer_cert(port)
    finally:
        await runner.cleanup()
    assert der == der_of(str(tmp_path / "certs" / "apiserver.crt"))
    # a restart reuses the pair instead of minting a new one
    again = ensure_self_signed(str(tmp_path / "certs"), now=datetime.now(UTC))
    assert der_of(again[0]) == der


async def test_rotated_certificate_files_are_served_without_restart(tmp_path):
    first = ensure_self_signed(str(tmp_path / "a"), now=datetime.now(UTC))
    second = ensure_self_signed(str(tmp_path / "b"), now=datetime.now(UTC))
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    shutil.copy(first[0], cert)
    shutil.copy(first[1], key)
    clock = Clock()
    tls = ServingTLS(TLSOptions(cert_file=str(cert), key_file=str(key)), clock=clock)
    runner, port = await serve(build_app(provider()), tls.context)
    try:
        assert await peer_cert(port) == der_of(first[0])
        shutil.copy(second[1], key)
        shutil.copy(second[0], cert)
        clock.now += 2  # past the once-a-second recheck
        assert await peer_cert(port) == der_of(second[0])
    finally:
        await runner.cleanup()


async def test_minimum_tls_version_is_enforced(tmp_path):
    tls = ServingTLS(TLSOptions(cert_dir=str(tmp_path), min_version="VersionTLS13"))
    runner, port = await serve(build_app(provider()), tls.context)
    try:
        with pytest.raises((ssl.SSLError, ConnectionResetError)):
            await peer_cert(port, maximum_version=ssl.TLSVersion.TLSv1_2)
        assert await peer_cert(port)  # TLS 1.3 works
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        pytest.param(TLSOptions(min_version="VersionTLS99"), "--tls-min-version", id="version"),
        pytest.param(TLSOptions(cipher_suites=("TLS_NOPE",)), "--tls-cipher-suites", id="suite"),
        pytest.param(TLSOptions(cert_file="x.crt"), "--tls-cert-file", id="cert-without-key"),
    ],
)
def test_bad_tls_options_name_the_flag(options, flag):
    with pytest.raises(ConfigError, match=flag):
        ServingTLS(options)


# ---- the real kubectl ------------------------------------------------------------------------

CM2 = "/apis/custom.metrics.k8s.io/v1beta2"


def kubeconfig(path, port):
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: adapter\n"
        f"clusters: [{{name: adapter, cluster: {{server: 'https://127.0.0.1:{port}', "
        "insecure-skip-tls-verify: true}}]\n"
        "users: [{name: anonymous, user: {token: not-checked}}]\n"
        "contexts: [{name: adapter, context: {cluster: adapter, user: anonymous}}]\n"
    )
    return str(path)


async def kubectl(config: str, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        f"--kubeconfig={config}",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.kubectl
@pytest.mark.prometheus
async def test_kubectl_get_raw_returns_the_documented_bodies(prometheus, tmp_path):
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    await remote_write(
        prometheus.url,
        [
            series("gauge_value", {"namespace": "default", "pod": "web-1"}, [0.5]),
            series("queue_depth", {"queue": "orders"}, [42]),
        ],
    )
    stack = await make_stack(
        prometheus.url, lister=FakeLister({("pods", "default"): {"web-1": {"app": "web"}}})
    )
    await stack.discover()
    tls = ServingTLS(TLSOptions(cert_dir=str(tmp_path / "certs")))
    runner, port = await serve(build_app(stack.provider), tls.context)
    config = kubeconfig(tmp_path / "kubeconfig", port)
    try:
        started = time.time()
        code, out, err = await kubectl(
            config,
            "get",
            "--raw",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/gauge_value"
            "?labelSelector=app%3Dweb",
        )
        assert code == 0, err
        body = json.loads(out)
        (item,) = body["items"]
        assert body["kind"] == "MetricValueList"
        assert body["apiVersion"] == "custom.metrics.k8s.io/v1beta1"
        assert item["describedObject"] == {
            "kind": "Pod",
            "namespace": "default",
            "name": "web-1",
            "apiVersion": "v1",
        }
        assert (item["metricName"], item["value"], item["selector"]) == (
            "gauge_value",
            "500m",
            None,
        )
        stamp = datetime.strptime(item["timestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert abs(stamp.timestamp() - started) < 60

        code, out, err = await kubectl(
            config, "get", "--raw", "/apis/external.metrics.k8s.io/v1beta1/namespaces/x/queue_depth"
        )
        assert code == 0, err
        assert json.loads(out)["items"][0]["metricLabels"] == {"queue": "orders"}

        code, out, err = await kubectl(
            config, "get", "--raw", "/apis/custom.metrics.k8s.io/v1beta2"
        )
        assert code == 0, err
        assert {r["name"] for r in json.loads(out)["resources"]} == {
            "pods/gauge_value",
            "namespaces/gauge_value",
        }

        code, out, err = await kubectl(
            config,
            "get",
            "--raw",
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/web-1/nope",
        )
        assert code != 0
        assert "the server could not find the metric nope for pods" in err
    finally:
        await runner.cleanup()
        await stack.close()
