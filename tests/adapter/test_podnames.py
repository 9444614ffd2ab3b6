"""adapter.rules.podnames: the names a workload's pods had, from the pods it has now; and the
object store keeping where each pod's name came from."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from adapter.kube import ObjectStore
from adapter.rules.podnames import PodLineage, pod_name_pattern
from adapter.rules.queries import build_custom_query
from common.selectors import parse_selector


def rs_pod(name: str, rs: str, h: str) -> PodLineage:
    return PodLineage(name, f"{rs}-", "ReplicaSet", rs, h)


@dataclass(frozen=True)
class Case:
    now: tuple[PodLineage, ...]
    match: tuple[str, ...]  # names the pattern must match (pods of the same workloads)
    miss: tuple[str, ...]  # and must not


LONG = "a" * 50  # a Deployment whose `<name>-<hash>-` is cut at 58 characters

CASES = [
    pytest.param(
        Case(
            (rs_pod("web-7d4b9c8f6d-x2bkq", "web-7d4b9c8f6d", "7d4b9c8f6d"),),
            ("web-7d4b9c8f6d-bcdfg", "web-5b8f4-zzzzz", "web-4-22222", "web-bcdf456789-x2bkq"),
            (
                "web-db-7d4b9c8f6d-x2bkq",  # another Deployment, web-db
                "web-api-x2bkq",  # vowels: never a hash nor a random suffix
                "webx-7d4b9c8f6d-x2bkq",
                "web-7d4b9c8f6d-x2bk",  # four random characters
                "web-7d4b9c8f6da-x2bkq",  # 'a' is in no hash
                "web-bcdf4567894-x2bkq",  # eleven hash characters: more than a uint32
                "web-7d4b9c8f6d-x2bkq-1",
            ),
        ),
        id="deployment-any-rollout",
    ),
    pytest.param(
        Case(
            (rs_pod("web-7d4b9c8f6d-x2bkq", "web-7d4b9c8f6d", "7d4b9c8f6d"),),
            ("web-bcd-x2bkq",),  # a ReplicaSet (or DaemonSet) named web-bcd: counted (documented)
            (),
        ),
        id="name-prefix-collision",
    ),
    pytest.param(
        Case(
            (
                rs_pod(
                    f"{LONG}-{'7d4b9c8'}"[:58] + "x2bkq", f"{LONG}-7d4b9c8f6d"[:61], "7d4b9c8f6d"
                ),
            ),
            (f"{LONG}-7d4b9c8x2bkq", f"{LONG}-55-x2bkq", f"{LONG}-5555555bcdfg", f"{LONG}-5-bcdfg"),
            (f"{LONG}-7d4b9c8-x2bkq", f"{LONG}-5555555-bcdfg"),
        ),
        id="long-deployment-name-cut-at-58",
    ),
    pytest.param(
        Case(
            (PodLineage("db-2", "", "StatefulSet", "db"),),
            ("db-0", "db-1", "db-17"),
            ("db-01", "db-", "db-x", "dbx-1", "db-1-2"),
        ),
        id="statefulset-ordinals",
    ),
    pytest.param(
        Case(
            (PodLineage("agent-x2bkq", "agent-", "DaemonSet", "agent"),),
            ("agent-bcdfg",),
            ("agent-bcdf", "agent-x2bkq2", "agentx-bcdfg"),
        ),
        id="other-controller-by-generate-name",
    ),
    pytest.param(
        Case(
            (PodLineage("solo-x2bkq", "solo-"),),
            ("solo-x2bkq",),
            ("solo-bcdfg",),
        ),
        id="no-controller-exact-name",
    ),
    pytest.param(
        Case(
            (rs_pod("renamed", "web-7d4b9c8f6d", "7d4b9c8f6d"),),
            ("renamed",),
            ("web-7d4b9c8f6d-x2bkq",),
        ),
        id="name-not-of-its-controllers-shape-exact",
    ),
    pytest.param(
        Case(
            (PodLineage("x-bcdfg", "x-", "ReplicaSet", "x", "1234"),),
            ("x-bcdfg", "x-x2bkq"),  # a hash not of the Deployment's shape: the ReplicaSet only
            ("x-5-bcdfg",),
        ),
        id="foreign-hash-falls-back-to-the-replicaset",
    ),
    pytest.param(
        Case(
            (PodLineage("a.b-0", "", "StatefulSet", "a.b"),),
            ("a.b-3",),
            ("axb-3",),  # the dot is escaped
        ),
        id="dots-escaped",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_patterns(case: Case) -> None:
    pattern = pod_name_pattern(case.now)
    assert pattern is not None
    for pod in case.now:
        assert re.fullmatch(f"(?:{pattern})", pod.name), (pattern, pod.name)
    for name in case.match:
        assert re.fullmatch(f"(?:{pattern})", name), (pattern, name)
    for name in case.miss:
        assert not re.fullmatch(f"(?:{pattern})", name), (pattern, name)


def test_alternatives_are_sorted_and_shared():
    a = rs_pod("web-7d4b9c8f6d-x2bkq", "web-7d4b9c8f6d", "7d4b9c8f6d")
    b = rs_pod("web-5b8f4-bcdfg", "web-5b8f4", "5b8f4")  # mid-rollout: the same Deployment
    c = PodLineage("db-0", "", "StatefulSet", "db")
    assert pod_name_pattern([a, b, c]) == pod_name_pattern([c, b, a])
    assert pod_name_pattern([a, b, c]) == (
        "db-(?:0|[1-9][0-9]*)|web-[bcdf4-9]{1,10}-[bcdfghjklmnpqrstvwxz2456789]{5}"
    )
    assert pod_name_pattern([]) is None


def test_the_store_keeps_where_names_came_from_through_watch_events():
    def obj(name, labels, owner=None, generated=""):
        meta = {"namespace": "ns", "name": name, "labels": labels}
        if generated:
            meta["generateName"] = generated
        if owner:
            meta["ownerReferences"] = [
                {"kind": "Other", "name": "not-it"},
                {"kind": "ReplicaSet", "name": owner, "controller": True},
            ]
        return {"metadata": meta}

    store = ObjectStore()
    labels = {"app": "web", "pod-template-hash": "5b8f4"}
    store.replace([obj("web-5b8f4-bcdfg", labels, "web-5b8f4", "web-5b8f4-")])
    sel = parse_selector("app=web")
    assert store.lineage("ns", sel) == [
        PodLineage("web-5b8f4-bcdfg", "web-5b8f4-", "ReplicaSet", "web-5b8f4", "5b8f4")
    ]
    store.apply("MODIFIED", obj("web-5b8f4-bcdfg", labels, None, "web-5b8f4-"))  # orphaned
    assert store.lineage("ns", sel) == [
        PodLineage("web-5b8f4-bcdfg", "web-5b8f4-", "", "", "5b8f4")
    ]
    store.apply("MODIFIED", obj("web-5b8f4-bcdfg", labels))
    assert store.lineage("ns", sel) == [PodLineage("web-5b8f4-bcdfg", "", "", "", "5b8f4")]
    store.apply("ADDED", obj("web-5b8f4-hjklm", labels, "web-5b8f4", "web-5b8f4-"))
    store.apply("DELETED", obj("web-5b8f4-bcdfg", labels))
    assert [p.name for p in store.lineage("ns", sel)] == ["web-5b8f4-hjklm"]
    assert store.lineage("other", sel) == []


def test_a_regex_beyond_the_bound_matches_the_namespace_and_the_caller_filters():
    from adapter.rules import load_rules
    from adapter.rules.discovery import build_index
    from adapter.rules.resources import STATIC_RESOLVER

    config = load_rules(
        """
rules:
- seriesQuery: 'rps{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
""",
        source="t",
    )
    found = {'rps{namespace!="",pod!=""}': [{"__name__": "rps", "namespace": "a", "pod": "b"}]}
    index = build_index(config, found, resolver=STATIC_RESOLVER)
    pods = STATIC_RESOLVER.resolve("pods")
    assert pods is not None
    source = index.find_custom(pods.group_resource, "rps")
    assert source is not None

    def promql(limit: int) -> str:
        query = build_custom_query(
            source,
            resource=pods,
            namespace="a",
            names=(),
            metric_selector=parse_selector(""),
            resolver=STATIC_RESOLVER,
            name_regex="web-[bcdf4-9]{1,10}-x",
            max_names_bytes=limit,
        )
        return query.promql

    assert promql(1000) == 'sum(rps{namespace="a",pod=~"web-[bcdf4-9]{1,10}-x"}) by (pod)'
    assert promql(10) == 'sum(rps{namespace="a",pod!=""}) by (pod)'
