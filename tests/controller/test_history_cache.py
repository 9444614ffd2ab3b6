"""The controller's history for spec.predictive (autoscaler/history.py): read off the pass, at most
every 5 minutes per metric, kept when a read fails, and never a reason to scale down."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import autoscaler.history as history
from autoscaler.cluster import ClusterError
from autoscaler.core import decide_document
from autoscaler.core.forecast import fit
from autoscaler.core.model import NS
from autoscaler.history import REFIT, REFRESH, HistoryCache
from autoscaler.reconcile import ControllerOptions, Reconciler
from autoscaler.statusview import snapshot
from tests.controller.fakes import FakeCluster, autoscaler, external, external_value

# the load of the history: 10 most of each hour, 100 from minute 30 to 45
NOW = datetime(2026, 1, 2, 12, 27, tzinfo=UTC)  # three minutes before the hour's peak
PREDICTIVE = {"mode": "Scale", "horizon": "5m", "history": "26h", "seasonality": ["1h"]}


def load(at: int) -> float:
    return 100.0 if 30 <= (at // 60) % 60 < 45 else 10.0


@dataclass
class Reader:
    """A history.promscaler.dev stand-in: `load` per minute, or the failure set in `error`."""

    error: ClusterError | None = None
    hang: bool = False
    calls: list[tuple[str, str, int, int]] = field(default_factory=list)
    selectors: list[str] = field(default_factory=list)  # the pod selector of each read

    async def read_history(
        self, namespace: str, metric: Any, *, start: int, end: int, pod_selector: str = ""
    ) -> tuple[int, list[float | None]]:
        source = metric.get("external") or metric.get("object") or metric.get("pods")
        self.calls.append((namespace, source["metric"]["name"], start, end))
        self.selectors.append(pod_selector)
        if self.hang:
            await asyncio.Event().wait()
        if self.error is not None:
            raise self.error
        first = start - start % 60
        return first, [load(t) for t in range(first, end + 1, 60)]


class BrokenReader(Reader):
    """A reader failing in a way nobody planned for (a bug, an answer of the wrong shape)."""

    async def read_history(
        self, namespace: str, metric: Any, *, start: int, end: int, pod_selector: str = ""
    ) -> tuple[int, list[float | None]]:
        raise AttributeError("'list' object has no attribute 'get'")


def spec(predictive: dict[str, Any] | None) -> dict[str, Any]:
    obj = autoscaler(metrics=[external("queue", "10", average=True)], max_replicas=20)
    if predictive is not None:
        obj["spec"]["predictive"] = predictive
    return obj


async def run(
    reader: Reader, predictive: dict[str, Any] | None, *, times: list[datetime]
) -> tuple[FakeCluster, dict[str, Any], list[str], HistoryCache]:
    """Passes at `times` (the history read of each settled before the next); the cluster, the
    last status patch, the refresh results counted and the cache."""
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("10")  # the load now: 10, one pod's worth
    results: list[str] = []
    cache = HistoryCache(reader, timeout=0.2, on_refresh=results.append)
    r = Reconciler(cluster, options=ControllerOptions(), decide=decide_document, history=cache)
    obj = spec(predictive)
    for at in times:
        await r.reconcile(obj, now=at)
        await cache.settled()
        obj = {**obj, "status": {**obj.get("status", {}), **cluster.status_patches[-1][1]}}
    await cache.close()
    return cluster, cluster.status_patches[-1][1], results, cache


def condition(patch: dict[str, Any]) -> tuple[str, str, str]:
    c = next(c for c in patch["conditions"] if c["type"] == "Predictive")
    return c["status"], c["reason"], c["message"]


async def test_the_forecast_raises_the_replicas_ahead_of_the_load() -> None:
    reader = Reader()
    cluster, patch, results, _ = await run(reader, PREDICTIVE, times=[NOW, NOW])
    plain, _, _, _ = await run(Reader(), None, times=[NOW, NOW])
    assert plain.scale_writes == []  # reactive: 10 is one pod's worth, and scale-in waits
    # the peak of 100 is 3 minutes away: 10 pods wanted, 4 allowed by the scale-up policy
    assert cluster.scale_writes == [("web", 4)]
    assert condition(patch)[:2] == ("True", "ForecastApplied")
    line = patch["predictive"]["metrics"][0]
    assert (line["verdict"], line["forecast"], line["forecastReplicas"]) == ("Ready", "100", 10)
    assert line["seasonSeconds"] == 3600
    assert patch["predictive"]["changedDecision"] is True
    assert results == ["success"]  # one read for both passes
    ((ns, name, start, end),) = reader.calls
    assert (ns, name, end - start) == ("default", "queue", 26 * 3600)
    snap = snapshot(spec(PREDICTIVE)["spec"], patch)
    assert snap.forecasts == (("queue", 100.0, 0.0),)
    assert snap.forecast_changed is True


def test_reads_are_made_at_most_every_refresh_and_only_for_new_minutes() -> None:
    async def go() -> tuple[Reader, float]:
        reader = Reader()
        times = [NOW + timedelta(seconds=15 * i) for i in range(41)]  # ten minutes
        _, _, _, cache = await run(reader, PREDICTIVE, times=times)
        (track,) = cache._tracks.values()
        return reader, track.read_phase

    reader, phase = asyncio.run(go())
    ends = [c[3] - int(NOW.timestamp()) // 60 * 60 for c in reader.calls]
    # the first read at once; then one in each 5 minutes, at this history's own phase of them
    assert len(ends) == 3
    assert ends[0] == 0
    assert 0 < ends[1] <= 300
    assert ends[2] - ends[1] == 300
    # it starts on the first pass (every 15 s) at or past the phase point; a read ends at the
    # start of its minute, so that end lies within 60 s before to 15 s after the phase point
    turn = (int(NOW.timestamp()) + ends[1] - phase * REFRESH) % REFRESH
    assert turn < 15 or turn > REFRESH - 60, turn
    # the second read starts five minutes before the end of what was held (the overlap)
    assert reader.calls[1][2] == reader.calls[0][3] + 60 - 300
    assert REFRESH == 300


async def test_later_refits_reuse_the_last_ones_work() -> None:
    """A refit judges the history up to the start of its period, so the next one (a period
    later) finds most of its judged forecasts in the memo; the model is fit's all the same."""
    times = [NOW + timedelta(minutes=m) for m in range(96)]  # three refit periods and more
    _, _, _, cache = await run(Reader(), PREDICTIVE, times=times)
    (track,) = cache._tracks.values()
    assert track.memo is not None
    assert track.fitted is not None
    stats = track.memo.stats
    # (an hourly season: the oldest minutes dropped touch the forecasts judged up to four
    # seasons on, a sixth of the day's)
    assert stats.terms_reused > 3 * stats.terms_computed > 0, stats
    now = int(history._period_start(track.fitted, REFIT, track.refit_phase)) * NS
    s = track.settings
    model = fit(history._series(track), now=now, horizon=s.horizon, seasonality=s.seasonality)
    assert track.model == model
    assert model.verdict == "Ready"


