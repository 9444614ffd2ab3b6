"""Request input never changes a PromQL query's structure (the real provider and rule engine).

Hypothesis sends namespaces, object names and selector values through the real server,
`PrometheusProvider` and rules; a recording Prometheus client keeps every query. Each query,
with its string literals blanked, must equal the query a benign request of the same shape
produces, and every literal must decode to exactly what the request said.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import quote

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.prometheus import Keyed, Sample, keyed_vector
from adapter.provider.cache import ResultCache
from adapter.provider.discovery import Discovery, DiscoveryOptions
from adapter.provider.engine import SingleBackend
from adapter.provider.prometheus_provider import PrometheusProvider
from adapter.provider.rules_engine import load_engine
from adapter.rules.resources import STATIC_RESOLVER
from adapter.server.app import build_app
from adapter.server.auth_seam import ALLOW_ALL
from tests.adapter.fakes import FakeLister
from tests.adapter.security.harness import CM, EM, ThreadedServer
from tests.adapter.stack import RULES

STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
REACHED: list[str] = []  # fuzzed queries that reached Prometheus, to show the test bites


@dataclass
class RecordingPrometheus:
    """Answers discovery with fixed series and every query with one sample; keeps the queries."""

    queries: list[str] = field(default_factory=list)

    async def series(self, matchers: Sequence[str], **_: object) -> list[dict[str, str]]:
        return [
            {"__name__": "gauge_value", "namespace": "default", "pod": "web-1"},
            {"__name__": "queue_depth", "queue": "orders"},
        ]

    async def query(
        self, promql: str, *, at: datetime | None = None, rule: str = ""
    ) -> list[Sample]:
        self.queries.append(promql)
        return [Sample(labels={}, timestamp=0.0, value=Decimal(1))]

    async def query_keyed(
        self,
        promql: str,
        *,
        label: str,
        time_of: Callable[[Any], Any],
        value_of: Callable[[Any], Any],
        rule: str = "",
    ) -> Keyed[Any, Any]:
        self.queries.append(promql)
        answer = {"resultType": "scalar", "result": [0, "1"]}
        return keyed_vector(answer, label, time_of, value_of)


@dataclass
class Served:
    server: ThreadedServer
    prometheus: RecordingPrometheus

    def last_query(self, target: str) -> tuple[int, str | None]:
        before = len(self.prometheus.queries)
        status, _ = self.server.get(target)
        assert status < 500, (target, status)
        queries = self.prometheus.queries[before:]
        return status, (queries[-1] if queries else None)


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    prometheus = RecordingPrometheus()

    async def make_app() -> web.Application:
        engine = load_engine(RULES, source="test-rules", resolver=STATIC_RESOLVER)
        discovery = Discovery(
            SingleBackend(prometheus), engine, options=DiscoveryOptions(max_age=3600)
        )
        await discovery.run_once(now=datetime.now().astimezone())
        provider = PrometheusProvider(
            backends=SingleBackend(prometheus),
            discovery=discovery,
            resolver=STATIC_RESOLVER,
            lister=FakeLister(),
            cache=ResultCache(ttl=0),
        )
        return build_app(provider, guard=ALLOW_ALL)

    with ThreadedServer(make_app) as server:
        yield Served(server, prometheus)


def skeleton(promql: str) -> str:
    return STRING.sub('""', promql)


def literals(promql: str) -> list[tuple[str, str]]:
    """(matcher operator or "", decoded value) of every string literal, in order."""
    out = []
    for m in STRING.finditer(promql):
        # PromQL strings use Go's escapes; unicode_escape reads the same set
        value = m.group(0)[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        op = re.search(r"(=~|!~|!=|=)\s*$", promql[: m.start()])
        out.append((op.group(1) if op else "", value))
    return out


def regex_literal(pattern: str) -> str:
    """The text a quoted-meta regex matches exactly (QuoteMeta escapes punctuation only)."""
    return re.sub(r"\\(.)", r"\1", pattern)


text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30
).filter(lambda s: s.strip("/") == s and s not in (".", ".."))
label_value = st.from_regex(r"\A([A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?)?\Z")


def named(ns: str, name: str) -> str:
    return f"{CM}/namespaces/{quote(ns, safe='')}/pods/{quote(name, safe='')}/gauge_value"


def test_benign_requests_reach_prometheus(served):
    status, query = served.last_query(named("default", "web-1"))
    assert status in (200, 404)  # the recorded sample names no pod: no value is fine here
    assert query is not None
    assert ("=", "default") in literals(query)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(ns=text, name=text, env=label_value)
def test_named_object_queries_keep_their_structure(served, ns, name, env):
    _, baseline = served.last_query(named("default", "web-1") + "?metricLabelSelector=env%3Dx")
    assert baseline is not None
    _, query = served.last_query(
        named(ns, name) + "?metricLabelSelector=" + quote(f"env={env}", safe="")
    )
    if query is None:
        return  # refused before any query: nothing to inject into
    REACHED.append(query)
    assert skeleton(query) == skeleton(baseline), (ns, name, query)
    for (op, got), (base_op, was) in zip(literals(query), literals(baseline), strict=True):
        assert op == base_op
        if was == "default":
            assert got == ns
        elif op == "=~" and regex_literal(was) == "web-1":
            assert regex_literal(got) == name
            assert re.fullmatch(got, name)
        elif was == "web-1":
            assert got == name
        elif was == "x":
            assert got == env
        else:
            assert got == was, "a literal the request does not control changed"


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(ns=text, queue=label_value)
def test_external_queries_keep_their_structure(served, ns, queue):
    path = f"{EM}/namespaces/{{}}/queue_depth?labelSelector=" + quote("queue=", safe="")
    _, baseline = served.last_query(path.format("default") + "orders")
    assert baseline is not None
    _, query = served.last_query(path.format(quote(ns, safe="")) + quote(queue, safe=""))
    if query is None:
        return
    assert skeleton(query) == skeleton(baseline), (ns, queue, query)
    for (op, got), (base_op, was) in zip(literals(query), literals(baseline), strict=True):
        assert op == base_op
        assert got == (queue if was == "orders" else ns if was == "default" else was)


def test_the_fuzzer_reached_prometheus_with_hostile_input():
    # runs after the property tests of this module
    hostile = [q for q in REACHED if any(set('"\\{},=') & set(v) for _, v in literals(q))]
    assert len(REACHED) > 50
    assert hostile, "no query carried quotes, backslashes or braces"
