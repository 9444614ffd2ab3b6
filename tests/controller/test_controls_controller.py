"""The controller's half of the controls, with fakes at the seams: what reaches the decision
document (pause annotations, creation time, conflicts, failure reasons), what the controller does
with the result (events, no write, held targets), and when it reconciles at once (a pause
annotation, a conflict resolved, a held target drifting)."""

from __future__ import annotations

import asyncio
import copy
import logging
from datetime import UTC, datetime, timedelta

import pytest

from autoscaler.app import _hpa_informers
from autoscaler.cluster import failure
from autoscaler.conflicts import TargetIndex
from autoscaler.kube.client import KubeError
from autoscaler.kube.discovery import ResourceRef
from autoscaler.kube.targets import TargetWatcher
from autoscaler.reconcile import ControllerOptions, Outcome, Reconciler
from tests.controller.fakes import FakeCluster, ScriptedDecide, autoscaler, external, external_value
from tests.controller.test_controller import FakeReconciler, Store, controller

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def created(obj, when):
    obj["metadata"]["creationTimestamp"] = when
    return obj


def result(*, rescale=False, desired=2, events=(), **status):
    def answer(doc):
        current = doc["scale"]["spec"]["replicas"]
        return {
            "desiredReplicas": desired,
            "rescale": rescale,
            "status": {"currentReplicas": current, "desiredReplicas": desired, **status},
            "events": list(events),
        }

    return answer


def reconciler(cluster, decide, index=None):
    return Reconciler(cluster, options=ControllerOptions(), decide=decide, index=index)


async def test_pause_annotations_and_creation_time_reach_the_document_raw():
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("5")
    obj = created(autoscaler(), "2025-12-31T00:00:00Z")
    obj["metadata"]["annotations"] = {
        "promscaler.dev/paused": "yes please",  # not a boolean: the core reports it
        "promscaler.dev/paused-replicas": "3",
        "unrelated": "x",
    }
    decide = ScriptedDecide(result())
    await reconciler(cluster, decide).reconcile(obj, now=NOW)
    (doc,) = decide.docs
    assert doc["autoscaler"]["metadata"] == {
        "creationTimestamp": "2025-12-31T00:00:00Z",
        "annotations": {
            "promscaler.dev/paused": "yes please",
            "promscaler.dev/paused-replicas": "3",
        },
    }
    assert "conflict" not in doc


async def test_the_newer_autoscaler_is_told_of_the_conflict_and_writes_no_scale():
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("50")
    index = TargetIndex()
    first = created(autoscaler("first"), "2026-01-01T00:00:00Z")
    second = created(autoscaler("second"), "2026-01-01T00:00:01Z")
    for obj in (first, second):
        obj["spec"]["scaleTargetRef"]["name"] = "web"
        index.update("Autoscaler", obj)
    conflict = [{"type": "Warning", "reason": "AmbiguousTarget", "message": "held by first"}]
    decide = ScriptedDecide(result(rescale=False, desired=5, events=conflict))

    await reconciler(cluster, decide, index).reconcile(second, now=NOW)
    await reconciler(cluster, decide, index).reconcile(first, now=NOW)

    doc_second, doc_first = decide.docs
    assert "Autoscaler first" in doc_second["conflict"]["message"]
    assert "the oldest Autoscaler acts" in doc_second["conflict"]["message"]
    assert "conflict" not in doc_first
    assert cluster.scale_writes == []
    assert ("default/second", "Warning", "AmbiguousTarget", "held by first") in cluster.events


async def test_the_results_events_are_recorded_as_given():
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("5")
    events = [
        {"type": "Normal", "reason": "Paused", "message": "paused by promscaler.dev/paused"},
        {"type": "Normal", "reason": "ScheduleStarted", "message": "schedule nightly opened"},
    ]
    await reconciler(cluster, ScriptedDecide(result(events=events))).reconcile(
        autoscaler(), now=NOW
    )
    assert [e[1:3] for e in cluster.events] == [
        ("Normal", "Paused"),
        ("Normal", "ScheduleStarted"),
    ]


@pytest.mark.parametrize(
    ("status", "held"),
    [
        pytest.param({"pausedReplicas": 3, "paused": True}, ("web", 3), id="paused-replicas"),
        pytest.param({"paused": True}, None, id="paused-only-holds-no-number"),
        pytest.param({}, None, id="not-paused"),
    ],
)
async def test_a_target_is_held_only_under_paused_replicas(status, held):
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("5")
    outcome = await reconciler(cluster, ScriptedDecide(result(**status))).reconcile(
        autoscaler(), now=NOW
    )
    assert outcome.held == held
    assert outcome.snapshot is not None
    assert outcome.snapshot.paused == bool(status)


