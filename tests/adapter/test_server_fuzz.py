"""Whatever a client types into a path or a selector, the answer is a Status or a list, never
a 5xx (the provider is a fake that always works, so any 5xx is the server's own bug)."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.server.app import build_app
from tests.adapter.test_server_routes import provider

segment = st.text(min_size=0, max_size=12).map(lambda s: quote(s, safe=""))
selector = st.text(
    alphabet=st.sampled_from(list("abc=!,()<>inotx- ._/\\\"'*|{}")), min_size=0, max_size=30
)
CLIENTS: dict[str, object] = {}
BASES = [
    "/apis/custom.metrics.k8s.io/v1beta1",
    "/apis/custom.metrics.k8s.io/v1beta2",
    "/apis/external.metrics.k8s.io/v1beta1",
    "/apis",
    "/other",
]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    base=st.sampled_from(BASES),
    segments=st.lists(
        st.one_of(
            segment,
            st.sampled_from(["namespaces", "pods", "*", "metrics", "default", "http_requests"]),
        ),
        max_size=6,
    ),
    label_selector=selector,
    metric_selector=selector,
)
async def test_no_input_makes_a_5xx(
    aiohttp_client, base, segments, label_selector, metric_selector
):
    if CLIENTS.get("fixture") is not aiohttp_client:  # one server per test, not per example
        CLIENTS["fixture"] = aiohttp_client
        CLIENTS["client"] = await aiohttp_client(build_app(provider()))
    client = CLIENTS["client"]
    path = "/".join([base, *segments])
    query = f"?labelSelector={quote(label_selector)}&metricLabelSelector={quote(metric_selector)}"
    resp = await client.get(path + query)
    assert resp.status < 500, (path, query, await resp.text())
    body = await resp.json(content_type=None) if resp.content_type == "application/json" else None
    if resp.status >= 400:
        assert body["kind"] == "Status"
        assert body["code"] == resp.status
