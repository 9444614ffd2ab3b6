"""Process gauges a Python program adds to its own registry: what a soak run watches for leaks."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry, Gauge

__all__ = ["register_asyncio_tasks"]


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
