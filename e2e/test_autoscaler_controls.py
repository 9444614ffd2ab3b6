"""The controls beyond the HPA (docs/autoscaler.md, controls.md) on the sandbox with a real
Prometheus and the real adapter: pause and paused-replicas, activation, the cooldowns,
schedules, conflicts and `kubectl describe` in one stack; fallback (Prometheus hung, the
APIService pointed at nothing, a metric failing every other pass) in another.

Each stack runs its scenarios side by side under one controller with 1 s sync periods, each on
its own Deployment and queue, so the whole file costs about as long as its slowest scenario.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from autoscaler.kube import KubeError
from tests.controller.stack import (
    CRD,
    STALE_NAN,
    Stack,
    e2e_stack,
    eventually,
    external_metric,
    target_ref,
)


def _crd_has_controls() -> bool:
    schema = yaml.safe_load(CRD.read_text())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec, status = schema["properties"]["spec"], schema["properties"]["status"]
    preserved = spec.get("x-kubernetes-preserve-unknown-fields") and status.get(
        "x-kubernetes-preserve-unknown-fields"
    )
    return bool(preserved) or (
        "fallback" in spec.get("properties", {}) and "metricHealth" in status.get("properties", {})
    )


pytestmark = [
    pytest.mark.e2e,
    pytest.mark.prometheus,
    pytest.mark.skipif(
        not _crd_has_controls(),
        reason="needs the Autoscaler CRD with the controls' fields (spec.fallback, "
        "status.metricHealth, ...): without them the API server prunes what the controls persist",
    ),
]

SYNC = 1.0  # seconds: the controller's sync period in these tests
FAST_UP = {
    "stabilizationWindowSeconds": 0,
    "policies": [{"type": "Pods", "value": 10, "periodSeconds": 1}],
}
QUICK = {  # both directions at once: the controls, not the HPA's windows, are under test
    "scaleUp": FAST_UP,
    "scaleDown": {
        "stabilizationWindowSeconds": 0,
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}],
    },
}
ONE_BY_ONE = {  # scale down one pod per second: the steps N -> 1 can be seen
    "scaleUp": FAST_UP,
    "scaleDown": {
        "stabilizationWindowSeconds": 0,
        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 1}],
    },
}


def spec(target: str, queue: str, **extra: Any) -> dict[str, Any]:
    metric = external_metric(queue)
    if "activation" in extra:
        metric["activation"] = extra.pop("activation")
    base = {
        "scaleTargetRef": target_ref(target),
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [metric],
        "behavior": QUICK,
    }
    return {**base, **extra}


async def holds(check: Callable[[], Awaitable[Any]], seconds: float, what: str) -> None:
    """`check` stays truthy for `seconds` (polled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert await check(), f"{what} stopped holding"
        await asyncio.sleep(0.2)


def replicas(st: Stack, name: str, want: int) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return await st.replicas(name) == want

    return check


async def events(st: Stack, name: str, reason: str) -> list[dict[str, Any]]:
    return [e for e in await st.events(name) if e["reason"] == reason]


def event(st: Stack, name: str, reason: str) -> Callable[[], Awaitable[list[dict[str, Any]]]]:
    return lambda: events(st, name, reason)


def condition(st: Stack, name: str, type_: str, status: str, reason: str = ""):
    async def check() -> dict[str, Any] | None:
        c = await st.condition(name, type_)
        ok = c.get("status") == status and (not reason or c.get("reason") == reason)
        return c if ok else None

    return check


async def status_field(st: Stack, name: str, key: str) -> Any:
    return ((await st.get_autoscaler(name)).get("status") or {}).get(key)


# ---- stack 1: pause, activation, cooldowns, schedules, conflicts, describe -------------------
async def pause(st: Stack) -> None:
    await st.queue("pause", 55)  # 55 against 10 per pod: 6 replicas when free to act
    await st.deployment("paused", 2)
    obj = spec("paused", "pause")
    await st.create(
        f"/apis/promscaler.dev/v1alpha1/namespaces/{st.namespace}/autoscalers",
        {
            "apiVersion": "promscaler.dev/v1alpha1",
            "kind": "Autoscaler",
            "metadata": {"name": "paused", "annotations": {"promscaler.dev/paused": "true"}},
            "spec": obj,
        },
    )

    async def would_do_6() -> bool:
        return await status_field(st, "paused", "desiredReplicas") == 6

    await eventually(would_do_6, timeout=10, what="status says what it would do")
    await eventually(condition(st, "paused", "Paused", "True", "PausedByAnnotation"), timeout=5)
    await eventually(event(st, "paused", "Paused"), timeout=5, what="Paused event")
    await holds(replicas(st, "paused", 2), 3.5 * SYNC, "no /scale write while paused")

    await st.annotate("paused", {"promscaler.dev/paused": None})
    await eventually(replicas(st, "paused", 6), timeout=5, what="unpaused: 6")
    await eventually(event(st, "paused", "Unpaused"), timeout=5, what="Unpaused event")

    await st.annotate("paused", {"promscaler.dev/paused-replicas": "3"})
    await eventually(replicas(st, "paused", 3), timeout=5, what="paused-replicas: 3")
    await st.scale("paused", 5)  # someone else scales it
    started = time.monotonic()
    await eventually(replicas(st, "paused", 3), timeout=3 * SYNC, what="drift repaired")
    repaired = time.monotonic() - started
    assert repaired <= SYNC * 1.5, f"drift repaired in {repaired:.1f}s, over a sync period"

    await st.annotate(
        "paused", {"promscaler.dev/paused-replicas": None, "promscaler.dev/paused": "maybe"}
    )
    (warning, *_) = await eventually(event(st, "paused", "InvalidAnnotation"), timeout=5)
    assert warning["type"] == "Warning"
    assert "maybe" in warning["message"]
    # never a guess: the last valid state (held at 3) is kept, and the condition says why
    cond = await eventually(
        condition(st, "paused", "Paused", "True", "InvalidAnnotation"), timeout=5
    )
    assert "promscaler.dev/paused" in cond["message"]
    assert "kept paused at 3 replicas" in cond["message"]
    await holds(replicas(st, "paused", 3), SYNC, "a bad value changes nothing")


async def activation(st: Stack) -> None:
    await st.queue("wake", 5)  # at the threshold: not active
    await st.deployment("sleeper", 0)
    await st.autoscaler(
        "sleeper",
        spec(
            "sleeper",
            "wake",
            minReplicas=0,
            activation={"threshold": "5"},
            scaleToZero={"cooldownSeconds": 2},
        ),
    )
    await eventually(lambda: status_field(st, "sleeper", "metricHealth"), timeout=10)
    await holds(replicas(st, "sleeper", 0), 10 * SYNC, "at the threshold it stays asleep")

    await st.queue("wake", 6)  # just above
    woke = time.monotonic()
    await eventually(replicas(st, "sleeper", 1), timeout=3, what="woken")
    assert time.monotonic() - woke <= 2.5, "woke within 2 s (plus the poll)"

    await st.queue("wake", 3)  # between 0 and the threshold: inactive, yet a value
    calm = time.monotonic()
    await eventually(replicas(st, "sleeper", 0), timeout=10, what="back to zero")
    assert time.monotonic() - calm >= 2 - SYNC, "not before the 2 s cooldown"


async def cooldown(st: Stack) -> None:
    await st.queue("cool", 50)
    await st.deployment("cool", 5)
    await st.autoscaler(
        "cool",
        spec(
            "cool", "cool", minReplicas=0, behavior=ONE_BY_ONE, scaleToZero={"cooldownSeconds": 6}
        ),
    )
    await eventually(lambda: status_field(st, "cool", "lastActiveTime"), timeout=10, what="active")
    await st.queue("cool", 0)
    calm = time.monotonic()
    seen: list[tuple[float, int]] = []
    while not seen or seen[-1][1] != 0:
        assert time.monotonic() - calm < 20, f"never reached 0: {seen}"
        n = await st.replicas("cool")
        if not seen or seen[-1][1] != n:
            seen.append((time.monotonic() - calm, n))
        await asyncio.sleep(0.1)
    assert [n for _, n in seen] == [5, 4, 3, 2, 1, 0], "N -> 1 under behavior, then 1 -> 0"
    at_one, at_zero = seen[-2][0], seen[-1][0]
    assert at_zero >= 6 - SYNC, f"1 -> 0 at {at_zero:.1f}s, before the 6 s cooldown"
    assert at_zero > at_one


async def initial_cooldown(st: Stack) -> None:
    await st.queue("fresh", 0)
    await st.deployment("fresh", 1)
    await st.autoscaler(
        "fresh",
        spec(
            "fresh",
            "fresh",
            minReplicas=0,
            scaleToZero={"cooldownSeconds": 1, "initialCooldownSeconds": 6},
        ),
    )
    made = time.monotonic()
    await holds(replicas(st, "fresh", 1), 4, "a new Autoscaler's target held up")
    await eventually(replicas(st, "fresh", 0), timeout=8, what="zero after the initial cooldown")
    assert time.monotonic() - made >= 6 - SYNC


async def schedules(st: Stack) -> None:
    """A window opening at the next minute (`* * * * *` in UTC, 6 s long), the Autoscaler made
    10-15 s before it: the floor rises when it opens and falls when it closes. (Cron has a
    minute's grain, so the test first waits for second :45 of the wall clock.)"""
    second = datetime.now(UTC).second + datetime.now(UTC).microsecond / 1e6
    await asyncio.sleep((45 - second) % 60)  # create at :45..:50 (a minute's cron grain)
    await st.queue("sched", 5)  # 1 replica by the metric
    await st.deployment("sched", 1)
    window = {"name": "tick", "schedule": "* * * * *", "duration": "6s", "minReplicas": 4}
    await st.autoscaler("sched", spec("sched", "sched", schedules=[window]))
    opens = 60 - datetime.now(UTC).second
    assert 9 <= opens <= 16, "made 10-15 s before the window"
    await holds(replicas(st, "sched", 1), opens - 2, "floor not raised before the window")
    await eventually(replicas(st, "sched", 4), timeout=5, what="floor raised at :00")
    started = await eventually(event(st, "sched", "ScheduleStarted"), timeout=3)
    assert "tick" in started[0]["message"]
    await eventually(replicas(st, "sched", 1), timeout=10, what="floor lowered at :06")
    await eventually(event(st, "sched", "ScheduleEnded"), timeout=3)


async def conflicts(st: Stack, caplog: pytest.LogCaptureFixture) -> None:
    await st.queue("shared", 55)
    await st.deployment("shared", 1)
    await st.autoscaler("first", spec("shared", "shared"))  # 55/10: 6
    await asyncio.sleep(1.1)  # creationTimestamp has seconds: make "second" visibly newer
    second = spec("shared", "shared")
    second["metrics"] = [external_metric("shared", average="20")]  # 55/20: 3
    await st.autoscaler("second", second)
    await eventually(replicas(st, "shared", 6), timeout=10, what="the first acts")
    cond = await eventually(
        condition(st, "second", "AbleToScale", "False", "AmbiguousTarget"), timeout=5
    )
    assert "Autoscaler first" in cond["message"]
    (warning, *_) = await eventually(event(st, "second", "AmbiguousTarget"), timeout=5)
    assert warning["type"] == "Warning"
    await holds(replicas(st, "shared", 6), 2.5 * SYNC, "the second writes nothing")
    assert not await events(st, "second", "SuccessfulRescale")

    text = await describe(st, "second")
    needles = ("AmbiguousTarget", "Autoscaler first", "Desired Replicas", "Events:", "Warning")
    # the decision explained: what it would do (55/20 -> 3) and why it does not
    needles += ("Decision:", "in conflict, nothing written", "proposes 3")
    for needle in needles:
        assert needle in text, f"{needle!r} not in kubectl describe:\n{text}"

    await st.delete_autoscaler("first")
    await eventually(replicas(st, "shared", 3), timeout=3 * SYNC, what="the second takes over")
    await eventually(condition(st, "second", "AbleToScale", "True"), timeout=5)

    if not await hpas_served(st):  # that half of the check is skipped, and the log says so
        assert any("HPA conflict check off" in r.getMessage() for r in caplog.records)
        return
    # an autoscaling/v2 HPA on the same Deployment always wins; it asks for the same 3
    # replicas, so an HPA controller acting on it does not fight the assertions
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "native"},
        "spec": {**second, "behavior": QUICK},
    }
    hpa["spec"].pop("schedules", None)
    hpas = f"/apis/autoscaling/v2/namespaces/{st.namespace}/horizontalpodautoscalers"
    await st.create(hpas, hpa)
    cond = await eventually(
        condition(st, "second", "AbleToScale", "False", "AmbiguousTarget"), timeout=5
    )
    assert "HorizontalPodAutoscaler native" in cond["message"]
    await st.kube.request("DELETE", f"{hpas}/native")
    await eventually(condition(st, "second", "AbleToScale", "True"), timeout=5)


