"""Discovery self-metrics: passes, failures and staleness per backend, metrics served."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from adapter.rules.config import SeriesCall


class DiscoveryMetrics:
    """Discovery self-metrics, on the adapter's registry."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.runs = Counter(
            "promscaler_adapter_discovery_runs_total", "Discovery passes.", registry=registry
        )
        self.failures = Counter(
            "promscaler_adapter_discovery_failures_total",
            "Failed or timed-out seriesQuery calls by backend (their last good list is kept).",
            ["backend"],
            registry=registry,
        )
        self.stale = Gauge(
            "promscaler_adapter_discovery_stale_series_queries",
            "seriesQuery calls whose latest relist failed, so their last good list is served.",
            ["backend"],
            registry=registry,
        )
        self.last_success = Gauge(
            "promscaler_adapter_discovery_last_success_timestamp_seconds",
            "When every seriesQuery of the backend last answered in one pass (unix seconds).",
            ["backend"],
            registry=registry,
        )
        self.duration = Histogram(
            "promscaler_adapter_discovery_duration_seconds",
            "Duration of a discovery pass.",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=registry,
        )
        self.metrics = Gauge(
            "promscaler_adapter_discovered_metrics",
            "Metrics currently served, by API.",
            ["api"],
            registry=registry,
        )

    def observe_backend(
        self, backend: str, stale: Collection[SeriesCall], last_ok: Mapping[SeriesCall, datetime]
    ) -> None:
        """Refresh the per-backend gauges after one backend's pass."""
        failing = sum(1 for call in stale if call.backend == backend)
        self.stale.labels(backend).set(failing)
        if failing == 0:
            times = [t for call, t in last_ok.items() if call.backend == backend]
            if times:
                self.last_success.labels(backend).set(max(times).timestamp())
