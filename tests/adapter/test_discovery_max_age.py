"""Discovery that never flaps, against a real Prometheus: a series written once stays listed
while `max_age` covers its sample, and a relist that fails (Prometheus hung or stopped) changes
nothing that is listed."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from tests.adapter.stack import Adapter, rule_file, series
from tests.support.prometheus import remote_write

pytestmark = pytest.mark.prometheus
INTERVAL = 1.0  # seconds between relists in these tests


async def _listed_over_relists(adapter: Adapter, relists: int) -> list[bool]:
    """Relist every INTERVAL seconds (as `Discovery.run` does); after each, whether the
    series is listed."""
    seen: list[bool] = []
    for _ in range(relists):
        await adapter.discover()
        seen.append(any(m.metric == "once" for m in adapter.discovery.planner.custom))
        await asyncio.sleep(INTERVAL)
    return seen


@pytest.mark.parametrize(
    ("max_age", "listed"),
    [
        pytest.param(30.0, [True, True, True, True], id="max-age-covers-the-sample"),
        # the peer's default (max age = relist interval): the series drops out after one
        pytest.param(INTERVAL, [False, False, False, False], id="max-age-equal-to-the-interval"),
    ],
)
async def test_a_series_written_once_stays_listed_while_max_age_covers_it(
    prometheus, max_age, listed
):
    await remote_write(
        prometheus.url, [series("once", {"namespace": "d", "pod": "p"}, [1])]
    )  # one sample, ~2 s ago
    adapter = Adapter(prometheus.url, rule_file(["once"]), max_age=max_age)
    try:
        seen = await _listed_over_relists(adapter, 4)
    finally:
        await adapter.pool.close()
    assert seen == listed


async def test_prometheus_hung_or_stopped_during_a_relist_changes_nothing_listed(
    prometheus, caplog
):
    names = ["kept_a", "kept_b"]
    await remote_write(
        prometheus.url, [series(n, {"namespace": "d", "pod": "p"}, [1]) for n in names]
    )
    adapter = Adapter(prometheus.url, rule_file(names), timeout=0.5)
    try:
        await adapter.discover()
        before = sorted(m.api_name for m in adapter.discovery.planner.custom)
        assert len(before) == 4

        prometheus.signal(signal.SIGSTOP)  # hung in the middle of the relist
        try:
            started = time.monotonic()
            await adapter.discover()
            assert time.monotonic() - started < 2  # bounded by the call timeout
        finally:
            os.kill(prometheus.pid, signal.SIGCONT)
        assert sorted(m.api_name for m in adapter.discovery.planner.custom) == before

        prometheus.stop()  # gone: connection refused
        await adapter.discover()
        assert sorted(m.api_name for m in adapter.discovery.planner.custom) == before
        stale = adapter.metric(
            "promscaler_adapter_discovery_stale_series_queries", 'backend="default"'
        )
        assert stale == 2
        failures = adapter.metric(
            "promscaler_adapter_discovery_failures_total", 'backend="default"'
        )
        assert failures == 4  # two calls, two failed relists
        assert "keeping its last good list (from " in caplog.text

        prometheus.start()  # back: the next relist succeeds and the gauge clears
        await adapter.discover()
        assert sorted(m.api_name for m in adapter.discovery.planner.custom) == before
        assert (
            adapter.metric("promscaler_adapter_discovery_stale_series_queries", 'backend="default"')
            == 0
        )
    finally:
        await adapter.pool.close()
