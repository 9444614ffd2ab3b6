"""The alert rules and the dashboard name only metrics and labels the real programs export.

Starts Prometheus, the sandbox, the adapter (a process, behind the sandbox's aggregation layer)
and the controller (`promscaler-autoscaler run`, a process), drives them through the paths that
create every labelled series (requests, discovery, a failing metric, a partial answer through the
Prometheus fault proxy, Prometheus stopped), scrapes both /metrics and checks every selector,
matcher and grouping label of every rule expression and dashboard query against what was
scraped.
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import subprocess
import time
from pathlib import Path

import aiohttp
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from sandbox.prometheus import PrometheusServer, free_port, remote_write
from sandbox.promfaults import PromFaultPlan, PromFaultProxy
from tests.alerts.promql_refs import grafana_to_promql, references
from tests.controller.stack import (
    Stack,
    _register_adapter,
    _start_adapter,
    eventually,
    external_metric,
    target_ref,
)
from tests.support.history_load import hourly_load

pytestmark = [pytest.mark.prometheus]

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "charts/promscaler/files/alerts.yaml"
DASHBOARD = ROOT / "charts/promscaler/files/dashboard.json"
# labels Prometheus adds to every scraped series
TARGET_LABELS = frozenset({"job", "instance"})
# series from elsewhere that the rules read on purpose (docs/operations.md says which)
FOREIGN = {
    "up": frozenset(),
    "aggregator_unavailable_apiservice": frozenset({"name"}),  # the API server's own
}
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
QUEUE = "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/e2e_queue_depth"
LABEL_VALUES = re.compile(r"^label_values\((?P<selector>.+),\s*(?P<label>\w+)\)$")

Exported = dict[str, set[str] | None]  # series name -> label names (None: declared, no sample)


def exported(text: str, into: Exported) -> None:
    for family in text_string_to_metric_families(text):
        for suffix in SUFFIXES.get(family.type, ("",)):
            into.setdefault(family.name + suffix, None)
        for sample in family.samples:
            known = into.get(sample.name) or set()
            into[sample.name] = known | set(sample.labels)


def expressions() -> list[tuple[str, str]]:
    """(where, PromQL) of every alert rule and every dashboard query and variable."""
    found = [
        (f"alert {r['alert']}", r["expr"])
        for g in yaml.safe_load(ALERTS.read_text())["groups"]
        for r in g["rules"]
    ]
    dashboard = json.loads(DASHBOARD.read_text())
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            found.append((f"panel {panel['title']!r}", grafana_to_promql(target["expr"])))
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            match = LABEL_VALUES.match(var["query"]["query"])
            assert match, var["name"]
            selector = grafana_to_promql(match["selector"])
            found.append((f"variable {var['name']}", f"sum by ({match['label']}) ({selector})"))
    return found


def problems(metrics: Exported) -> list[str]:
    labels_of: dict[str, frozenset[str] | None] = {
        name: (frozenset(labels) | TARGET_LABELS if labels is not None else None)
        for name, labels in metrics.items()
    }
    labels_of.update({name: labels | TARGET_LABELS for name, labels in FOREIGN.items()})
    found: list[str] = []
    for where, expr in expressions():
        refs = references(expr)
        for sel in refs.selectors:
            if sel.metric not in labels_of:
                found.append(f"{where}: metric {sel.metric} is not exported")
                continue
            have = labels_of[sel.metric]
            if sel.labels - TARGET_LABELS and have is None:
                found.append(f"{where}: {sel.metric} had no sample to check labels against")
            elif have is not None and sel.labels - have:
                found.append(f"{where}: {sel.metric} has no label {sorted(sel.labels - have)}")
        for grouping in refs.groupings:
            have_any = set().union(*(labels_of.get(m) or set() for m in grouping.metrics))
            if grouping.labels - have_any - {"le"} or (
                "le" in grouping.labels and not any(m.endswith("_bucket") for m in grouping.metrics)
            ):
                missing = sorted(grouping.labels - have_any)
                found.append(f"{where}: no metric of {sorted(grouping.metrics)} has {missing}")
    return found


def test_problems_are_found_in_a_rule_naming_what_is_not_exported():
    """The checker can fail: with nothing scraped, every program metric is reported."""
    found = problems({"promscaler_adapter_requests_total": {"route"}})
    assert any("metric promscaler_autoscaler_leader is not exported" in p for p in found)
    assert any("promscaler_adapter_requests_total has no label ['code']" in p for p in found)
    assert not any("metric up " in p for p in found)


async def scrape(http: aiohttp.ClientSession, url: str) -> str:
    async with http.get(url) as resp:
        assert resp.status == 200, await resp.text()
        return await resp.text()


async def test_rules_and_dashboard_name_only_exported_metrics(tmp_path):
    from autoscaler.kube import connect
    from sandbox.server import Sandbox, SandboxConfig

    (tmp_path / "prometheus").mkdir()
    # a day-old history by remote write: spec.predictive's forecast series
    prom = PrometheusServer(tmp_path / "prometheus", out_of_order_window="2d")
    prom.start()
    adapter: subprocess.Popen[bytes] | None = None
    controller: subprocess.Popen[bytes] | None = None
    metrics: Exported = {}
    tls = ssl.create_default_context()
    tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE  # the adapter's own test cert
    proxy = PromFaultProxy(upstream=prom.url)
    try:
        await proxy.start()
        async with Sandbox(SandboxConfig(pod_ready_delay=0.2, availability_interval=0.5)) as sb:
            kube = await connect(str(sb.kubeconfig))
            try:
                adapter, port = _start_adapter(
                    tmp_path, sb.kubeconfig, proxy.url, sb.pki.requestheader_ca_file
                )
                await _register_adapter(kube, port)
                stack = Stack(sb.kubeconfig, kube, prom, prom.url, tmp=tmp_path)
                await stack.apply_crd()
                await stack.queue("jobs", 25)
                pred = {"__name__": "e2e_queue_depth", "queue": "pred"}
                await remote_write(prom.url, [(pred, hourly_load(int(time.time())))])
                await stack.queue("pred", 10)
                for name, metric in (
                    ("work", external_metric("jobs")),
                    # a metric no rule serves: the failure paths' series
                    ("blind", {**external_metric("jobs"), "external": {
                        "metric": {"name": "e2e_not_served"},
                        "target": {"type": "AverageValue", "averageValue": "1"},
                    }}),
                ):  # fmt: skip
                    await stack.deployment(name, 1)
                    spec = {"scaleTargetRef": target_ref(name), "minReplicas": 1}
                    await stack.autoscaler(name, {**spec, "maxReplicas": 3, "metrics": [metric]})
                # spec.predictive: the forecast gauges and the history cache's series
                await stack.deployment("pred", 1)
                predicted = {"scaleTargetRef": target_ref("pred"), "maxReplicas": 3}
                await stack.autoscaler(
                    "pred",
                    {
                        **predicted,
                        "metrics": [external_metric("pred")],
                        "predictive": {
                            "mode": "ForecastOnly",
                            "history": "26h",
                            "seasonality": ["1h"],
                        },
                    },
                )
                # a target that does not exist: a failed pass (reconcile errors by reason)
                ghost = {"scaleTargetRef": target_ref("ghost"), "maxReplicas": 3}
                await stack.autoscaler("ghost", {**ghost, "metrics": [external_metric("jobs")]})
                metrics_port = free_port()
                controller = stack.controller_process(
                    "--sync-period=1s", f"--metrics-port={metrics_port}", log=tmp_path / "ctl.log"
                )
                base = f"https://127.0.0.1:{port}"
                async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=tls)) as http:
                    ctl = f"http://127.0.0.1:{metrics_port}/metrics"
                    # the adapter answers and the controller reads: metric values appear
                    # (dropped again when a read fails)
                    await eventually(
                        lambda: _has(http, ctl, "promscaler_autoscaler_metric_value{"),
                        timeout=30,
                        what="metric values",
                    )
                    # the history read and fitted off the pass: a later pass has the forecast
                    await eventually(
                        lambda: _has(http, ctl, "promscaler_autoscaler_forecast_value{"),
                        timeout=30,
                        what="a forecast",
                    )
                    for _ in range(2):  # the second within --cache-ttl: a cache hit
                        async with http.get(f"{base}{QUEUE}") as resp:
                            assert resp.status == 200, await resp.text()
                    exported(await scrape(http, ctl), metrics)
                    proxy.set(PromFaultPlan(rates={"partial": 1.0}))  # answers with warnings
                    # a query of its own: the adapter caches the ones asked before, and answers
                    # other queues from its batch (the rule sums by queue); `shard` is not
                    # among the labels the rule groups by, so this selector is never batched
                    async with http.get(f"{base}{QUEUE}?labelSelector=shard%3Dp") as resp:
                        assert resp.status == 503, await resp.text()
                    proxy.set(PromFaultPlan())
                    prom.stop()  # Prometheus gone: the error series
                    async with http.get(f"{base}{QUEUE}?labelSelector=shard%3Dx") as resp:
                        assert resp.status == 503
                    await asyncio.sleep(2.5)  # a failed pass or two in the controller
                    exported(await scrape(http, f"{base}/metrics"), metrics)
                    exported(await scrape(http, ctl), metrics)
            finally:
                await kube.close()
    finally:
        await proxy.stop()
        for proc in (controller, adapter):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        prom.close()
    found = problems(metrics)
    assert not found, "\n".join(found)


async def _has(http: aiohttp.ClientSession, url: str, text: str) -> bool:
    try:
        return text in await scrape(http, url)
    except aiohttp.ClientError:
        return False