async def hpas_served(st: Stack) -> bool:
    try:
        doc = await st.kube.request("GET", "/apis/autoscaling/v2")
    except KubeError:  # not served at all
        return False
    return any(r.get("name") == "horizontalpodautoscalers" for r in doc.get("resources", []))


async def describe(st: Stack, name: str) -> str:
    out = await asyncio.to_thread(
        subprocess.run,
        [
            "kubectl",
            "--kubeconfig",
            str(st.kubeconfig),
            "-n",
            st.namespace,
            "describe",
            "pas",
            name,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture
async def stack(tmp_path):
    # the adapter gives up on a hung Prometheus after 1 s, so a pass fails fast
    async with e2e_stack(tmp_path, adapter_args=("--prometheus-timeout", "1s")) as s:
        yield s


async def test_pause_activation_cooldowns_schedules_and_conflicts(stack: Stack, caplog):
    caplog.set_level(logging.INFO, logger="autoscaler.app")
    st = stack
    async with st.controller():
        await asyncio.gather(
            pause(st),
            activation(st),
            cooldown(st),
            initial_cooldown(st),
            schedules(st),
            conflicts(st, caplog),
        )


# ---- stack 2: fallback ------------------------------------------------------------------------
FALLBACK = {"failureThreshold": 2, "recoveryThreshold": 2, "replicas": 4}


async def rescales(st: Stack, name: str) -> int:
    return sum(int(e.get("count") or 1) for e in await events(st, name, "SuccessfulRescale"))


async def test_fallback_on_a_hung_prometheus_an_unavailable_apiservice_and_flapping(
    stack: Stack,
):
    st = stack
    if st.prometheus is None:
        pytest.skip("needs the sandbox's own Prometheus (SIGSTOP) and APIService to repoint")
    await st.queue("fb", 15)  # 15/10: 2 replicas
    await st.queue("fb0", 0)
    await st.queue("hold", 55)
    for name, n in (("fb", 2), ("fb0", 0), ("hold", 6), ("flap", 3)):
        await st.deployment(name, n)
    await st.write("e2e_backlog", BACKLOG, 25)  # 25/10: 3 replicas
    for name in ("fb", "fb0", "hold"):
        # the adapter up and the series discovered: no failure before the test's own
        await eventually(lambda n=name: st.queue_served(n), timeout=20, what=f"{name} served")
    await st.autoscaler("fb", spec("fb", "fb", fallback=FALLBACK))
    await st.autoscaler(
        "fb0",
        spec("fb0", "fb0", minReplicas=0, activation={"threshold": "0"}, fallback=FALLBACK),
    )
    await st.autoscaler("hold", spec("hold", "hold"))  # no fallback block: as the HPA
    # through custom.metrics.k8s.io, so the external APIService's outage leaves it alone
    await st.autoscaler(
        "flap", {**spec("flap", "flap", fallback=FALLBACK), "metrics": [BACKLOG_METRIC]}
    )
    async with st.controller():
        for name in ("fb", "fb0", "flap"):
            await eventually(
                lambda n=name: healthy(st, n), timeout=15, what=f"{name} reads its metric"
            )
        await asyncio.gather(flapping(st), unavailable_apiservice(st))
        await eventually(replicas(st, "fb0", 0), timeout=10, what="fb0 back asleep")
        await hung_prometheus(st)


BACKLOG = {"namespace": "default", "deployment": "flap"}
BACKLOG_METRIC = {
    "type": "Object",
    "object": {
        "describedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "flap"},
        "metric": {"name": "e2e_backlog"},
        "target": {"type": "AverageValue", "averageValue": "10"},
    },
}


async def healthy(st: Stack, name: str) -> bool:
    health = await status_field(st, name, "metricHealth") or [{}]
    return health[0].get("consecutiveSuccesses", 0) >= 1


async def flapping(st: Stack) -> None:
    """A metric gone every other pass: never 3 failures in a row, so no fallback, no rescale."""
    before = await rescales(st, "flap")
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        await st.write("e2e_backlog", BACKLOG, STALE_NAN)  # the series ends: the metric fails
        await asyncio.sleep(SYNC)
        await st.write("e2e_backlog", BACKLOG, 25)
        await asyncio.sleep(SYNC)
    assert await rescales(st, "flap") == before, [
        (e["reason"], e["message"], e.get("count")) for e in await st.events("flap")
    ]
    assert await st.replicas("flap") == 3
    failed = await events(st, "flap", "FailedGetObjectMetric")
    assert sum(int(e.get("count") or 1) for e in failed) >= 2, "it did fail, repeatedly"
    health = (await status_field(st, "flap", "metricHealth"))[0]
    assert health["fallback"] is False


async def unavailable_apiservice(st: Stack) -> None:
    """The external metrics APIService pointed at a Service that does not exist."""
    await st.point_apiservice("v1beta1.external.metrics.k8s.io", "nothing-here")
    try:
        await eventually(replicas(st, "fb", 4), timeout=15, what="fallback (APIService)")
        await eventually(replicas(st, "fb0", 4), timeout=5, what="woken by fallback")
        fb = (await status_field(st, "fb", "metricHealth"))[0]
        assert fb["lastReason"] in ("ServiceUnavailable", "NotFound", "Unavailable"), fb
        assert await st.replicas("hold") == 6, "no fallback block: no scale-down"
    finally:
        await st.point_apiservice("v1beta1.external.metrics.k8s.io", "adapter")
    await eventually(replicas(st, "fb", 2), timeout=15, what="recovered")


async def hung_prometheus(st: Stack) -> None:
    st.freeze_prometheus(True)
    try:
        froze = time.monotonic()
        await eventually(replicas(st, "fb", 4), timeout=15, what="fallback replicas")
        await eventually(replicas(st, "fb0", 4), timeout=5, what="woken by fallback")
        # more than 2 failed passes of about 1 s each (the adapter gives up after 1 s)
        assert time.monotonic() - froze >= 2 * SYNC
        cond = await eventually(condition(st, "fb", "Fallback", "True"), timeout=5)
        assert cond["reason"] == "MetricsFailing"
        (warning, *_) = await eventually(event(st, "fb", "FallbackActivated"), timeout=5)
        assert warning["type"] == "Warning"
        assert await st.replicas("hold") == 6, "no fallback block: no scale-down"
    finally:
        st.freeze_prometheus(False)
    thawed = time.monotonic()
    await eventually(replicas(st, "fb", 2), timeout=15, what="recovered: 2")
    assert time.monotonic() - thawed >= 0.9 * SYNC, "two good passes in a row take a period"
    await eventually(event(st, "fb", "FallbackDeactivated"), timeout=5)

    async def recovered() -> dict[str, Any] | None:  # the event comes before the pass's status
        health = (await status_field(st, "fb", "metricHealth"))[0]
        return health if health["fallback"] is False else None

    health = await eventually(recovered, timeout=5, what="metricHealth out of fallback")
    assert health["consecutiveSuccesses"] >= FALLBACK["recoveryThreshold"]
