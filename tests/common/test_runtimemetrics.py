"""The runtime gauges both programs expose on /metrics: asyncio tasks, the cycle collector's
pauses, and prometheus_client's process and gc families."""

import asyncio
import gc

from prometheus_client import CollectorRegistry

from common.runtimemetrics import register_asyncio_tasks, register_runtime


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


def test_runtime_families_are_on_the_programs_registry():
    registry = CollectorRegistry()
    register_runtime(registry, prefix="demo")
    assert registry.get_sample_value("process_resident_memory_bytes") > 0
    assert registry.get_sample_value("python_gc_collections_total", {"generation": "2"}) >= 0
    before = registry.get_sample_value("demo_gc_pause_seconds_total", {"generation": "2"})
    gc.collect()  # a full pass, timed by the hook
    after = registry.get_sample_value("demo_gc_pause_seconds_total", {"generation": "2"})
    assert after > before


def test_two_registries_in_one_process_share_one_hook():
    first, second = CollectorRegistry(), CollectorRegistry()
    register_runtime(first, prefix="one")
    hooks = len(gc.callbacks)
    register_runtime(second, prefix="two")
    assert len(gc.callbacks) == hooks
    gc.disable()  # no automatic pass between the two reads
    try:
        gc.collect()
        one = first.get_sample_value("one_gc_pause_seconds_total", {"generation": "2"})
        two = second.get_sample_value("two_gc_pause_seconds_total", {"generation": "2"})
    finally:
        gc.enable()
    assert one == two > 0
