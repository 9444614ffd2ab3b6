"""Hot reload over a real Prometheus: a ConfigMap-style symlink swap served within 2 s, the
reload metrics, a bad file keeping the running rules, re-discovery of changed rules only, and a
200-rule reload under concurrent load with no failed request."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from adapter.reload import RuleReloader
from adapter.server.app import build_app
from tests.adapter.stack import Adapter, rule_file, series
from tests.support.prometheus import remote_write

pytestmark = pytest.mark.prometheus
CM = "/apis/custom.metrics.k8s.io/v1beta2"


class ConfigMapDir:
    """A directory laid out as the kubelet mounts a ConfigMap: `rules.yaml -> ..data/rules.yaml`,
    `..data -> ..<version>`, and an update swaps `..data` atomically."""

    def __init__(self, root: Path, text: str) -> None:
        self.root = root
        self.version = 0
        self.update(text)
        (root / "rules.yaml").symlink_to("..data/rules.yaml")
        self.path = str(root / "rules.yaml")

    def update(self, text: str) -> None:
        self.version += 1
        version = self.root / f"..v{self.version}"
        version.mkdir()
        (version / "rules.yaml").write_text(text)
        tmp = self.root / "..data_tmp"
        tmp.symlink_to(version.name)
        tmp.rename(self.root / "..data")  # rename(2) replaces the old link atomically


def reloads_ok(adapter: Adapter) -> float:
    return adapter.metric("promscaler_adapter_config_last_reload_successful", "")


async def listed(client) -> set[str]:
    body = await (await client.get(CM)).json()
    return {r["name"] for r in body["resources"]}


async def wait_listed(client, name: str, *, limit: float) -> float:
    started = time.monotonic()
    while name not in await listed(client):
        assert time.monotonic() - started < limit, f"{name} not served within {limit}s"
        await asyncio.sleep(0.05)
    return time.monotonic() - started


async def test_a_configmap_swap_is_served_within_2s_and_a_bad_file_keeps_the_rules(
    aiohttp_client, prometheus, tmp_path
):
    names = ["gauge_a", "gauge_b"]
    pods = {"namespace": "default", "pod": "web-1"}
    await remote_write(prometheus.url, [series(n, pods, [1]) for n in names])
    files = ConfigMapDir(tmp_path, rule_file(names[:1]))
    adapter = Adapter(prometheus.url, Path(files.path).read_text())
    await adapter.discover()
    reloader = RuleReloader(
        files.path,
        discovery=adapter.discovery,
        backends=adapter.pool,
        resolver=adapter.resolver,
        registry=adapter.registry,
    )
    client = await aiohttp_client(build_app(adapter.provider, registry=adapter.registry))
    watch = asyncio.create_task(reloader.watch())
    try:
        assert await listed(client) == {"pods/gauge_a", "namespaces/gauge_a"}
        stamp = adapter.metric(
            "promscaler_adapter_config_last_reload_success_timestamp_seconds", ""
        )
        files.update(rule_file(names))
        assert await wait_listed(client, "pods/gauge_b", limit=2.0) < 2.0
        assert reloads_ok(adapter) == 1
        assert (
            adapter.metric("promscaler_adapter_config_last_reload_success_timestamp_seconds", "")
            > stamp
        )

        files.update("rules:\n- {seriesQuery: x, metricsQuery: '<<.Nope>>'}\n")
        deadline = time.monotonic() + 2
        while reloads_ok(adapter) != 0:
            assert time.monotonic() < deadline, "the bad file was not noticed"
            await asyncio.sleep(0.05)
        assert await listed(client) >= {"pods/gauge_a", "pods/gauge_b"}  # running rules kept
        resp = await client.get(f"{CM}/namespaces/default/pods/web-1/gauge_b")
        assert resp.status == 200
    finally:
        watch.cancel()
        await reloader.close()
        await adapter.pool.close()


async def test_a_reload_rediscovers_only_the_rules_that_changed(prometheus):
    names = [f"gauge_{i}" for i in range(5)]
    await remote_write(
        prometheus.url, [series(n, {"namespace": "d", "pod": "p"}, [1]) for n in names]
    )
    path = Path(prometheus.dir) / "rules.yaml"
    path.write_text(rule_file(names))
    adapter = Adapter(prometheus.url, path.read_text())
    await adapter.discover()
    reloader = RuleReloader(
        str(path), discovery=adapter.discovery, backends=adapter.pool, resolver=adapter.resolver
    )
    client = adapter.pool.client("default")
    try:
        before = client.calls
        path.write_text(rule_file(names).replace("as: 'gauge_4'", "as: 'renamed'"))
        assert await reloader.reload()
        await reloader.settled()
        assert client.calls - before == 1  # only the changed rule's seriesQuery
        served = {m.metric for m in adapter.discovery.planner.custom}
        assert served == {*names[:4], "renamed"}
        before = client.calls
        assert await reloader.reload()  # the same file again: nothing to re-discover
        await reloader.settled()
        assert client.calls == before
    finally:
        await reloader.close()
        await adapter.pool.close()


async def test_a_200_rule_reload_under_concurrent_load_fails_no_request(
    aiohttp_client, prometheus, tmp_path
):
    names = [f"load_{i}" for i in range(200)]
    await remote_write(
        prometheus.url, [series(n, {"namespace": "d", "pod": "p"}, [1]) for n in names]
    )
    path = tmp_path / "rules.yaml"
    path.write_text(rule_file(names))
    adapter = Adapter(prometheus.url, path.read_text(), timeout=5.0)
    await adapter.discover()
    assert len(adapter.discovery.planner.custom) == 400  # pods and namespaces
    reloader = RuleReloader(
        str(path), discovery=adapter.discovery, backends=adapter.pool, resolver=adapter.resolver
    )
    client = await aiohttp_client(build_app(adapter.provider, registry=adapter.registry))
    codes: list[int] = []
    stop = asyncio.Event()

    async def load(i: int) -> None:
        while not stop.is_set():
            resp = await client.get(f"{CM}/namespaces/d/pods/p/load_{i * 7 % 200}")
            await resp.read()
            codes.append(resp.status)

    clients = [asyncio.create_task(load(i)) for i in range(20)]
    try:
        await asyncio.sleep(0.3)
        path.write_text(rule_file(names, suffix=""))  # unchanged text: carried over
        assert await reloader.reload()
        # every rule's text changes (a new filter), so all 200 seriesQueries are re-discovered
        path.write_text(
            rule_file(names).replace("  name:", "  seriesFilters: [{isNot: x$}]\n  name:")
        )
        assert await reloader.reload()
        await reloader.settled()
        await asyncio.sleep(0.3)
    finally:
        stop.set()
        await asyncio.gather(*clients)
        await reloader.close()
        await adapter.pool.close()
    assert len(codes) > 100
    assert set(codes) == {200}, {c: codes.count(c) for c in set(codes)}


RESOURCE_RULES = """
resourceRules:
  cpu:
    containerQuery: sum by (<<.GroupBy>>) (rate(cpu{<<.LabelMatchers>>}[1m]))
    nodeQuery: sum by (<<.GroupBy>>) (rate(cpu{<<.LabelMatchers>>}[1m]))
    resources: {overrides: {node: {resource: node}, namespace: {resource: namespace}, pod: {resource: pod}}}
    containerLabel: container
  memory:
    containerQuery: sum by (<<.GroupBy>>) (mem{<<.LabelMatchers>>})
    nodeQuery: sum by (<<.GroupBy>>) (mem{<<.LabelMatchers>>})
    resources: {overrides: {node: {resource: node}, namespace: {resource: namespace}, pod: {resource: pod}}}
    containerLabel: container
"""  # noqa: E501


async def test_a_reload_hands_the_new_rules_to_metrics_k8s_io_and_a_bad_file_changes_nothing(
    tmp_path,
):
    """The resource provider's rules follow the file (as `adapter.__main__` wires them)."""
    path = tmp_path / "rules.yaml"
    path.write_text(rule_file(["gauge"]))
    adapter = Adapter("http://127.0.0.1:9", path.read_text())  # nothing listens: no discovery
    seen: list[object] = []
    reloader = RuleReloader(
        str(path),
        discovery=adapter.discovery,
        backends=adapter.pool,
        resolver=adapter.resolver,
        on_reload=(lambda engine: seen.append(engine.config.resource_rules),),
    )
    try:
        path.write_text(rule_file(["gauge"]) + RESOURCE_RULES)
        assert await reloader.reload()
        assert len(seen) == 1
        assert seen[0] is not None
        path.write_text("resourceRules: {cpu: 3}\n")
        assert not await reloader.reload()
        assert len(seen) == 1  # a bad file reaches no listener
    finally:
        await reloader.close()
        await adapter.pool.close()
