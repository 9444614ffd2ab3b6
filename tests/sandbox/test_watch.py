"""Watch: initial events, resume from a resourceVersion, 410, selectors, bookmarks, timeouts."""

import asyncio
import json
import ssl

import aiohttp
import pytest
from kubernetes_asyncio import client, watch

from tests.support.sandbox import api_client_for

CMS = "/api/v1/namespaces/default/configmaps"


def cm(name, labels=None):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels), data={})


async def collect(stream, n, timeout=5.0):
    events = []

    async def run():
        async for event in stream:
            events.append(event)
            if len(events) == n:
                return

    await asyncio.wait_for(run(), timeout)
    return events


async def raw_watch(sb, path, *, limit=None, timeout=5.0):
    """(status, events) of a watch request read to its end (or `limit` events)."""
    ctx = ssl.create_default_context(cafile=str(sb.ca_file))
    headers = {"Authorization": f"Bearer {sb.admin_token}"}
    events = []
    async with (
        aiohttp.ClientSession() as session,
        session.get(sb.url + path, ssl=ctx, headers=headers) as resp,
    ):

        async def read():
            async for line in resp.content:
                if line.strip():
                    events.append(json.loads(line))
                    if limit and len(events) >= limit:
                        return

        await asyncio.wait_for(read(), timeout)
        return resp.status, events


async def test_watch_without_resource_version_starts_with_added_then_follows(kube_client):
    core = client.CoreV1Api(kube_client)
    await core.create_namespaced_config_map("default", cm("before"))
    w = watch.Watch()
    stream = w.stream(core.list_namespaced_config_map, "default", timeout_seconds=5)

    async def later():
        await asyncio.sleep(0.2)
        await core.create_namespaced_config_map("default", cm("after"))
        await core.patch_namespaced_config_map("after", "default", {"data": {"x": "1"}})
        await core.delete_namespaced_config_map("after", "default")

    task = asyncio.create_task(later())
    events = await collect(stream, 4)
    await task
    await w.close()
    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "before"),
        ("ADDED", "after"),
        ("MODIFIED", "after"),
        ("DELETED", "after"),
    ]


async def test_watch_resumes_from_resource_version(kube_client, sandbox):
    core = client.CoreV1Api(kube_client)
    first = await core.create_namespaced_config_map("default", cm("one"))
    await core.create_namespaced_config_map("default", cm("two"))
    await core.create_namespaced_config_map("default", cm("three"))
    rv = first.metadata.resource_version
    path = f"{CMS}?watch=true&resourceVersion={rv}&timeoutSeconds=1"
    status, events = await raw_watch(sandbox, path)
    assert status == 200
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "two"),
        ("ADDED", "three"),
    ]


async def test_too_old_resource_version_is_410_error_event(sandbox_factory):
    sb = await sandbox_factory(history=5)
    async with await api_client_for(sb) as api:
        core = client.CoreV1Api(api)
        for i in range(10):
            await core.create_namespaced_config_map("default", cm(f"c{i}"))
    status, events = await raw_watch(
        sb, "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=2"
    )
    assert status == 200
    assert len(events) == 1
    assert events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 410
    assert events[0]["object"]["reason"] == "Expired"
    assert "too old resource version" in events[0]["object"]["message"]


async def test_kubernetes_asyncio_watch_raises_410_on_expired(sandbox_factory):
    sb = await sandbox_factory(history=3)
    async with await api_client_for(sb) as api:
        core = client.CoreV1Api(api)
        for i in range(6):
            await core.create_namespaced_config_map("default", cm(f"c{i}"))
        with pytest.raises(client.exceptions.ApiException) as err:
            async for _ in watch.Watch().stream(
                core.list_namespaced_config_map, "default", resource_version="2", timeout_seconds=2
            ):
                pass
        assert err.value.status == 410


