"""/metrics, /healthz, /readyz of the controller."""

from __future__ import annotations

import asyncio
import dataclasses

import aiohttp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest

from autoscaler.controller import Controller, ControllerConfig
from autoscaler.reconcile import Outcome
from autoscaler.selfmetrics import SelfMetrics, Snapshot, start_health_server


async def test_endpoints_and_metric_names():
    metrics = SelfMetrics()
    ready = [False]
    runner = await start_health_server(metrics, host="127.0.0.1", port=0, ready=lambda: ready[0])
    port = runner.addresses[0][1]
    ctl = Controller(
        object(), type("S", (), {"objects": {}})(), config=ControllerConfig(), metrics=metrics
    )  # type: ignore[arg-type]
    ctl._account("ns/a", Outcome(reason="SucceededRescale", replicas=3, rescaled=True))
    ctl._account("ns/b", Outcome(reason="FailedGetScale", error="boom"))
    metrics.observe("ns", "a", SNAP)
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"http://127.0.0.1:{port}/healthz") as r:
                assert r.status == 200
            async with s.get(f"http://127.0.0.1:{port}/readyz") as r:
                assert r.status == 503
            ready[0] = True
            async with s.get(f"http://127.0.0.1:{port}/readyz") as r:
                assert r.status == 200
            async with s.get(f"http://127.0.0.1:{port}/metrics") as r:
                text = await r.text()
    finally:
        await runner.cleanup()
    for line in (
        'promscaler_autoscaler_decisions_total{reason="SucceededRescale"} 1.0',
        'promscaler_autoscaler_scale_writes_total{result="success"} 1.0',
        'promscaler_autoscaler_reconcile_errors_total{reason="FailedGetScale"} 1.0',
    ):
        assert line in text
    assert "promscaler_autoscaler_reconcile_lag_seconds_bucket" in text
    assert "promscaler_autoscaler_reconcile_duration_seconds_bucket" in text
    # the per-Autoscaler series, rendered apart from the registry's exposition
    assert 'promscaler_autoscaler_desired_replicas{name="a",namespace="ns"} 6.0' in text
    assert "# TYPE promscaler_autoscaler_condition gauge" in text
    assert text.count("# TYPE promscaler_autoscaler_metric_value gauge") == 1


async def test_metrics_over_tls(tmp_path):
    import ssl
    from datetime import UTC, datetime

    from autoscaler.selfmetrics import serving_context
    from sandbox.certs import issue, make_ca

    now = datetime.now(UTC)
    ca = make_ca("test-ca", now=now)
    cert, key = issue(ca, "autoscaler", now=now, hosts=("127.0.0.1",), server=True).write(
        tmp_path, "serving"
    )
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(ca.cert_pem)
    runner = await start_health_server(
        SelfMetrics(),
        host="127.0.0.1",
        port=0,
        ready=lambda: True,
        ssl_context=serving_context(str(cert), str(key)),
    )
    port = runner.addresses[0][1]
    client = ssl.create_default_context(cafile=str(ca_file))
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"https://127.0.0.1:{port}/metrics", ssl=client) as r:
                assert r.status == 200
                assert "promscaler_autoscaler_leader" in await r.text()
            with pytest.raises(aiohttp.ClientError):
                async with s.get(f"http://127.0.0.1:{port}/metrics") as r:
                    await r.read()
    finally:
        await runner.cleanup()


def _sample(metrics, metric_name, **labels):
    return metrics.registry.get_sample_value(metric_name, labels)


SNAP = Snapshot(
    conditions=(("AbleToScale", "True"), ("Fallback", "False")),
    paused=False,
    in_fallback=True,
    current_replicas=2,
    desired_replicas=6,
    min_replicas=3,
    max_replicas=10,
    metrics=(("queue", 55.0, 10.0), ("cpu", None, 80.0)),
)


