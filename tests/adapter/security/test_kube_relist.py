"""list_and_watch against a scripted API server: resume after a watch ends, relist on 410."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web

from adapter.kube import KubeClient, KubeObjects
from adapter.kubewatch import list_and_watch
from adapter.rules.resources import STATIC_RESOLVER
from common.selectors import parse_selector
from tests.adapter.security.harness import free_port


def pod(name: str, rv: int, labels: dict[str, str]) -> dict:
    return {
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv), "labels": labels}
    }


class ScriptedApi:
    """LIST answers the current pods; each WATCH plays the next scripted reply."""

    def __init__(self, watches: list[tuple[int, list[dict]]]) -> None:
        self.pods = {"a": pod("a", 1, {"app": "x"})}
        self.version = 1
        self.watches = watches  # (HTTP status, events) per WATCH call, in order
        self.calls: list[tuple[str, str]] = []
        self.gate = asyncio.Event()  # WATCH replies wait for it
        self.gate.set()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") != "true":
            self.calls.append(("LIST", ""))
            body = {
                "kind": "PodList",
                "metadata": {"resourceVersion": str(self.version)},
                "items": list(self.pods.values()),
            }
            return web.json_response(body)
        self.calls.append(("WATCH", request.query.get("resourceVersion", "")))
        await self.gate.wait()
        if not self.watches:
            await asyncio.sleep(30)  # a quiet watch: the test ends first
            return web.Response()
        status, events = self.watches.pop(0)
        if status != 200:
            return web.json_response({"kind": "Status", "code": status}, status=status)
        response = web.StreamResponse()
        await response.prepare(request)
        for event in events:
            await response.write(json.dumps(event).encode() + b"\n")
        await response.write_eof()
        return response


async def start(api: ScriptedApi, tmp_path):
    app = web.Application()
    app.router.add_get("/api/v1/pods", api.handle)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
    )
    return runner, KubeClient(str(kubeconfig))


@pytest.mark.parametrize(
    "expiry",
    [
        pytest.param(
            (200, [{"type": "ERROR", "object": {"kind": "Status", "code": 410}}]),
            id="error-event-410",
        ),
        pytest.param((410, []), id="http-410"),
    ],
)
async def test_a_watch_resumes_from_its_version_and_relists_when_gone(tmp_path, expiry):
    api = ScriptedApi(
        watches=[
            (
                200,
                [
                    {"type": "ADDED", "object": pod("b", 2, {"app": "x"})},
                    {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "7"}}},
                ],
            ),
            expiry,
        ]
    )
    runner, client = await start(api, tmp_path)
    stream = list_and_watch(client, "/api/v1/pods", query=[])
    try:
        kind, body = await anext(stream)
        assert (kind, [i["metadata"]["name"] for i in body["items"]]) == ("SYNC", ["a"])
        kind, obj = await anext(stream)
        assert (kind, obj["metadata"]["name"]) == ("ADDED", "b")
        api.pods = {"c": pod("c", 9, {})}  # what changed while the watch was gone
        api.version = 9
        kind, body = await asyncio.wait_for(anext(stream), 5)
        assert (kind, [i["metadata"]["name"] for i in body["items"]]) == ("SYNC", ["c"])
        # first watch from the LIST's version, then resumed from the bookmark, then relisted
        assert api.calls[:4] == [("LIST", ""), ("WATCH", "1"), ("WATCH", "7"), ("LIST", "")]
    finally:
        await stream.aclose()
        await client.close()
        await runner.cleanup()


async def test_the_cache_replaces_its_content_on_relist(tmp_path):
    api = ScriptedApi(watches=[(410, [])])
    api.gate.clear()  # the watch expires only once the cluster has changed
    runner, client = await start(api, tmp_path)
    objects = KubeObjects(client)
    pods = STATIC_RESOLVER.resolve("pods")
    everything = parse_selector("")
    try:
        assert await objects.names(pods, namespace="ns", selector=everything) == ["a"]
        api.pods = {"c": pod("c", 9, {})}
        api.version = 9
        api.gate.set()

        for _ in range(100):
            if await objects.names(pods, namespace="ns", selector=everything) == ["c"]:
                break
            await asyncio.sleep(0.05)
        assert await objects.names(pods, namespace="ns", selector=everything) == ["c"]
    finally:
        await objects.close()
        await client.close()
        await runner.cleanup()