async def test_each_failed_metric_of_a_pass_is_counted_once_with_its_reason():
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["a"] = failure("ServiceUnavailable", "503")
    cluster.metrics["b"] = external_value("5")
    cluster.metrics["c"] = failure("NotFound", "404")
    obj = autoscaler(
        metrics=[
            {
                "type": "External",
                "external": {"metric": {"name": n}, "target": {"type": "Value", "value": "1"}},
            }
            for n in "abc"
        ]
    )
    decide = ScriptedDecide(result())
    outcome = await reconciler(cluster, decide).reconcile(obj, now=NOW)
    assert outcome.metric_failures == ("ServiceUnavailable", "NotFound")
    assert [m.get("reason") for m in decide.docs[0]["metrics"]] == [
        "ServiceUnavailable",
        None,
        "NotFound",
    ]


# ---- the controller: reconcile at once when something a pass reads changed ----------------
def keyed(*objs):
    return Store(*objs)


async def passes_soon(ctl, rec, name, before):
    await asyncio.sleep(0.1)
    return rec.count(name) - before


async def test_a_pause_annotation_change_reconciles_at_once():
    rec = FakeReconciler()
    obj = autoscaler("a")
    store = keyed(obj)
    ctl = controller(rec, store, sync_period=30.0)
    ctl.on_event("ADDED", obj)
    ctl.set_leading(True)
    try:
        await asyncio.sleep(0.1)
        before = rec.count("a")
        paused = copy.deepcopy(obj)
        paused["metadata"]["annotations"] = {"promscaler.dev/paused": "true"}  # same generation
        store.objects["default/a"] = paused
        ctl.on_event("MODIFIED", paused)
        assert await passes_soon(ctl, rec, "a", before) == 1
        ctl.on_event("MODIFIED", {**paused, "status": {"currentReplicas": 3}})
        assert await passes_soon(ctl, rec, "a", before + 1) == 0, "a status write is no news"
    finally:
        await ctl.stop()


async def test_deleting_the_holder_reconciles_the_waiting_autoscaler_at_once():
    rec = FakeReconciler()
    first = created(autoscaler("first"), "2026-01-01T00:00:00Z")
    second = created(autoscaler("second"), "2026-01-01T00:00:01Z")
    for obj in (first, second):
        obj["spec"]["scaleTargetRef"]["name"] = "web"
    store = keyed(first, second)
    ctl = controller(rec, store, sync_period=30.0)
    for obj in (first, second):
        ctl.on_event("ADDED", obj)
    ctl.set_leading(True)
    try:
        await asyncio.sleep(0.1)
        assert ctl.index.holder(second).name == "first"
        before = rec.count("second")
        del store.objects["default/first"]
        ctl.on_event("DELETED", first)
        assert await passes_soon(ctl, rec, "second", before) == 1
        assert ctl.index.holder(second) is None
    finally:
        await ctl.stop()


async def test_an_hpa_on_the_target_reconciles_its_autoscalers_at_once():
    rec = FakeReconciler()
    obj = created(autoscaler("a"), "2026-01-01T00:00:00Z")
    store = keyed(obj)
    ctl = controller(rec, store, sync_period=30.0)
    ctl.on_event("ADDED", obj)
    ctl.set_leading(True)
    try:
        await asyncio.sleep(0.1)
        before = rec.count("a")
        hpa = created(autoscaler("a"), "2026-01-02T00:00:00Z")  # same name, other kind
        ctl.on_hpa_event("ADDED", hpa)
        assert await passes_soon(ctl, rec, "a", before) == 1
        assert ctl.index.holder(obj).kind == "HorizontalPodAutoscaler"
        ctl.on_hpa_event("DELETED", hpa)
        assert await passes_soon(ctl, rec, "a", before + 1) == 1
        assert ctl.index.holder(obj) is None
    finally:
        await ctl.stop()


class FakeHolder:
    def __init__(self):
        self.held: dict[str, tuple[str, int]] = {}

    def hold(self, key, path, replicas):
        self.held[key] = (path, replicas)

    def release(self, key):
        self.held.pop(key, None)


async def test_held_targets_follow_the_outcomes_and_drift_reconciles_at_once():
    held = Outcome(reason="ReadyForNewScale", replicas=3, held=("web", 3))
    rec = FakeReconciler(outcomes={"a": held})
    obj = autoscaler("a")
    store = keyed(obj)
    ctl = controller(rec, store, sync_period=30.0)
    ctl.holder = holder = FakeHolder()
    ctl.on_event("ADDED", obj)
    ctl.set_leading(True)
    try:
        await asyncio.sleep(0.1)
        assert holder.held == {"default/a": ("web", 3)}
        before = rec.count("a")
        ctl.on_drift("default/a")
        assert await passes_soon(ctl, rec, "a", before) == 1
        rec.outcomes["a"] = Outcome(reason="ReadyForNewScale", replicas=3)  # unpaused
        ctl.on_drift("default/a")
        await asyncio.sleep(0.1)
        assert holder.held == {}
        ctl.on_event("DELETED", obj)
    finally:
        await ctl.stop()


