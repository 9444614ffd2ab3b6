"""core/v1 and events.k8s.io/v1 Events are the same objects, as on a real cluster."""

import asyncio
from datetime import UTC, datetime

from kubernetes_asyncio import client

from sandbox.eventttl import EVENTS, EventExpiry
from sandbox.store import Store
from tests.support.sandbox import api_client_for


def events_v1(name):
    return client.EventsV1Event(
        metadata=client.V1ObjectMeta(name=name),
        event_time=datetime.now(UTC),
        reason="Rescaled",
        note="New size: 3; reason: cpu above target",
        type="Normal",
        action="Scale",
        reporting_controller="promscaler.io/autoscaler",
        reporting_instance="autoscaler-0",
        regarding=client.V1ObjectReference(
            kind="Deployment", name="web", namespace="default", api_version="apps/v1"
        ),
    )


async def test_written_as_events_k8s_io_read_as_core(kube_client):
    await client.EventsV1Api(kube_client).create_namespaced_event("default", events_v1("e1"))
    core = await client.CoreV1Api(kube_client).read_namespaced_event("e1", "default")
    assert core.involved_object.name == "web"
    assert core.message == "New size: 3; reason: cpu above target"
    assert core.reporting_component == "promscaler.io/autoscaler"
    by_object = await client.CoreV1Api(kube_client).list_namespaced_event(
        "default", field_selector="involvedObject.name=web,reason=Rescaled"
    )
    assert [e.metadata.name for e in by_object.items] == ["e1"]


async def test_written_as_core_read_as_events_k8s_io(kube_client):
    event = client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="e2"),
        involved_object=client.V1ObjectReference(kind="Pod", name="p", namespace="default"),
        reason="Started",
        message="hello",
        count=2,
        type="Normal",
        event_time=datetime.now(UTC),  # events.k8s.io/v1 requires it (clients reject null)
    )
    await client.CoreV1Api(kube_client).create_namespaced_event("default", event)
    api = client.EventsV1Api(kube_client)
    got = await api.read_namespaced_event("e2", "default")
    assert (got.regarding.name, got.note, got.deprecated_count) == ("p", "hello", 2)
    listed = await api.list_namespaced_event("default", field_selector="regarding.name=p")
    assert [e.metadata.name for e in listed.items] == ["e2"]
    patched = await api.patch_namespaced_event("e2", "default", {"note": "bye"})
    assert patched.note == "bye"
    assert (
        await client.CoreV1Api(kube_client).read_namespaced_event("e2", "default")
    ).message == "bye"


async def test_events_k8s_io_watch_sees_core_writes(kube_client, sandbox):
    from kubernetes_asyncio import watch

    api = client.EventsV1Api(kube_client)
    async with watch.Watch() as w:
        stream = w.stream(api.list_namespaced_event, "default", timeout_seconds=3)

        async def later():
            await asyncio.sleep(0.2)
            event = client.CoreV1Event(
                metadata=client.V1ObjectMeta(name="e3"),
                involved_object=client.V1ObjectReference(kind="Pod", name="p"),
                message="m",
                event_time=datetime.now(UTC),
            )
            await client.CoreV1Api(kube_client).create_namespaced_event("default", event)

        task = asyncio.create_task(later())
        async for event in stream:
            assert event["raw_object"]["apiVersion"] == "events.k8s.io/v1"
            assert event["raw_object"]["note"] == "m"
            break
        await task


# ---- --event-ttl: Events expire after their last write, as etcd's lease deletes them ----------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _event(name: str, message: str = "m") -> dict:
    return {"metadata": {"name": name, "namespace": "default"}, "message": message}


async def test_events_expire_ttl_after_their_last_write_and_watchers_see_deleted():
    store, clock = Store(), Clock()
    expiry = EventExpiry(store, ttl=60.0, clock=clock)
    sub = store.subscribe(EVENTS, None)
    store.put(EVENTS, _event("old"))
    store.put(EVENTS, _event("renewed"))
    store.put(("", "configmaps"), _event("not-an-event"))
    clock.now += 50
    store.put(EVENTS, _event("renewed", "again"))  # a write renews its lease
    clock.now += 10
    assert expiry.sweep() == 1
    assert store.get(EVENTS, "default", "old") is None
    assert store.get(EVENTS, "default", "renewed") is not None
    assert store.get(("", "configmaps"), "default", "not-an-event") is not None
    clock.now += 50
    assert expiry.sweep() == 1
    assert store.count(EVENTS) == 0
    changes = [sub.queue.get_nowait() for _ in range(sub.queue.qsize())]
    kinds = [(c.type, c.obj["metadata"]["name"]) for c in changes if c is not None]
    assert kinds[-2:] == [("DELETED", "old"), ("DELETED", "renewed")]


def test_an_event_deleted_by_hand_is_not_expired_again():
    store, clock = Store(), Clock()
    expiry = EventExpiry(store, ttl=5.0, clock=clock)
    store.put(EVENTS, _event("gone"))
    store.remove(EVENTS, "default", "gone")
    store.put(EVENTS, _event("gone", "a new one, same name"))
    clock.now += 3
    store.put(EVENTS, _event("gone", "written again"))
    clock.now += 3
    assert expiry.sweep() == 0  # the first deadline was superseded twice
    clock.now += 3
    assert expiry.sweep() == 1


async def test_the_sandbox_expires_events_through_its_api(sandbox_factory):
    sb = await sandbox_factory(event_ttl=0.5)
    api = await api_client_for(sb)
    try:
        core = client.CoreV1Api(api)
        await client.EventsV1Api(api).create_namespaced_event("default", events_v1("brief"))
        assert [e.metadata.name for e in (await core.list_namespaced_event("default")).items] == [
            "brief"
        ]
        for _ in range(60):
            if not (await core.list_namespaced_event("default")).items:
                break
            await asyncio.sleep(0.1)
        assert (await core.list_namespaced_event("default")).items == []
    finally:
        await api.close()
