"""The asyncio task gauge both programs expose on /metrics."""

import asyncio

from prometheus_client import CollectorRegistry

from common.runtimemetrics import register_asyncio_tasks


def value(registry: CollectorRegistry) -> float | None:
    return registry.get_sample_value("demo_asyncio_tasks")


async def test_counts_the_tasks_alive_on_the_loop():
    registry = CollectorRegistry()
    register_asyncio_tasks(registry, prefix="demo")
    before = value(registry)
    sleepers = [asyncio.create_task(asyncio.sleep(10)) for _ in range(3)]
    assert value(registry) == before + 3
    for task in sleepers:
        task.cancel()
    await asyncio.gather(*sleepers, return_exceptions=True)
    assert value(registry) == before


def test_outside_a_loop_it_is_nan_not_an_error():
    registry = CollectorRegistry()
    register_asyncio_tasks(registry, prefix="demo")
    assert value(registry) != value(registry)  # NaN