class WatchKube:
    """A Kubernetes API with one Deployment: a LIST, then a watch fed by the test."""

    def __init__(self, replicas):
        self.replicas = replicas
        self.events: asyncio.Queue = asyncio.Queue()
        self.queries: list[tuple[str, list]] = []

    def deployment(self, replicas, version="1"):
        meta = {"name": "web", "namespace": "ns", "resourceVersion": version}
        return {"metadata": meta, "spec": {"replicas": replicas}}

    async def request(self, method, path, *, query=(), request_timeout=None, **_):
        self.queries.append((path, list(query)))
        return {"items": [self.deployment(self.replicas)], "metadata": {"resourceVersion": "1"}}

    async def watch(self, path, *, query=(), timeout_seconds=0):
        self.queries.append((path, list(query)))
        while True:
            yield await self.events.get()


async def test_the_target_watcher_reports_drift_only():
    kube = WatchKube(replicas=3)
    drifted: list[str] = []
    watcher = TargetWatcher(kube, drifted.append)  # type: ignore[arg-type]
    watcher.hold("ns/a", "/apis/apps/v1/namespaces/ns/deployments/web/scale", 3)
    try:
        await asyncio.sleep(0.05)
        assert kube.queries[0] == (
            "/apis/apps/v1/namespaces/ns/deployments",
            [("fieldSelector", "metadata.name=web")],
        )
        assert drifted == [], "at N: nothing to repair"
        await kube.events.put({"type": "MODIFIED", "object": kube.deployment(5, "2")})
        await asyncio.sleep(0.05)
        assert drifted == ["ns/a"], "someone scaled it"
        await kube.events.put({"type": "MODIFIED", "object": kube.deployment(3, "3")})
        await kube.events.put({"type": "DELETED", "object": kube.deployment(5, "4")})
        await asyncio.sleep(0.05)
        assert drifted == ["ns/a"], "back at N, and deleted: no drift"
        watcher.hold("ns/a", "/apis/apps/v1/namespaces/ns/deployments/web/scale", 4)
        await kube.events.put({"type": "MODIFIED", "object": kube.deployment(3, "5")})
        await asyncio.sleep(0.05)
        assert drifted == ["ns/a", "ns/a"], "a new N on the same watch"
        assert watcher.held() == {"ns/a": 4}
        watcher.release("ns/a")
        assert watcher.held() == {}
    finally:
        await watcher.close()


async def test_a_skipped_status_write_still_feeds_the_next_pass():
    """Steady at 5 replicas, the second pass changes only recommendation timestamps, so its
    write is skipped; when the queue empties on the third pass, lastActiveTime is the second
    pass (the last active one), not the older persisted first pass."""
    from autoscaler.core import decide_document

    cluster = FakeCluster()
    cluster.add_target("web", 5)
    cluster.metrics["queue"] = external_value("50")
    obj = autoscaler(metrics=[{**external("queue", "10", average=True)}], min_replicas=0)
    obj["spec"]["scaleToZero"] = {"cooldownSeconds": 300}
    rec = reconciler(cluster, decide_document)
    t = [NOW + timedelta(seconds=s) for s in (0, 15, 30)]
    await rec.reconcile(obj, now=t[0])
    await rec.reconcile(obj, now=t[1])
    assert len(cluster.status_patches) == 1, "the second pass changed only timestamps"
    cluster.metrics["queue"] = external_value("0")
    await rec.reconcile(obj, now=t[2])
    assert obj["status"]["lastActiveTime"] == "2026-01-01T00:00:15Z"
    rec.forget("default/web")
    assert rec._status.base(obj) == obj["status"]


class FakeDiscovery:
    def __init__(self, answer):
        self.answer = answer

    async def find(self, api_version, kind):
        assert (api_version, kind) == ("autoscaling/v2", "HorizontalPodAutoscaler")
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    ("answer", "namespaces", "paths", "logged"),
    [
        pytest.param(
            ResourceRef("/apis/autoscaling/v2", "horizontalpodautoscalers", True, True),
            (),
            ["/apis/autoscaling/v2/horizontalpodautoscalers"],
            "",
            id="served-all-namespaces",
        ),
        pytest.param(
            ResourceRef("/apis/autoscaling/v2", "horizontalpodautoscalers", True, True),
            ("a", "b"),
            [
                "/apis/autoscaling/v2/namespaces/a/horizontalpodautoscalers",
                "/apis/autoscaling/v2/namespaces/b/horizontalpodautoscalers",
            ],
            "",
            id="served-watched-namespaces",
        ),
        pytest.param(None, (), [], "does not serve", id="not-served-skipped"),
        pytest.param(
            KubeError(0, "Unavailable", "down"), (), [], "discovery", id="discovery-failed"
        ),
    ],
)
async def test_hpas_are_watched_only_where_served(answer, namespaces, paths, logged, caplog):
    caplog.set_level(logging.INFO, logger="autoscaler.app")
    informers = await _hpa_informers(object(), FakeDiscovery(answer), namespaces, print)  # type: ignore[arg-type]
    assert [i.path for i in informers] == paths
    if logged:
        assert any(
            "HPA conflict check off" in r.getMessage() and logged in r.getMessage()
            for r in caplog.records
        )
