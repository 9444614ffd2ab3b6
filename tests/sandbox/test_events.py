"""core/v1 and events.k8s.io/v1 Events are the same objects, as on a real cluster."""

import asyncio
from datetime import UTC, datetime

from kubernetes_asyncio import client


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
