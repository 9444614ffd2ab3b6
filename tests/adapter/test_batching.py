"""Batching (`--batch-window`): one namespace-wide query per metric and namespace, answers
identical to one query per request, and a rule that mixes objects is never batched."""

from __future__ import annotations

import asyncio
import json
import shutil
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.errors import BadRequest, MetricNotFound, PrometheusUnavailable
from adapter.rules.batching import batch_obstacle, external_batch_labels
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


# the property tests share one Prometheus per test (a function-scoped fixture) over 25 examples
EXAMPLES = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


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


@EXAMPLES
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


# ---- External metrics: one query per metric and namespace when the rule groups by the
# labels the requests' selectors name ------------------------------------------------------

EXTERNAL_RULES = """
externalRules:
- seriesQuery: 'depth{queue!=""}'
  resources: {overrides: {namespace: {resource: namespace}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue, region)'
- seriesQuery: 'lag{queue!=""}'
  resources: {namespaced: false}
  metricsQuery: 'max by (queue) (max_over_time(<<.Series>>{<<.LabelMatchers>>}[5m]))'
- seriesQuery: 'backlog{queue!=""}'
  resources: {namespaced: false}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue) or vector(0)'
"""
QUEUES = ("q1", "q2", "q3", "q.4")  # q.4: a regex metacharacter in a value
# the selectors the HPA sends: one queue, some sets, labels absent or outside the grouping
EXTERNAL_SELECTORS = [
    "",
    "queue=q1",
    "queue==q.4",
    "queue=q9",
    "queue=",
    "queue!=q2",
    "queue in (q1,q3)",
    "queue notin (q1,q.4)",
    "queue",
    "!queue",
    "region=eu",
    "queue=q2,region=us",
    "queue in (q2,q3),region!=eu",
    "!region",
    "shard=a",  # not a grouping label: a query of its own
    "queue=q1,shard=a",
    "queue>1",  # PromQL cannot say it: 400 on both paths
]


def _external_rule(query: str):
    text = f"""
externalRules:
- seriesQuery: 'x{{queue!=""}}'
  resources: {{namespaced: false}}
  metricsQuery: '{query}'
"""
    return load_rules(text, source="t").external_rules[0]


@pytest.mark.parametrize(
    ("query", "labels"),
    [
        ("sum(<<.Series>>{<<.LabelMatchers>>}) by (queue)", {"queue"}),
        ("sum by (queue, region) (<<.Series>>{<<.LabelMatchers>>})", {"queue", "region"}),
        ("avg(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (queue,)", {"queue"}),
        ("max(queue_depth{<<.LabelMatchers>>}) by (queue)", {"queue"}),
        ("sum(<<.Series>>{<<.LabelMatchers>>})", None),
        ("sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)", None),
        ("sum(<<.Series>>{<<.LabelMatchers>>}) by (queue) or vector(0)", None),
        ("sum(<<.Series>>{<<.LabelMatchers>>}) by (queue) / 2", None),
        ("sum(<<.Series>>{<<.LabelMatchers>>}) without (pod)", None),
        ("topk(1, sum(<<.Series>>{<<.LabelMatchers>>}) by (queue))", None),
        ('sum(label_replace(<<.Series>>{<<.LabelMatchers>>}, "queue", "x", "", "")) by (queue)',
         None),
        ('sum(<<.Series>>{<<.LabelMatchers>>,job="a"}) by (queue)', None),
        ("<<.Series>>{<<.LabelMatchers>>}", None),
    ],
    ids=["sum-by", "prefix-by-two", "rate-trailing-comma", "literal-series", "no-by", "groupby",
         "or-vector", "arithmetic", "without", "topk", "label-replace", "extra-matcher", "bare"],
)  # fmt: skip
def test_which_external_rules_can_be_batched(query: str, labels: set[str] | None) -> None:
    found = external_batch_labels(_external_rule(query))
    assert found == (frozenset(labels) if labels is not None else None)


def _external_data() -> list:
    out = []
    for n, ns in enumerate(NAMESPACES):
        for i, queue in enumerate(QUEUES):
            for region in ("eu", "us"):
                for shard in ("a", "b"):
                    labels = {"namespace": ns, "queue": queue, "region": region, "shard": shard}
                    value = n * 1000 + i * 10 + (region == "us") * 3 + (shard == "b") + 0.5
                    out.append(series("depth", labels, [value] * 3))
                    out.append(series("lag", labels, [value * 2] * 3))
                    out.append(series("backlog", labels, [value * 3] * 3))
        # a series without a queue label (not discovered by seriesQuery, but queried by sums)
        out.append(series("depth", {"namespace": ns, "region": "eu"}, [7.0] * 3))
    return out


