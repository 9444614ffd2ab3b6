"""The Prometheus client against a recording stand-in server: verbs, auth, error mapping."""

from __future__ import annotations

import base64
import json
import os

import pytest
from aiohttp import web

from adapter.errors import ConfigError, PrometheusQueryError, PrometheusUnavailable
from adapter.prometheus import MAX_GET_URL, USER_AGENT, PrometheusClient, PrometheusOptions

VECTOR = {
    "status": "success",
    "data": {
        "resultType": "vector",
        "result": [
            {"metric": {"pod": "a"}, "value": [1767225600.5, "1.5"]},
            {"metric": {"pod": "b"}, "value": [1767225600.5, "NaN"]},
        ],
    },
}


@pytest.fixture
async def fake_prom(aiohttp_server):
    seen = []
    answer = {"status": 200, "body": json.dumps(VECTOR)}

    async def handler(request: web.Request):
        form = dict(await request.post()) if request.method == "POST" else {}
        seen.append(
            {
                "method": request.method,
                "query": dict(request.query),
                "form": form,
                "headers": dict(request.headers),
            }
        )
        return web.Response(
            status=answer["status"], text=answer["body"], content_type="application/json"
        )

    app = web.Application()
    app.router.add_route("*", "/api/v1/{endpoint}", handler)
    server = await aiohttp_server(app)
    server.seen = seen
    server.answer = answer
    server.base = str(server.make_url("")).rstrip("/")
    return server


async def test_query_parses_vectors_and_keeps_exact_values(fake_prom):
    client = PrometheusClient(PrometheusOptions(url=fake_prom.base))
    try:
        samples = await client.query("up")
    finally:
        await client.close()
    assert [(dict(s.labels), str(s.value)) for s in samples] == [
        ({"pod": "a"}, "1.5"),
        ({"pod": "b"}, "NaN"),
    ]
    assert fake_prom.seen[0]["method"] == "GET"
    assert fake_prom.seen[0]["query"] == {"query": "up"}


async def test_query_keyed_keys_samples_by_a_label_and_counts_the_dropped(fake_prom):
    client = PrometheusClient(PrometheusOptions(url=fake_prom.base))
    try:
        keyed = await client.query_keyed(
            "up",
            label="pod",
            time_of=lambda ts: ts,
            value_of=lambda text: None if text == "NaN" else text,
        )
    finally:
        await client.close()
    assert keyed.points == {"a": (1767225600.5, "1.5")}
    assert keyed.dropped == 1
    assert fake_prom.seen[0]["query"] == {"query": "up"}


@pytest.mark.parametrize(
    ("verb", "length", "method"),
    [
        pytest.param("GET", 100, "GET", id="get-short"),
        pytest.param("GET", MAX_GET_URL, "POST", id="get-too-long-becomes-post"),
        pytest.param("POST", 100, "POST", id="post"),
    ],
)
async def test_verbs(fake_prom, verb, length, method):
    client = PrometheusClient(PrometheusOptions(url=fake_prom.base, verb=verb))
    promql = "up{" + 'pod=~"' + "a" * length + '"}'
    try:
        await client.query(promql)
    finally:
        await client.close()
    seen = fake_prom.seen[-1]
    assert seen["method"] == method
    assert (seen["form"] or seen["query"])["query"] == promql


async def test_token_file_is_reread_and_headers_sent(fake_prom, tmp_path):
    token = tmp_path / "token"
    token.write_text("first\n")
    client = PrometheusClient(
        PrometheusOptions(
            url=fake_prom.base, token_file=str(token), headers={"X-Scope-OrgID": "team-a"}
        )
    )
    try:
        await client.query("up")
        token.write_text("second-token")
        os.utime(token, (1, 1))  # a different mtime even within the same second
        await client.query("up")
    finally:
        await client.close()
    assert [s["headers"]["Authorization"] for s in fake_prom.seen] == [
        "Bearer first",
        "Bearer second-token",
    ]
    assert fake_prom.seen[0]["headers"]["X-Scope-OrgID"] == "team-a"


