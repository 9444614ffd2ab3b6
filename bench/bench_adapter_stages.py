"""Where the adapter's CPU per request goes, stage by stage. `python bench/bench_adapter_stages.py`

The request of `bench_adapter.py` section 1 (a wildcard over 100 pods, cache off, a real
Prometheus on 127.0.0.1) cut into its stages, each run `--rounds` times in this process and
timed with `time.process_time()`: CPU time, so what else the machine runs barely moves it.

- authn/authz: the delegated guard's `admit()` with warm caches, for the kube-aggregator's
  front-proxy certificate and X-Remote-* headers (the usual path) and AlwaysAllow;
- object names: the label selector over the 100 pods;
- the Prometheus call, client side: request build, send, response read and JSON parse (the
  real client against the real Prometheus), then the JSON parse and the reading of the points
  alone;
- result building: the provider's fetch on a ready answer, then its answer for the request's
  pods (a `CustomValues`: the points by name, not one MetricValue per pod);
- rendering and encoding as the server does them (`metric_value_list_json`: the answer's
  points written as JSON text, described objects from a memo), then the general way in two
  steps (the MetricValueList document, then its JSON bytes);
- and, from `bench_adapter.py`, the floor: a trivial aiohttp TLS server answering as many bytes.

The end-to-end CPU per request comes from `bench_adapter.py --only-latency` (4 clients share
about one Prometheus query per 4 requests there, as identical requests in flight coalesce).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from adapter import eventloop  # noqa: E402
from adapter.auth.options import AuthOptions, build_guard  # noqa: E402
from adapter.prometheus import keyed_vector  # noqa: E402
from adapter.provider.prometheus_provider import _quantity_text, _time  # noqa: E402
from adapter.server import documents  # noqa: E402
from adapter.server.auth_seam import ALLOW_ALL  # noqa: E402
from adapter.server.encoding import dumps  # noqa: E402
from bench import record  # noqa: E402
from bench.bench_adapter import PODS, RULES, write_gauges  # noqa: E402
from bench.bench_auth import InstantCluster, proxy_request  # noqa: E402
from common.selectors import EVERYTHING, parse_selector  # noqa: E402
from sandbox.prometheus import PrometheusServer  # noqa: E402
from tests.adapter.fakes import FakeLister  # noqa: E402
from tests.adapter.stack import make_stack  # noqa: E402

Timer = Callable[[], Awaitable[Any]]


BLOCKS = 5  # rounds are timed in blocks; the least loaded block counts (others' load only adds)


async def cpu_ms(step: Timer, rounds: int) -> float:
    """Milliseconds of this process's CPU per call of `step`, after a warm-up."""
    for _ in range(min(50, rounds)):
        await step()
    per_block = max(1, rounds // BLOCKS)
    best = float("inf")
    for _ in range(BLOCKS):
        started = time.process_time()
        for _ in range(per_block):
            await step()
        best = min(best, (time.process_time() - started) / per_block * 1000)
    return best


def sync(fn: Callable[[], Any]) -> Timer:
    async def step() -> Any:
        return fn()

    return step


async def measure(prom_url: str, rounds: int) -> list[tuple[str, float]]:
    objects = {("pods", "default"): {p: {"app": "web"} for p in PODS}}
    lister = FakeLister(objects)
    stack = await make_stack(prom_url, lister=lister, rules=RULES)
    await stack.discover()
    provider, client = stack.provider, stack.client
    pods = provider.resolve_resource("pods")
    assert pods is not None
    selector = parse_selector("app=web")
    names = await lister.names(pods, namespace="default", selector=selector)
    query = provider._discovery.planner.custom_query(
        pods, "bench_gauge", namespace="default", names=names, metric_selector=EVERYTHING
    )
    assert query is not None
    body, _ = await client._send("/api/v1/query", [("query", query.promql)])
    values = await provider.custom_metric_by_selector(
        pods, "bench_gauge", namespace="default", selector=selector, metric_selector=EVERYTHING
    )
    document = documents.metric_value_list(values, "v1beta2")
    rows: list[tuple[str, float]] = []

    async def row(name: str, step: Timer, n: int = rounds) -> None:
        rows.append((name, await cpu_ms(step, n)))

    request = proxy_request()
    await row("authn/authz: AlwaysAllow (the end-to-end run's)", lambda: ALLOW_ALL.admit(request))
    guard = build_guard(AuthOptions(), kube=InstantCluster())  # type: ignore[arg-type]
    await guard.start()  # type: ignore[attr-defined]
    try:
        await row(
            "authn/authz: delegated, front-proxy cert, warm caches", lambda: guard.admit(request)
        )
    finally:
        await guard.close()  # type: ignore[attr-defined]
    await row(
        "object names: labelSelector over 100 pods",
        lambda: lister.names(pods, namespace="default", selector=selector),
    )
    await row(
        "Prometheus call, client side (build, send, read, parse)",
        lambda: client.query_keyed(
            query.promql, label="pod", time_of=_time, value_of=_quantity_text
        ),
        max(50, rounds // 4),
    )
    await row("  of which JSON parse", sync(lambda: client._decode("query", 200, body)))
    data = client._decode("query", 200, body)
    await row(
        "  of which points from JSON (keyed_vector)",
        sync(lambda: keyed_vector(data, "pod", _time, _quantity_text)),
    )
    keyed = keyed_vector(data, "pod", _time, _quantity_text)
    fetch = provider._fetch_custom

    class Ready:
        async def query_keyed(self, promql: str, **_: Any) -> Any:
            return keyed

    provider._backends = type("B", (), {"client": lambda self, name: Ready()})()
    await row("result: the provider's fetch on a ready answer", lambda: fetch(query, "pod"))
    await row(
        "result: the provider's answer for 100 pods (CustomValues)",
        lambda: provider._custom(pods, "bench_gauge", "default", names, EVERYTHING),
    )
    await row(
        "rendering + encoding: the answer's JSON, as the server does",
        sync(lambda: documents.metric_value_list_json(values, "v1beta2")),
    )
    await row(
        "  the general way: MetricValueList document",
        sync(lambda: documents.metric_value_list(values, "v1beta2")),
    )
    await row("  then its JSON bytes", sync(lambda: dumps(document)))
    await stack.close()
    return rows


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        prom = PrometheusServer(Path(tmp))
        prom.start()
        try:
            await write_gauges(prom.url)
            rows = await measure(prom.url, args.rounds)
        finally:
            prom.close()
    print(
        f"CPU per call of each stage, ms (process time, {args.rounds} calls each, least "
        f"loaded of {BLOCKS} blocks)"
    )
    run = record.Run.begin(args)
    for name, ms in rows:
        print(f"  {name:<62} {ms:7.3f}")
        run.figure(record.slug(name), name.strip(), ms, "ms", kind="time")
    run.note("CPU per call of each stage, the least loaded block: context for where time goes")
    run.write()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000, help="calls per stage")
    parser.add_argument("--event-loop", choices=("auto", "uvloop", "asyncio"), default="auto")
    record.add_json_option(parser)
    options = parser.parse_args()
    eventloop.run(main(options), loop=options.event_loop)  # the adapter's loop