def _external_rows(values) -> list:
    """An external answer as a sorted list (Prometheus' order of groups is not fixed)."""
    return sorted((v.metric, sorted(v.labels.items()), v.value, v.window_seconds) for v in values)


async def _external(stack, metric: str, ns: str, selector: str) -> list | str:
    try:
        return _external_rows(
            await stack.provider.external_metric(
                metric, namespace=ns, selector=parse_selector(selector)
            )
        )
    except (BadRequest, MetricNotFound) as err:
        return f"{err.code} {err}"


_EXTERNAL_WRITTEN: set[str] = set()


@EXAMPLES
@given(
    requests=st.lists(
        st.tuples(
            st.sampled_from(NAMESPACES),
            st.sampled_from(["depth", "lag", "backlog"]),
            st.sampled_from(EXTERNAL_SELECTORS),
        ),
        min_size=1,
        max_size=8,
    )
)
async def test_batched_external_answers_equal_unbatched(
    prometheus: PrometheusServer, requests
) -> None:
    """Random metric selectors, asked concurrently, on a real Prometheus: answers cut out of
    the batched (selector-less) query are the per-request queries' answers, errors included."""
    if prometheus.url not in _EXTERNAL_WRITTEN:
        _EXTERNAL_WRITTEN.add(prometheus.url)
        await remote_write(prometheus.url, _external_data())
    plain = await make_stack(prometheus.url, lister=_lister(), rules=EXTERNAL_RULES)
    batched = await make_stack(
        prometheus.url, lister=_lister(), rules=EXTERNAL_RULES, batch_window=5.0
    )
    await asyncio.gather(plain.discover(), batched.discover())
    try:
        answers = await asyncio.gather(
            *(_external(stack, *request) for request in requests for stack in (plain, batched))
        )
        for request, expected, got in zip(requests, answers[::2], answers[1::2], strict=True):
            assert got == expected, request
    finally:
        await asyncio.gather(plain.close(), batched.close())


async def test_every_external_selector_batched_equals_unbatched(
    prometheus: PrometheusServer,
) -> None:
    """Every selector of the list, for every metric and namespace, one after the other: the
    same answers (or the same error) with and without batching."""
    await remote_write(prometheus.url, _external_data())
    plain = await make_stack(prometheus.url, lister=_lister(), rules=EXTERNAL_RULES)
    batched = await make_stack(
        prometheus.url, lister=_lister(), rules=EXTERNAL_RULES, batch_window=30.0
    )
    await asyncio.gather(plain.discover(), batched.discover())
    try:
        for ns in NAMESPACES:
            for metric in ("depth", "lag", "backlog"):
                for selector in EXTERNAL_SELECTORS:
                    expected = await _external(plain, metric, ns, selector)
                    got = await _external(batched, metric, ns, selector)
                    assert got == expected, (ns, metric, selector)
    finally:
        await asyncio.gather(plain.close(), batched.close())
    # the batched side sent one selector-less query per (metric, namespace) it could batch
    queries = prometheus.queries()
    assert 'sum(depth{namespace="beta"}) by (queue, region)' in queries
    assert "max by (queue) (max_over_time(lag{}[5m]))" in queries