def test_per_autoscaler_gauges_and_their_removal():
    metrics = SelfMetrics()
    ids = {"namespace": "ns", "name": "a"}
    metrics.observe("ns", "a", SNAP)
    metrics.observe("ns", "b", SNAP)
    cond = "promscaler_autoscaler_condition"
    assert _sample(metrics, cond, **ids, type="AbleToScale", status="True") == 1.0
    assert _sample(metrics, cond, **ids, type="AbleToScale", status="False") == 0.0
    assert _sample(metrics, cond, **ids, type="AbleToScale", status="Unknown") == 0.0
    assert _sample(metrics, cond, **ids, type="Fallback", status="False") == 1.0
    for name, want in (
        ("paused", 0.0),
        ("in_fallback", 1.0),
        ("current_replicas", 2.0),
        ("desired_replicas", 6.0),
        ("min_replicas", 3.0),
        ("max_replicas", 10.0),
    ):
        assert _sample(metrics, f"promscaler_autoscaler_{name}", **ids) == want, name
    value, target = "promscaler_autoscaler_metric_value", "promscaler_autoscaler_metric_target"
    assert _sample(metrics, value, **ids, metric="queue") == 55.0
    assert _sample(metrics, target, **ids, metric="queue") == 10.0
    assert _sample(metrics, value, **ids, metric="cpu") is None, "unread: no series"
    assert _sample(metrics, target, **ids, metric="cpu") == 80.0

    # the metric and the condition go away with the next pass that lacks them
    later = dataclasses.replace(SNAP, metrics=(), conditions=(("AbleToScale", "False"),))
    metrics.observe("ns", "a", later)
    assert _sample(metrics, target, **ids, metric="queue") is None
    assert _sample(metrics, cond, **ids, type="Fallback", status="False") is None
    assert _sample(metrics, cond, **ids, type="AbleToScale", status="False") == 1.0

    metrics.forget("ns", "a")
    text = generate_latest(metrics.registry).decode()
    assert 'name="a"' not in text, "a deleted Autoscaler leaves no series"
    assert 'name="b"' in text


def test_forecast_gauges_and_history_refreshes():
    metrics = SelfMetrics()
    ids = {"namespace": "ns", "name": "a"}
    metrics.observe("ns", "a", dataclasses.replace(SNAP, forecasts=(("queue", 100.0, 0.12),)))
    assert _sample(metrics, "promscaler_autoscaler_forecast_value", **ids, metric="queue") == 100
    error = "promscaler_autoscaler_forecast_recent_error"
    assert _sample(metrics, error, **ids, metric="queue") == 0.12
    metrics.observe("ns", "a", SNAP)  # a pass without forecasts: no series
    assert _sample(metrics, error, **ids, metric="queue") is None
    for result in ("success", "failure", "failure"):
        metrics.count_history_refresh(result)
    name = "promscaler_autoscaler_history_refreshes_total"
    assert _sample(metrics, name, result="success") == 1.0
    assert _sample(metrics, name, result="failure") == 2.0


class Histories:
    """What a HistoryCache tells of itself, set by hand."""

    def __init__(self) -> None:
        self.held, self.held_minutes, self.refits_pending = 0, 0, 0

    def __len__(self) -> int:
        return self.held

    def minutes(self) -> int:
        return self.held_minutes


def test_the_history_gauges_are_read_at_scrape_time():
    metrics = SelfMetrics()
    histories = Histories()
    metrics.count_histories(histories)
    assert _sample(metrics, "promscaler_autoscaler_histories") == 0.0
    histories.held, histories.held_minutes, histories.refits_pending = 3, 60_480, 2
    assert _sample(metrics, "promscaler_autoscaler_histories") == 3.0
    assert _sample(metrics, "promscaler_autoscaler_history_minutes") == 60_480.0
    assert _sample(metrics, "promscaler_autoscaler_history_refits_pending") == 2.0


def test_passes_a_forecast_changed_are_counted():
    metrics = SelfMetrics()
    ctl = Controller(
        object(), type("S", (), {"objects": {}})(), config=ControllerConfig(), metrics=metrics
    )  # type: ignore[arg-type]
    changed = dataclasses.replace(SNAP, forecast_changed=True)
    for snap in (changed, SNAP, changed):
        ctl._account("ns/a", Outcome(reason="SucceededRescale", snapshot=snap))
    name = "promscaler_autoscaler_forecast_changed_decisions_total"
    assert _sample(metrics, name) == 2.0


