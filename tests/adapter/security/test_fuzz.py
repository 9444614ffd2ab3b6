"""Fuzzing the guarded server: no malformed path, name, namespace or selector yields a 5xx.

The server runs once per module in a thread (its own event loop, plain HTTP on 127.0.0.1:
TLS is not under test here); hypothesis drives a plain http.client against it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from urllib.parse import quote

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.auth.attributes import request_attributes
from adapter.auth.authz import AccessDecision
from adapter.auth.options import AuthOptions, build_guard
from adapter.server.app import build_app
from adapter.server.auth_seam import UserInfo
from tests.adapter.security.fakes import FakeCluster
from tests.adapter.security.harness import CM, EM, ThreadedServer, fake_provider

SEEN: Counter[int] = Counter()  # statuses answered, to show the fuzzer reaches every layer


class AllowingCluster(FakeCluster):
    """Allows everything, and checks every SAR spec it is sent is well-formed."""

    async def review_access(self, spec: Mapping[str, object]) -> AccessDecision:
        json.dumps(spec)  # must serialize
        attrs = spec.get("resourceAttributes") or spec.get("nonResourceAttributes")
        assert isinstance(attrs, dict)
        assert attrs["verb"]
        return AccessDecision(allowed=True)


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    async def make_app() -> web.Application:
        cluster = AllowingCluster(tokens={"t": UserInfo(name="hpa")})
        guard = build_guard(AuthOptions(authentication_skip_lookup=True), kube=cluster)
        return build_app(fake_provider(), guard=guard)

    with ThreadedServer(make_app) as threaded:
        yield threaded


segment = st.one_of(
    st.sampled_from(["*", "pods", "pod", "namespaces", "metrics", "default", "..", ".", "", "%"]),
    st.text(min_size=0, max_size=40),
    st.text(alphabet="abcxyz-_.*%/\\:@!$&'()+,;=", max_size=20),
)
prefix = st.sampled_from(
    [CM, "/apis/custom.metrics.k8s.io/v1beta1", EM, "/apis", "/api/v1", "", "/openapi", "/apis/x"]
)
selector = st.one_of(
    st.text(max_size=60),
    st.text(alphabet="abc=!,() in notin<>-_./", max_size=60),
    st.sampled_from(["a in (", "a=b,", "!", "a>1", "a<b", "a notin ()", "=", "a==b==c"]),
)


def target(pre: str, segments: list[str], label: str | None, metric: str | None) -> str:
    path = pre + "".join("/" + quote(s, safe="*") for s in segments)
    params = []
    if label is not None:
        params.append("labelSelector=" + quote(label, safe=""))
    if metric is not None:
        params.append("metricLabelSelector=" + quote(metric, safe=""))
    return (path or "/") + ("?" + "&".join(params) if params else "")


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    pre=prefix,
    segments=st.lists(segment, max_size=7),
    label=st.none() | selector,
    metric=st.none() | selector,
    token=st.sampled_from(["t", None, "wrong", "t t"]),
)
def test_no_5xx_for_any_path_selector_or_token(server, pre, segments, label, metric, token):
    status, body = server.get(target(pre, segments, label, metric), token=token)
    SEEN[status] += 1
    assert status < 500, body
    if status >= 400:
        doc = json.loads(body)
        assert doc["kind"] == "Status"
        assert doc["code"] == status


def test_the_fuzzer_reached_routes_and_refusals():
    # runs after the fuzz test in this module: it saw successes, 401s and route errors
    assert SEEN[200] > 0
    assert SEEN[401] > 0
    assert SEEN[404] + SEEN[400] > 0


@settings(max_examples=500, deadline=None)
@given(
    method=st.sampled_from(["GET", "POST", "DELETE", "PATCH", "HEAD", "weird"]),
    path=st.text(max_size=200),
    watch=st.sampled_from(["", "true", "1", "false"]),
)
def test_attribute_parsing_never_fails_and_is_well_formed(method, path, watch):
    attrs = request_attributes(method, path, {"watch": watch})
    spec = attrs.review_spec()
    json.dumps(spec)
    if attrs.is_resource:
        assert attrs.api_version
        assert path.strip("/").split("/")[0] in ("api", "apis")
    else:
        assert spec == {"nonResourceAttributes": {"path": path, "verb": method.lower()}}
