"""Batching (`--batch-window`): one namespace-wide query per metric and namespace, answers
identical to one query per request, and a rule that mixes objects is never batched."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.errors import MetricNotFound, PrometheusUnavailable
from adapter.rules.batching import batch_obstacle
from adapter.rules.config import load_rules
from adapter.rules.resources import STATIC_RESOLVER
from adapter.server.app import build_app
from adapter.server.tls import ServingTLS, TLSOptions
from common.selectors import parse_selector
from sandbox.prometheus import PrometheusServer
from tests.adapter.fakes import FakeLister
from tests.adapter.stack import make_stack, series
from tests.adapter.test_tls_and_kubectl import kubeconfig, kubectl, serve
from tests.support.prometheus import remote_write

PODS_INFO = STATIC_RESOLVER.resolve("pods")
NAMESPACES = ("alpha", "beta")
PODS = [f"web-{i}" for i in range(12)]
RULES = """
rules:
- seriesQuery: 'load{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: 'mem{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'max(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: 'rank{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'topk(2, sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>))'
"""


def _rule(query: str):
    text = f"""
rules:
- seriesQuery: 'x{{namespace!="",pod!=""}}'
  resources: {{overrides: {{namespace: {{resource: namespace}}, pod: {{resource: pod}}}}}}
  metricsQuery: '{query}'
"""
    return load_rules(text, source="t").rules[0]


@pytest.mark.parametrize(
    ("query", "obstacle"),
    [
        ("sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)", None),
        ("sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)", None),
        ("max by (<<.GroupBy>>) (<<.Series>>{<<.LabelMatchers>>})", None),
        ("sum(<<.Series>>{<<.LabelMatchers>>})", "does not group by"),
        ('sum(<<.Series>>{pod=~"<<index .LabelValuesByName "pod">>"}) by (<<.GroupBy>>)',
         "LabelValuesByName"),
        ("topk(3, sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>))", "topk"),
        ("sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) / scalar(sum(<<.Series>>))",
         "scalar"),
        ("sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) / on() group_left "
         "sum(<<.Series>>{<<.LabelMatchers>>})", "on()"),
    ],
    ids=["sum-by", "rate", "prefix-by", "no-group-by", "label-values", "topk", "scalar",
         "ratio-on"],
)  # fmt: skip
def test_which_rules_can_be_batched(query: str, obstacle: str | None) -> None:
    found = batch_obstacle(_rule(query))
    if obstacle is None:
        assert found is None
    else:
        assert found is not None
        assert obstacle in found


def _data() -> list:
    out = []
    for n, ns in enumerate(NAMESPACES):
        for i, pod in enumerate(PODS[:10]):  # web-10 and web-11 have no series
            labels = {"namespace": ns, "pod": pod, "tier": "abc"[i % 3]}
            out.append(series("load", labels, [n * 100 + i + 0.25] * 3))
            out.append(series("rank", labels, [float(i)] * 3))
            out.append(series("mem", labels, [float(i * 1024)] * 3))
    return out


def _lister() -> FakeLister:
    objects = {
        ("pods", ns): {pod: {"id": pod, "tier": "abc"[i % 3]} for i, pod in enumerate(PODS)}
        for ns in NAMESPACES
    }
    return FakeLister(objects)


_WRITTEN: set[str] = set()
SELECTORS = ["", "tier=a", "tier!=b", "tier in (a,c)", "tier notin (a)"]


def _strip(values):
    """What a request's answer says, less the evaluation time (checked separately)."""
    return [(v.described_object.name, v.value, v.window_seconds, v.metric_selector) for v in values]


async def _both(prometheus: PrometheusServer, *, batch_window: float = 5.0):
    plain = await make_stack(prometheus.url, lister=_lister(), rules=RULES)
    batched = await make_stack(
        prometheus.url, lister=_lister(), rules=RULES, batch_window=batch_window
    )
    await asyncio.gather(plain.discover(), batched.discover())
    return plain, batched


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    requests=st.lists(
        st.tuples(
            st.sampled_from(NAMESPACES),
            st.sampled_from(["load", "rank"]),
            st.frozensets(st.sampled_from(PODS), min_size=1),
            st.sampled_from(SELECTORS),
        ),
        min_size=1,
        max_size=6,
    )
)
async def test_batched_answers_equal_unbatched(prometheus: PrometheusServer, requests) -> None:
    """Random pod sets and metric selectors, asked concurrently: the batched provider's
    answers are the per-request path's, on a real Prometheus."""
    if prometheus.url not in _WRITTEN:  # one Prometheus for every example of this test
        _WRITTEN.add(prometheus.url)
        await remote_write(prometheus.url, _data())
    plain, batched = await _both(prometheus)
    try:
        for ns, metric, pods, selector in requests:
            args = {
                "namespace": ns,
                # the pod set, chosen through the (fake) watch cache by label
                "selector": parse_selector(f"id in ({','.join(sorted(pods))})"),
                "metric_selector": parse_selector(selector),
            }
            expected, got = await asyncio.gather(
                plain.provider.custom_metric_by_selector(PODS_INFO, metric, **args),
                batched.provider.custom_metric_by_selector(PODS_INFO, metric, **args),
            )
            assert _strip(got) == _strip(expected)
            assert all(
                abs((g.timestamp - e.timestamp).total_seconds()) <= 5
                for g, e in zip(got, expected, strict=True)
            )
            pod = min(pods)  # one object by name (an Object-metric-shaped request)
            named = await asyncio.gather(
                *(_by_name(stack, metric, pod, args) for stack in (plain, batched))
            )
            assert named[0] == named[1]
    finally:
        await asyncio.gather(plain.close(), batched.close())


async def _by_name(stack, metric: str, pod: str, args: dict) -> tuple | str:
    """A named object's (value, window), or the error's code when it has none (404)."""
    try:
        value = await stack.provider.custom_metric_by_name(
            PODS_INFO,
            metric,
            namespace=args["namespace"],
            name=pod,
            metric_selector=args["metric_selector"],
        )
    except MetricNotFound as err:
        return f"{err.code} {err}"
    return (value.value, value.window_seconds)


def _requests(count: int, seed: int) -> list[tuple[str, str, str]]:
    """Autoscaler-shaped requests: a namespace, a metric, a random pod set (by label)."""
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(count):
        pods = rng.sample(PODS, rng.randint(1, len(PODS)))
        out.append((rng.choice(NAMESPACES), rng.choice(["load", "mem"]), ",".join(pods)))
    return out


async def _ask(stack, requests) -> list[list]:
    empty = parse_selector("")
    return await asyncio.gather(
        *(
            stack.provider.custom_metric_by_selector(
                PODS_INFO, metric, namespace=ns, selector=parse_selector(f"id in ({pods})"),
                metric_selector=empty,
            )
            for ns, metric, pods in requests
        )
    )  # fmt: skip


def _metric_queries(prometheus: PrometheusServer) -> list[str]:
    return [q for q in prometheus.queries() if q.startswith(("sum(load", "max(mem"))]


@pytest.mark.parametrize(
    ("batch_window", "most"), [(5.0, 4), (0.0, 60)], ids=["batched", "unbatched"]
)
async def test_query_log_shows_one_query_per_metric_and_namespace(
    prometheus: PrometheusServer, batch_window: float, most: int
) -> None:
    """60 requests with random pod sets over 2 namespaces and 2 metrics, in two bursts within
    the window: Prometheus' own query log has one query per (metric, namespace) batched."""
    await remote_write(prometheus.url, _data())
    stack = await make_stack(
        prometheus.url, lister=_lister(), rules=RULES, batch_window=batch_window
    )
    await stack.discover()
    requests = _requests(60, seed=13)
    try:
        answers = await _ask(stack, requests[:30]) + await _ask(stack, requests[30:])
    finally:
        await stack.close()
    logged = _metric_queries(prometheus)
    assert len(answers) == 60
    assert all(answers)
    if batch_window:
        assert len(logged) == 4, logged
        # the second burst is answered from the first's batches, and says so on /metrics
        assert (
            stack.registry.get_sample_value(
                "promscaler_adapter_cache_hits_total", {"kind": "batched"}
            )
            == 30
        )
        assert all('pod!=""' in q for q in logged)  # never a pod=~"a|b|..." regex (no 414)
    else:  # one query per distinct request of each burst (identical ones coalesce)
        assert len(logged) == len(set(requests[:30])) + len(set(requests[30:])) <= most


async def test_a_failed_batch_is_not_shared(prometheus: PrometheusServer) -> None:
    """Prometheus stopped: every request of the batch fails (503), nothing is kept, and the
    next request after the restart queries again instead of reusing a failure."""
    await remote_write(prometheus.url, _data())
    stack = await make_stack(prometheus.url, lister=_lister(), rules=RULES, batch_window=30.0)
    await stack.discover()
    requests = _requests(5, seed=1)
    try:
        prometheus.stop()
        results = await asyncio.gather(*[_ask(stack, [r]) for r in requests],
                                       return_exceptions=True)  # fmt: skip
        assert all(isinstance(r, PrometheusUnavailable) for r in results), results
        prometheus.start()
        answers = await _ask(stack, requests)
        assert all(answers)
    finally:
        await stack.close()


async def test_the_real_kubectl_reads_batched_answers(prometheus: PrometheusServer, tmp_path):
    """kubectl get --raw with two pod selectors and one pod by name, over HTTPS: each body holds
    its own pods, and Prometheus' query log has one query for the three."""
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    await remote_write(prometheus.url, _data())
    stack = await make_stack(prometheus.url, lister=_lister(), rules=RULES, batch_window=5.0)
    await stack.discover()
    tls = ServingTLS(TLSOptions(cert_dir=str(tmp_path / "certs")))
    runner, port = await serve(build_app(stack.provider), tls.context)
    config = kubeconfig(tmp_path / "kubeconfig", port)
    base = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/beta/pods"
    try:
        bodies = []
        for path in (
            f"{base}/*/load?labelSelector=tier%3Da",
            f"{base}/*/load?labelSelector=tier%3Db",
            f"{base}/web-4/load",
        ):
            code, out, err = await kubectl(config, "get", "--raw", path)
            assert code == 0, err
            bodies.append(json.loads(out)["items"])
    finally:
        await runner.cleanup()
        await stack.close()
    names = [[item["describedObject"]["name"] for item in items] for items in bodies]
    assert names == [["web-0", "web-3", "web-6", "web-9"], ["web-1", "web-4", "web-7"], ["web-4"]]
    assert bodies[2][0]["value"] == "104250m"  # 100 x namespace index + pod index + 0.25
    assert _metric_queries(prometheus) == ['sum(load{namespace="beta",pod!=""}) by (pod)']
