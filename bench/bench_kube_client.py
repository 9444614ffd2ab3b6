"""The controller's CPU per API request: kubernetes-asyncio's `call_api` against the direct send
`autoscaler.kube.client.KubeClient` uses (the same session, token and JSON handling).

    .venv/bin/python bench/bench_kube_client.py [--rounds 10] [--requests 2000]

A pass of the controller is mostly one metric read (a GET with a label selector) and, now and
then, a status merge-patch; the load here is that mix (one PATCH of a 1.2 KB status per three
requests), 16 at a time, against a server in a child process that answers each with a 1 KB
JSON object. Plain HTTP on 127.0.0.1: TLS costs the same on both paths, so leaving it out shows
the difference more clearly. The two paths run in alternating rounds in one process; printed
is this process's CPU time per request (the server's is not counted), the median over rounds,
on the controller's event loop (uvloop where installed).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autoscaler.kube.client import MERGE_PATCH, KubeClient, connect
from bench import record
from common import eventloop

METRIC = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/team-a/pods/%2A/http_requests"
STATUS = "/apis/promscaler.dev/v1alpha1/namespaces/team-a/autoscalers/web/status"
SELECTOR = [("labelSelector", "app=web,tier in (frontend,edge)")]
PATCH = {
    "status": {
        "currentReplicas": 7,
        "desiredReplicas": 8,
        "conditions": [
            {
                "type": t,
                "status": "True",
                "reason": "ReadyForNewScale",
                "message": "the last scale time was sufficiently old as to warrant a new scale",
                "lastTransitionTime": "2026-12-01T03:12:00Z",
            }
            for t in ("AbleToScale", "ScalingActive", "ScalingLimited")
        ],
        "history": {"recommendations": [[f"2026-12-01T03:{m:02d}:00Z", 7] for m in range(20)]},
    }
}
ANSWER = orjson.dumps(
    {"kind": "Answer", "items": [{"name": f"pod-{i}", "v": "1"} for i in range(40)]}
)


def _serve(port: int) -> None:
    from aiohttp import web

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=ANSWER, content_type="application/json")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def call_api_path(client: KubeClient) -> Callable[[int], Awaitable[Any]]:
    """The former path: kubernetes-asyncio's call_api, then the same read and orjson parse; as
    before, without its walk of the body for OpenAPI models (we never send models)."""
    api = client._api
    api.sanitize_for_serialization = lambda obj: obj  # what the former ApiClient subclass did

    async def one(i: int) -> Any:
        patch = i % 3 == 2
        resp = await api.call_api(
            STATUS if patch else METRIC,
            "PATCH" if patch else "GET",
            query_params=[] if patch else list(SELECTOR),
            header_params={
                "Accept": "application/json",
                "Content-Type": MERGE_PATCH if patch else "application/json",
            },
            body=PATCH if patch else None,
            auth_settings=["BearerToken"],
            _preload_content=False,
            _request_timeout=10.0,
        )
        try:
            return orjson.loads(await resp.read())
        finally:
            resp.release()

    return one


def direct_path(client: KubeClient) -> Callable[[int], Awaitable[Any]]:
    async def one(i: int) -> Any:
        if i % 3 == 2:
            return await client.request("PATCH", STATUS, body=PATCH, content_type=MERGE_PATCH)
        return await client.request("GET", METRIC, query=SELECTOR)

    return one


async def _round(one: Callable[[int], Awaitable[Any]], n: int, clients: int) -> float:
    """CPU seconds of this process per request over n requests, `clients` at a time."""
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            answer = await one(i)
            assert answer.get("kind") == "Answer", answer

    started = time.process_time()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return (time.process_time() - started) / n


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="rounds per path (default 10)")
    parser.add_argument("--requests", type=int, default=2000, help="requests per round")
    parser.add_argument("--clients", type=int, default=16, help="requests in flight")
    record.add_json_option(parser)
    args = parser.parse_args()
    run = record.Run.begin(args)

    port = _free_port()
    server = multiprocessing.get_context("spawn").Process(target=_serve, args=(port,), daemon=True)
    server.start()
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\n"
            f'clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]\n'
            "users: [{name: u, user: {token: bench-token}}]\n"
            "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
        )
        client = await connect(str(kubeconfig))
        try:
            for _ in range(100):  # the server is up once it answers
                try:
                    await client.request("GET", "/healthz")
                    break
                except Exception:
                    await asyncio.sleep(0.1)
            paths = {"call_api": call_api_path(client), "direct": direct_path(client)}
            for one in paths.values():  # warm up: connections, caches
                await _round(one, 300, args.clients)
            cpu: dict[str, list[float]] = {name: [] for name in paths}
            for _ in range(args.rounds):
                for name, one in paths.items():
                    cpu[name].append(await _round(one, args.requests, args.clients))
        finally:
            await client.close()
            server.terminate()
    print(
        f"controller API client, CPU of this process per request ({args.rounds} rounds of "
        f"{args.requests}, {args.clients} in flight; GET with a selector, every third a PATCH):"
    )
    medians = {name: statistics.median(v) for name, v in cpu.items()}
    for name, values in cpu.items():
        spread = f"{min(values) * 1e6:.0f}-{max(values) * 1e6:.0f}"
        print(f"  {name:9s} median {medians[name] * 1e6:6.0f} us   (rounds: {spread} us)")
    print(f"  direct / call_api: {medians['direct'] / medians['call_api']:.2f}")
    for name in cpu:
        run.figure(
            f"{name}_us",
            f"{name}: CPU per request (median)",
            medians[name] * 1e6,
            "us",
            kind="time",
        )
    run.figure(
        "direct_over_call_api",
        "direct session against call_api, rounds alternating",
        medians["direct"] / medians["call_api"],
        "x",
        kind="ratio",
        decides="client-cost",
    )
    run.goal(
        "client-cost",
        "requests straight to the session cost less CPU than through call_api",
        figure="direct_over_call_api",
        met=medians["direct"] < medians["call_api"],
    )
    run.write()


if __name__ == "__main__":
    eventloop.run(main(), loop="auto")