async def test_external_query_log_shows_one_query_per_metric_and_namespace(
    prometheus: PrometheusServer,
) -> None:
    """40 requests, one per queue and region pair over 2 namespaces, in two bursts: one query
    per namespace batched, where the per-request path sends one per distinct selector; a rule
    that does not group by the selector's labels (`or vector(0)`) is never batched."""
    await remote_write(prometheus.url, _external_data())
    stack = await make_stack(
        prometheus.url, lister=_lister(), rules=EXTERNAL_RULES, batch_window=30.0
    )
    await stack.discover()
    selectors = [f"queue={q},region={r}" for q in QUEUES for r in ("eu", "us", "ap")]
    burst = [(ns, s) for ns in NAMESPACES for s in selectors[:10]]
    try:
        answers = []
        for part in (burst[:10], burst[10:]):
            answers += await asyncio.gather(*(_external(stack, "depth", ns, s) for ns, s in part))
        backlog = await asyncio.gather(
            *(_external(stack, "backlog", "alpha", s) for s in selectors[:3])
        )
    finally:
        await stack.close()
    depth = [q for q in prometheus.queries() if q.startswith("sum(depth")]
    assert sorted(depth) == [
        'sum(depth{namespace="alpha"}) by (queue, region)',
        'sum(depth{namespace="beta"}) by (queue, region)',
    ], depth
    ap = [a for (ns, s), a in zip(burst, answers, strict=True) if "region=ap" in s]
    assert ap
    assert all(a == [] for a in ap)
    assert all(len(a) == 1 for (ns, s), a in zip(burst, answers, strict=True) if "ap" not in s)
    # q1 in eu of alpha: shards a (0.5) and b (1.5)
    assert answers[0] == [("depth", [("queue", "q1"), ("region", "eu")], "2", None)]
    logged_backlog = [q for q in prometheus.queries() if q.startswith("sum(backlog")]
    assert len(logged_backlog) == 3
    assert all("queue=" in q for q in logged_backlog)
    # `or vector(0)` adds a label-less 0 to every per-request answer; a cut of one shared
    # selector-less answer would have lost it (and the q1 rows: their region label is gone)
    assert backlog[2] == [("backlog", [], "0", None)], backlog
    assert all(b[0] == ("backlog", [], "0", None) and len(b) == 2 for b in backlog[:2]), backlog


async def test_a_failed_external_batch_is_not_shared(prometheus: PrometheusServer) -> None:
    """Prometheus stopped under a batch of External requests for different queues: each gets
    the 503, nothing is kept, and after the restart the next requests query again."""
    await remote_write(prometheus.url, _external_data())
    stack = await make_stack(
        prometheus.url, lister=_lister(), rules=EXTERNAL_RULES, batch_window=30.0
    )
    await stack.discover()
    selectors = [f"queue={q}" for q in QUEUES]

    async def ask() -> list:
        return await asyncio.gather(
            *(
                stack.provider.external_metric(
                    "depth", namespace="alpha", selector=parse_selector(s)
                )
                for s in selectors
            ),
            return_exceptions=True,
        )

    try:
        prometheus.stop()
        failed = await ask()
        assert all(isinstance(r, PrometheusUnavailable) for r in failed), failed
        prometheus.start()
        answers = await ask()
        assert [len(a) for a in answers] == [2, 2, 2, 2], answers  # eu and us of each queue
    finally:
        await stack.close()
    assert [q for q in prometheus.queries() if q.startswith("sum(depth")] == [
        'sum(depth{namespace="alpha"}) by (queue, region)'
    ]


async def test_an_external_answer_is_shared_for_the_external_window_only(
    prometheus: PrometheusServer,
) -> None:
    """A target asleep at zero wakes on an External answer read every second: with a 30 s batch
    window and a 2 s external window (the adapter's default), a batched External answer is
    served for 2 s, then Prometheus is asked again and the risen value read; a Pods answer of
    the same stack at the same moment is still the shared one (one query per 30 s)."""
    await remote_write(prometheus.url, _external_data() + _data())
    now = [1000.0]
    stack = await make_stack(
        prometheus.url,
        lister=_lister(),
        rules=RULES + EXTERNAL_RULES,
        batch_window=30.0,
        external_window=2.0,
        clock=lambda: now[0],
    )
    await stack.discover()
    pods = [("alpha", "load", "web-1,web-2")]

    async def depth() -> list:
        return await _external(stack, "depth", "alpha", "queue=q1,region=eu")

    try:
        before = await depth()
        await _ask(stack, pods)
        # the queue rises (q1 in eu of alpha: shards a and b, 0.5 + 1.5 until now)
        labels = {"namespace": "alpha", "queue": "q1", "region": "eu"}
        await remote_write(
            prometheus.url,
            [({"__name__": "depth", **labels, "shard": s}, [(time.time(), 30.0)]) for s in "ab"],
        )
        now[0] += 1.9  # within the external window: the shared answer, no query
        assert await depth() == before
        now[0] += 0.2  # past it: asked again, the risen value
        after = await depth()
        await _ask(stack, pods)
    finally:
        await stack.close()
    assert before == [("depth", [("queue", "q1"), ("region", "eu")], "2", None)]
    assert after == [("depth", [("queue", "q1"), ("region", "eu")], "60", None)]
    assert [q for q in prometheus.queries() if q.startswith("sum(depth")] == [
        'sum(depth{namespace="alpha"}) by (queue, region)'
    ] * 2
    assert _metric_queries(prometheus) == ['sum(load{namespace="alpha",pod!=""}) by (pod)']
