"""The controller's Event recorder: aggregation as client-go's (a repeat bumps `count`), a bounded
memory of keys, and failures that never reach the reconcile."""

from __future__ import annotations

import tracemalloc
from typing import Any

from autoscaler.kube.client import KubeError, KubeUnavailable, NotFound
from autoscaler.kube.events import EventRecorder


class Kube:
    """Records requests; `fail` maps (method, path prefix) to the error to raise once."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.fail: dict[str, KubeError] = {}

    async def request(self, method: str, path: str, *, body: Any = None, **_: Any) -> dict:
        self.calls.append((method, path, body))
        error = self.fail.pop(method, None)
        if error is not None:
            raise error
        return {}


def autoscaler(name: str = "web", uid: str = "u-1") -> dict:
    return {
        "apiVersion": "promscaler.dev/v1alpha1",
        "kind": "Autoscaler",
        "metadata": {"name": name, "namespace": "shop", "uid": uid},
    }


async def test_a_repeat_bumps_the_count_and_a_new_message_is_a_new_event():
    kube = Kube()
    rec = EventRecorder(kube, component="promscaler")  # type: ignore[arg-type]
    for _ in range(3):
        await rec.record(autoscaler(), type_="Normal", reason="SuccessfulRescale", message="a")
    await rec.record(autoscaler(), type_="Normal", reason="SuccessfulRescale", message="b")
    await rec.record(autoscaler(uid="u-2"), type_="Normal", reason="SuccessfulRescale", message="a")
    assert [m for m, _, _ in kube.calls] == ["POST", "PATCH", "PATCH", "POST", "POST"]
    first = kube.calls[0][2]
    assert first["metadata"]["name"].startswith("web.")
    assert first["count"] == 1
    assert first["message"] == "a"
    assert kube.calls[1][1].endswith("/events/" + first["metadata"]["name"])
    assert [c[2]["count"] for c in kube.calls[1:3]] == [2, 3]


async def test_keys_do_not_run_into_each_other():
    """Parts are length-prefixed: ("ab", "c") and ("a", "bc") are different keys."""
    kube = Kube()
    rec = EventRecorder(kube, component="promscaler")  # type: ignore[arg-type]
    await rec.record(autoscaler(), type_="Normal", reason="ab", message="c")
    await rec.record(autoscaler(), type_="Normal", reason="a", message="bc")
    assert [m for m, _, _ in kube.calls] == ["POST", "POST"]


async def test_the_oldest_key_is_forgotten_past_the_limit():
    kube = Kube()
    rec = EventRecorder(kube, component="promscaler", max_keys=3)  # type: ignore[arg-type]
    for message in ("a", "b", "c", "d", "a", "d"):
        await rec.record(autoscaler(), type_="Warning", reason="R", message=message)
    # "a" was forgotten when "d" came, so it is created again; "d" is still known
    assert [m for m, _, _ in kube.calls] == ["POST"] * 5 + ["PATCH"]


async def test_an_expired_event_is_created_again_and_failures_are_dropped(caplog):
    kube = Kube()
    rec = EventRecorder(kube, component="promscaler")  # type: ignore[arg-type]
    await rec.record(autoscaler(), type_="Normal", reason="R", message="m")
    kube.fail["PATCH"] = NotFound(404, "NotFound", "events gone")  # past the event TTL
    await rec.record(autoscaler(), type_="Normal", reason="R", message="m")
    assert [m for m, _, _ in kube.calls] == ["POST", "PATCH", "POST"]
    kube.fail["POST"] = KubeUnavailable(0, "Unavailable", "connection refused")
    await rec.record(autoscaler(), type_="Warning", reason="Other", message="m")  # no raise
    assert "event Other on shop/web not recorded" in caplog.text


async def _held_per_key(length: int) -> float:
    kube = Kube()
    kube.request = _answer_only  # type: ignore[method-assign]
    rec = EventRecorder(kube, component="promscaler")  # type: ignore[arg-type]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(4096):
            message = f"{i:05d}" + "x" * (length - 5)
            await rec.record(
                autoscaler(), type_="Warning", reason="FailedGetMetric", message=message
            )
        return (tracemalloc.get_traced_memory()[0] - before) / 4096
    finally:
        tracemalloc.stop()


async def test_remembered_keys_do_not_keep_their_messages():
    """4,096 keys (the limit): what the recorder holds per key does not grow with the message
    (the text is freed once the Event is written), and stays a few hundred bytes."""
    short, long = await _held_per_key(100), await _held_per_key(1000)
    assert long - short < 50, (
        f"{short:.0f} bytes per key with 100-character messages, {long:.0f} with 1,000"
    )
    assert long < 400


async def _answer_only(method: str, path: str, **kw: Any) -> dict:
    return {}