async def test_auth_config_kubeconfig_credentials(fake_prom, tmp_path):
    kubeconfig = tmp_path / "auth.yaml"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
        "clusters: [{name: k, cluster: {server: https://ignored}}]\n"
        "users: [{name: u, user: {username: alice, password: s3cret}}]\n"
    )
    client = PrometheusClient(PrometheusOptions(url=fake_prom.base, auth_config=str(kubeconfig)))
    try:
        await client.query("up")
    finally:
        await client.close()
    want = "Basic " + base64.b64encode(b"alice:s3cret").decode()
    assert fake_prom.seen[0]["headers"]["Authorization"] == want


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        pytest.param(
            400,
            '{"status":"error","errorType":"bad_data","error":"parse error"}',
            PrometheusQueryError,
            id="bad-query",
        ),
        pytest.param(
            422,
            '{"status":"error","errorType":"execution","error":"boom"}',
            PrometheusQueryError,
            id="execution-error",
        ),
        pytest.param(
            503,
            '{"status":"error","errorType":"unavailable","error":"x"}',
            PrometheusUnavailable,
            id="unavailable",
        ),
        pytest.param(502, "<html>bad gateway</html>", PrometheusUnavailable, id="proxy-html"),
        pytest.param(
            200,
            '{"status":"success","data":{"resultType":"matrix","result":[]}}',
            PrometheusQueryError,
            id="matrix-result",
        ),
    ],
)
@pytest.mark.parametrize("call", ["query", "query_keyed"])
async def test_errors_map_to_our_exceptions(fake_prom, status, body, error, call):
    fake_prom.answer.update(status=status, body=body)
    client = PrometheusClient(PrometheusOptions(url=fake_prom.base))
    ask = (
        client.query("up")
        if call == "query"
        else client.query_keyed("up", label="pod", time_of=str, value_of=str)
    )
    try:
        with pytest.raises(error) as info:
            await ask
    finally:
        await client.close()
    assert fake_prom.base not in info.value.message
    assert "parse error" not in info.value.message


async def test_connection_refused_is_unavailable_and_chained():
    client = PrometheusClient(PrometheusOptions(url="http://127.0.0.1:9", timeout=1))
    try:
        with pytest.raises(PrometheusUnavailable) as info:
            await client.query("up")
    finally:
        await client.close()
    assert info.value.__cause__ is not None


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(PrometheusOptions(url="http://x", verb="PUT"), id="verb"),
        pytest.param(PrometheusOptions(url="http://x", client_cert_file="c.pem"), id="cert-no-key"),
        pytest.param(PrometheusOptions(url="https://x", ca_file="/nonexistent/ca.pem"), id="ca"),
    ],
)
async def test_bad_settings_are_config_errors(options):
    with pytest.raises(ConfigError):
        PrometheusClient(options)


async def test_https_with_ca_and_client_certificate(aiohttp_server, tmp_path):
    from datetime import UTC, datetime

    from adapter.server.tls import ensure_self_signed

    server_cert, server_key = ensure_self_signed(str(tmp_path / "s"), now=datetime.now(UTC))
    client_cert, client_key = ensure_self_signed(str(tmp_path / "c"), now=datetime.now(UTC))
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(server_cert, server_key)
    ctx.load_verify_locations(client_cert)
    ctx.verify_mode = ssl.CERT_REQUIRED  # mTLS: no client certificate, no answer
    peers = []

    async def handler(request: web.Request):
        peers.append(request.transport.get_extra_info("peercert") is not None)
        return web.json_response(VECTOR)

    app = web.Application()
    app.router.add_get("/api/v1/query", handler)
    server = await aiohttp_server(app, ssl=ctx)
    url = f"https://127.0.0.1:{server.port}"
    client = PrometheusClient(
        PrometheusOptions(
            url=url, ca_file=server_cert, client_cert_file=client_cert, client_key_file=client_key
        )
    )
    try:
        assert len(await client.query("up")) == 2
    finally:
        await client.close()
    assert peers == [True]
    # without the CA, the server's certificate is refused: unavailable, not a crash
    client = PrometheusClient(PrometheusOptions(url=url, timeout=2))
    try:
        with pytest.raises(PrometheusUnavailable):
            await client.query("up")
    finally:
        await client.close()


async def test_calls_share_one_kept_alive_connection(fake_prom):
    client = PrometheusClient(PrometheusOptions(url=fake_prom.base))
    try:
        for _ in range(3):
            await client.query("up")
        await client.query("up{" + 'pod=~"' + "a" * MAX_GET_URL + '"}')  # a POST
    finally:
        await client.close()
    assert client._origin.connections_made == 1
    assert [s["headers"]["User-Agent"] for s in fake_prom.seen] == [USER_AGENT] * 4
