"""The rendered-answer cache keeps bodies of their own size, for their time to live."""

from __future__ import annotations

import tracemalloc

import orjson

from adapter.server.responses import ResponseCache


def _body(i: int) -> bytes:
    items = [{"describedObject": {"kind": "Pod", "name": f"web-{n:03d}"}} for n in range(100)]
    return orjson.dumps({"request": i, "items": items})


def test_kept_bodies_hold_no_encoder_buffer_and_come_back_equal() -> None:
    now = [0.0]
    cache = ResponseCache(ttl=5, clock=lambda: now[0])
    size = 0
    tracemalloc.start()
    try:
        for i in range(200):
            body = _body(i)  # made and let go here: what stays is what the cache holds
            size += len(body)
            cache.put(f"/k{i}", "custom_selector", body)
        del body
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 1.3 * size  # the copies; orjson's own buffers are 2.5 times the bytes
    assert cache.get("/k7") == ("custom_selector", _body(7))
    now[0] = 5.0
    assert cache.get("/k7") is None  # gone once its time is up