FAILURES = [
    pytest.param(Reader(error=ClusterError("ServiceUnavailable", "503")), "503", id="adapter-503"),
    pytest.param(Reader(error=ClusterError("NotFound", "no route")), "no route", id="route-404"),
    pytest.param(Reader(hang=True), "timed out", id="read-hangs"),
    pytest.param(BrokenReader(), "AttributeError", id="unexpected-error"),
]


@pytest.mark.parametrize(("reader", "why"), FAILURES)
async def test_a_failed_read_leaves_the_decision_reactive(reader: Reader, why: str) -> None:
    cluster, patch, results, _ = await run(reader, PREDICTIVE, times=[NOW, NOW])
    plain, plain_patch, _, _ = await run(Reader(), None, times=[NOW, NOW])
    assert cluster.scale_writes == plain.scale_writes
    assert patch["desiredReplicas"] == plain_patch["desiredReplicas"]
    status, reason, message = condition(patch)
    assert (status, reason) == ("False", "NoHistory")
    assert why in message
    assert results == ["failure"]


async def test_a_failed_read_never_scales_down() -> None:
    # 8 pods, the load 10 (one pod's worth): the reactive rule holds 8 in its scale-down window
    # whether or not the history can be read
    for reader in (Reader(error=ClusterError("ServiceUnavailable", "503")), Reader(hang=True)):
        cluster = FakeCluster()
        cluster.add_target("web", 8)
        cluster.metrics["queue"] = external_value("10")
        cache = HistoryCache(reader, timeout=0.05)
        r = Reconciler(cluster, options=ControllerOptions(), decide=decide_document, history=cache)
        await r.reconcile(spec(PREDICTIVE), now=NOW)
        await cache.settled()
        await r.reconcile(spec(PREDICTIVE), now=NOW + timedelta(seconds=15))
        await cache.close()
        assert cluster.scale_writes == []


async def test_a_failed_refresh_keeps_the_last_good_history() -> None:
    reader = Reader()
    later = NOW + timedelta(seconds=REFRESH)
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("10")
    results: list[str] = []
    cache = HistoryCache(reader, timeout=0.2, on_refresh=results.append)
    r = Reconciler(cluster, options=ControllerOptions(), decide=decide_document, history=cache)
    await r.reconcile(spec(PREDICTIVE), now=NOW)
    await cache.settled()
    reader.error = ClusterError("ServiceUnavailable", "503")
    await r.reconcile(spec(PREDICTIVE), now=later)  # starts the refresh, which fails
    await cache.settled()
    await r.reconcile(spec(PREDICTIVE), now=later + timedelta(seconds=15))
    await cache.close()
    patch = cluster.status_patches[-1][1]
    assert results == ["success", "failure"]
    assert patch["predictive"]["metrics"][0]["verdict"] == "Ready"
    assert condition(patch)[:2] == ("True", "ForecastApplied")