def test_metric_failures_are_counted_by_reason():
    metrics = SelfMetrics()
    ctl = Controller(
        object(), type("S", (), {"objects": {}})(), config=ControllerConfig(), metrics=metrics
    )  # type: ignore[arg-type]
    failed = Outcome(reason="ReadyForNewScale", metric_failures=("Timeout", "Timeout", "NotFound"))
    ctl._account("ns/a", failed)
    name = "promscaler_autoscaler_metric_failures_total"
    assert _sample(metrics, name, reason="Timeout") == 2.0
    assert _sample(metrics, name, reason="NotFound") == 1.0


_TEXT = st.text(st.sampled_from('ab-_.:"\\\n\u00e9\u2603 '), max_size=8)
_NUMBER = st.none() | st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 10**9)
_SNAPSHOTS = st.builds(
    Snapshot,
    conditions=st.lists(
        st.tuples(_TEXT, st.sampled_from(["True", "False", "Unknown", "weird"])), max_size=4
    ).map(tuple),
    paused=st.booleans(),
    in_fallback=st.booleans(),
    current_replicas=st.none() | st.integers(0, 10**6),
    desired_replicas=st.none() | st.integers(0, 10**6),
    min_replicas=st.integers(0, 100),
    max_replicas=st.integers(0, 10**6),
    metrics=st.lists(st.tuples(_TEXT, _NUMBER, _NUMBER), max_size=3).map(tuple),
    forecasts=st.lists(st.tuples(_TEXT, _NUMBER, _NUMBER), max_size=2).map(tuple),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_TEXT, _TEXT, _SNAPSHOTS), max_size=6))
def test_per_autoscaler_exposition_is_prometheus_clients_byte_for_byte(shown):
    """/metrics renders these series itself (prometheus_client's own writer costs seconds per
    scrape at 10,000 Autoscalers); the bytes must be the ones `generate_latest` writes."""
    metrics = SelfMetrics()
    for namespace, name, snap in shown:
        metrics.observe(namespace, name, snap)
    only = CollectorRegistry()
    only.register(metrics.per_autoscaler)
    served = asyncio.run(metrics.per_autoscaler.exposition(pause_every=2))
    assert served == generate_latest(only)


async def test_exposition_is_the_registrys_whole_text():
    metrics = SelfMetrics()
    metrics.observe("ns", "a", SNAP)
    metrics.decisions.labels("SucceededRescale").inc()
    served = (await metrics.exposition()).decode()
    whole = generate_latest(metrics.registry).decode()

    def families(text: str) -> set[str]:
        return {line for line in text.splitlines() if line.startswith("# TYPE")}

    assert families(served) == families(whole)
    steady = [  # process and collector figures move between the two reads
        line for line in whole.splitlines() if not line.startswith(("process_", "python_gc"))
    ]
    for line in steady:
        if "promscaler_autoscaler_gc_" in line or "asyncio_tasks" in line:
            continue
        assert line in served.splitlines(), line


async def test_shared_pod_metric_reads_are_exposed():
    from autoscaler.kube.sharedreads import SharedReads

    metrics = SelfMetrics()
    reads = SharedReads(5.0, clock=lambda: 0.0)
    metrics.count_shared_reads(reads)
    reads.wide(("ns", "rps", ()), 10)  # the first request of a key reads its own pods
    reads.shared, reads.wide_reads = 7, 2
    name = "promscaler_autoscaler_pod_metric_reads_total"
    assert [_sample(metrics, name, read=r) for r in ("own", "shared", "namespace")] == [1, 7, 2]
    served = (await metrics.exposition()).decode()
    assert f'{name}{{read="shared"}} 7.0' in served
    assert SelfMetrics().registry.get_sample_value(name, {"read": "own"}) is None  # off: absent