async def test_label_selector_watch_sees_objects_enter_and_leave(kube_client, sandbox):
    core = client.CoreV1Api(kube_client)
    await core.create_namespaced_config_map("default", cm("x", {"app": "a"}))
    start = (await core.list_namespaced_config_map("default")).metadata.resource_version
    await core.patch_namespaced_config_map("x", "default", {"metadata": {"labels": {"app": "b"}}})
    await core.patch_namespaced_config_map("x", "default", {"data": {"k": "v"}})
    await core.patch_namespaced_config_map("x", "default", {"metadata": {"labels": {"app": "a"}}})
    path = f"{CMS}?watch=1&labelSelector=app%3Db&resourceVersion={start}&timeoutSeconds=1"
    _, events = await raw_watch(sandbox, path)
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    assert events[-1]["object"]["metadata"]["labels"] == {"app": "b"}  # the last state it matched


async def test_field_selector_watch_on_one_name(kube_client, sandbox):
    core = client.CoreV1Api(kube_client)
    start = (await core.list_namespaced_config_map("default")).metadata.resource_version
    await core.create_namespaced_config_map("default", cm("wanted"))
    await core.create_namespaced_config_map("default", cm("other"))
    query = f"fieldSelector=metadata.name%3Dwanted&resourceVersion={start}&timeoutSeconds=1"
    path = f"{CMS}?watch=1&{query}"
    _, events = await raw_watch(sandbox, path)
    assert [e["object"]["metadata"]["name"] for e in events] == ["wanted"]


@pytest.mark.parametrize("flag", ["true", "True", "1"])
async def test_watch_flag_spellings_and_timeout(sandbox, flag):
    loop = asyncio.get_running_loop()
    start = loop.time()
    status, events = await raw_watch(sandbox, f"/api/v1/namespaces?watch={flag}&timeoutSeconds=1")
    assert status == 200
    assert {e["object"]["metadata"]["name"] for e in events} >= {"default", "kube-system"}
    assert 0.9 <= loop.time() - start < 3


async def test_bookmarks_when_asked(sandbox_factory):
    sb = await sandbox_factory(bookmark_interval=0.2)
    rv = str(sb.store.rv)
    query = f"allowWatchBookmarks=true&resourceVersion={rv}&timeoutSeconds=1"
    path = f"/api/v1/namespaces/default/pods?watch=1&{query}"
    _, events = await raw_watch(sb, path)
    assert events
    assert all(e["type"] == "BOOKMARK" for e in events)
    assert events[0]["object"]["kind"] == "Pod"
    assert int(events[0]["object"]["metadata"]["resourceVersion"]) >= int(rv)


async def test_send_initial_events_ends_with_marked_bookmark(sandbox):
    query = "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
    path = f"/api/v1/namespaces?watch=1&{query}&timeoutSeconds=1"
    _, events = await raw_watch(sandbox, path, limit=5)
    assert [e["type"] for e in events[:4]] == ["ADDED"] * 4
    assert events[4]["type"] == "BOOKMARK"
    assert events[4]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_disconnected_watchers_are_released_and_server_keeps_serving(sandbox, kube_client):
    core = client.CoreV1Api(kube_client)
    ctx = ssl.create_default_context(cafile=str(sandbox.ca_file))
    headers = {"Authorization": f"Bearer {sandbox.admin_token}"}
    for _ in range(20):
        async with aiohttp.ClientSession() as session:
            resp = await session.get(sandbox.url + "/api/v1/pods?watch=1", ssl=ctx, headers=headers)
            resp.close()  # drop the connection mid-stream, without reading
    for _ in range(50):
        if sandbox.store.subscriber_count() == 0:
            break
        await core.create_namespaced_config_map("default", cm(f"poke-{_}"))
        await asyncio.sleep(0.05)
    assert sandbox.store.subscriber_count() == 0
    assert (await core.list_namespace()).items


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/v1/watch/namespaces/default/configmaps/one", id="watch-prefix"),
        pytest.param(f"{CMS}/one?watch=true", id="named-with-watch-param"),
    ],
)
async def test_watch_one_named_object(kube_client, sandbox, path):
    core = client.CoreV1Api(kube_client)
    await core.create_namespaced_config_map("default", cm("one"))
    await core.create_namespaced_config_map("default", cm("two"))
    sep = "&" if "?" in path else "?"
    _, events = await raw_watch(sandbox, f"{path}{sep}timeoutSeconds=1")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "one")]