async def test_a_pass_never_waits_for_a_read() -> None:
    reader = Reader(hang=True)
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("10")
    cache = HistoryCache(reader, timeout=3600)
    r = Reconciler(cluster, options=ControllerOptions(), decide=decide_document, history=cache)
    async with asyncio.timeout(5):  # the read hangs for an hour; the pass must not
        await r.reconcile(spec(PREDICTIVE), now=NOW)
    await asyncio.sleep(0.05)  # the background read starts, and hangs
    assert len(reader.calls) == 1
    assert condition(cluster.status_patches[-1][1])[:2] == ("False", "NoHistory")
    await cache.close()


async def test_without_predictive_nothing_is_read() -> None:
    reader = Reader()
    _, patch, results, cache = await run(reader, None, times=[NOW, NOW])
    assert reader.calls == []
    assert results == []
    assert cache.reads == 0
    assert "predictive" not in patch


async def test_object_and_pods_metrics_are_read() -> None:
    reader = Reader()
    cache = HistoryCache(reader)
    obj = spec(PREDICTIVE)
    described = {"apiVersion": "v1", "kind": "Service", "name": "s"}
    obj["spec"]["metrics"] += [
        {
            "type": "Object",
            "object": {
                "describedObject": described,
                "metric": {"name": "rps"},
                "target": {"type": "Value", "value": "1"},
            },
        },
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "rps"},
                "target": {"type": "AverageValue", "averageValue": "1"},
            },
        },
    ]
    out = cache.forecasts("default", obj["spec"], NOW, pod_selector="app=web")
    assert out == [None, None, None]  # their first reads have just started
    await cache.settled()
    # the Object and the Pods metric share a name, not a history
    assert sorted(name for _, name, _, _ in reader.calls) == ["queue", "rps", "rps"]
    assert sorted(reader.selectors) == ["", "", "app=web"]
    again = cache.forecasts("default", obj["spec"], NOW + timedelta(seconds=15))
    assert again is not None
    assert [e["verdict"] for e in again[:2]] == ["Ready", "Ready"]
    # without the target's selector there are no pods to read for (never all the namespace's)
    assert again[2] == {
        "verdict": "NoHistory",
        "message": "the target's /scale has no selector: no pods to read history for",
    }
    assert len(reader.calls) == 3
    await cache.close()


async def test_histories_nobody_asks_for_are_dropped() -> None:
    cache = HistoryCache(Reader())
    other = spec(PREDICTIVE)
    other["spec"]["metrics"][0]["external"]["metric"]["name"] = "other"
    cache.forecasts("default", spec(PREDICTIVE)["spec"], NOW)
    cache.forecasts("default", other["spec"], NOW)
    await cache.settled()
    assert len(cache) == 2
    later = NOW + timedelta(minutes=20)  # only the first is still asked for
    cache.forecasts("default", spec(PREDICTIVE)["spec"], later - timedelta(minutes=5))
    cache.forecasts("default", spec(PREDICTIVE)["spec"], later)
    await cache.settled()
    assert len(cache) == 1
    await cache.close()


async def test_a_follower_reads_no_history() -> None:
    reader = Reader()
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("10")
    cache = HistoryCache(reader)
    r = Reconciler(cluster, options=ControllerOptions(), decide=decide_document, history=cache)
    await r.reconcile(spec(PREDICTIVE), now=NOW, write=False)
    await cache.settled()
    assert reader.calls == []
    assert len(cache) == 0


async def test_the_cache_tells_what_it_holds_and_the_refits_queued(monkeypatch) -> None:
    """The figures behind the promscaler_autoscaler_histories, _history_minutes and
    _history_refits_pending gauges: two histories, their first fits held on the one refit
    thread (one running, one queued), then done."""
    release = threading.Event()
    real = history.refit

    def held(*args: Any, **kwargs: Any) -> Any:
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(history, "refit", held)
    cache = HistoryCache(Reader())
    other = spec(PREDICTIVE)
    other["spec"]["metrics"][0]["external"]["metric"]["name"] = "other"
    for obj in (spec(PREDICTIVE), other):
        cache.forecasts("default", obj["spec"], NOW)
    for _ in range(100):  # the reads answer at once; both refits are then on the thread
        if cache.refits_pending == 2:
            break
        await asyncio.sleep(0.01)
    assert (len(cache), cache.refits_pending) == (2, 2)
    assert cache.minutes() == 2 * 26 * 60  # each history's 26 hours of minutes
    release.set()
    await cache.settled()
    assert cache.refits_pending == 0
    assert all(t.model is not None for t in cache._tracks.values())
    await cache.close()
