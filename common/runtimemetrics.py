"""Process gauges a Python program adds to its own registry: what a soak run watches for leaks,
and what Python's cycle collector costs."""

from __future__ import annotations

import asyncio
import gc
import platform
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Gauge, GCCollector, ProcessCollector
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from common.version import version

__all__ = ["register_asyncio_tasks", "register_build_info", "register_runtime"]


def _tasks() -> float:
    try:
        return float(len(asyncio.all_tasks()))
    except RuntimeError:  # scraped from a thread without a running loop
        return float("nan")


def register_asyncio_tasks(registry: CollectorRegistry, *, prefix: str) -> None:
    """`<prefix>_asyncio_tasks`: the tasks alive on the event loop when /metrics is read."""
    Gauge(
        f"{prefix}_asyncio_tasks",
        "asyncio tasks alive on the event loop (flat in a healthy process).",
        registry=registry,
    ).set_function(_tasks)


class _GcPauses:
    """Wall-clock seconds the cycle collector held the process, by generation: while it runs,
    the event loop runs nothing else. One `gc.callbacks` hook per process."""

    def __init__(self) -> None:
        self.seconds = [0.0] * len(gc.get_threshold())
        self._started: float | None = None

    def install(self) -> None:
        if self._on_gc not in gc.callbacks:
            gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            self.seconds[info["generation"]] += time.perf_counter() - self._started
            self._started = None


_GC_PAUSES = _GcPauses()


class _GcPauseCollector(Collector):
    def __init__(self, prefix: str) -> None:
        self._name = f"{prefix}_gc_pause_seconds"

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            self._name,
            "Seconds the Python cycle collector stopped the process, by generation.",
            labels=["generation"],
        )
        for generation, seconds in enumerate(_GC_PAUSES.seconds):
            family.add_metric([str(generation)], seconds)
        yield family


def register_runtime(registry: CollectorRegistry, *, prefix: str) -> None:
    """What a long-running program exposes about itself: `<prefix>_asyncio_tasks`,
    `<prefix>_gc_pause_seconds_total{generation}`, and prometheus_client's standard
    `process_*` (CPU, RSS, open fds) and `python_gc_*` (collections, objects collected)."""
    register_asyncio_tasks(registry, prefix=prefix)
    _GC_PAUSES.install()
    registry.register(_GcPauseCollector(prefix))
    ProcessCollector(registry=registry)
    GCCollector(registry=registry)


def register_build_info(registry: CollectorRegistry, *, prefix: str) -> None:
    """`<prefix>_build_info{version, python_version} 1`, the usual build-info gauge: joined onto
    other series (`* on (instance) group_left(version)`) it shows which version said what."""
    Gauge(
        f"{prefix}_build_info",
        "Always 1; the labels say which promscaler version and Python this process runs.",
        ["version", "python_version"],
        registry=registry,
    ).labels(version(), platform.python_version()).set(1)
