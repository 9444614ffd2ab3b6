"""The command line: flag errors, rule file errors, --help, and a real start-up."""

from __future__ import annotations

import asyncio
import platform
import signal
import ssl
import subprocess
import sys
import time

import aiohttp
import pytest

from adapter.cli import parse_args
from common.version import version
from tests.adapter.stack import RULES, series
from tests.support.prometheus import free_port, remote_write

ADAPTER = [sys.executable, "-m", "adapter"]


def run(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ADAPTER, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.fixture
def rules_file(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(RULES)
    return str(path)


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        pytest.param(
            ["--metrics-relist-interval=10 minutes"], "--metrics-relist-interval", id="bad-duration"
        ),
        pytest.param(
            ["--metrics-relist-interval", "0s"], "--metrics-relist-interval", id="zero-interval"
        ),
        pytest.param(["--secure-port=70000"], "--secure-port", id="port-out-of-range"),
        pytest.param(["--prometheus-verb=PUT"], "--prometheus-verb", id="bad-verb"),
        pytest.param(["--prometheus-header=novalue"], "--prometheus-header", id="bad-header"),
        pytest.param(["--tls-min-version=VersionTLS99"], "--tls-min-version", id="tls-version"),
        pytest.param(["--prometheus-timeout=fast"], "--prometheus-timeout", id="bad-timeout"),
        pytest.param(["--no-such-flag"], "--no-such-flag", id="unknown-flag"),
    ],
)
def test_bad_flag_values_exit_2_with_one_line(rules_file, args, flag):
    result = run(f"--config={rules_file}", *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert flag in lines[0]


def test_missing_config_exits_2():
    result = run()
    assert result.returncode == 2
    assert "--config" in result.stderr


@pytest.mark.parametrize(
    ("text", "where"),
    [
        pytest.param(
            "rules:\n- seriesQuery: 'x'\n  metricsQuery: 'x'\n  nmae: {}\n",
            "rules[0]",
            id="unknown-key",
        ),
        pytest.param(
            "rules:\n- seriesQuery: 'x'\n  metricsQuery: 'x'\n"
            "- seriesQuery: 'y'\n  name: {matches: '('}\n  metricsQuery: 'y'\n",
            "rules[1].name.matches",
            id="bad-regex",
        ),
    ],
)
def test_bad_rule_file_exits_1_naming_the_place(tmp_path, text, where):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = run(f"--config={path}")
    assert result.returncode == 1
    assert where in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unreadable_rule_file_exits_1(tmp_path):
    result = run(f"--config={tmp_path / 'missing.yaml'}")
    assert result.returncode == 1
    assert "missing.yaml" in result.stderr


def test_help_is_grouped():
    result = run("--help")
    assert result.returncode == 0
    for group in (
        "rules and discovery",
        "Prometheus",
        "serving",
        "Kubernetes",
        "authentication and authorization",
    ):
        assert group in result.stdout
    # the max-age default is stated in words (argparse folds the help text across lines)
    text = " ".join(result.stdout.split())
    assert "the larger of twice --metrics-relist-interval and 5m" in text


@pytest.mark.parametrize(
    ("argv", "field", "want"),
    [
        pytest.param(
            ["--metrics-relist-interval=1m"], "max_age", 300.0, id="max-age-default-at-least-5m"
        ),
        pytest.param([], "max_age", 1200.0, id="max-age-default-twice-relist"),
        pytest.param(
            ["--metrics-relist-interval=1m", "--metrics-max-age=0"],
            "max_age",
            300.0,
            id="max-age-zero-means-default",
        ),
        pytest.param(
            ["--metrics-relist-interval=1m", "--metrics-max-age=90s"],
            "max_age",
            90.0,
            id="max-age-explicit-below-default-honoured",
        ),
        pytest.param(
            ["--metrics-relist-interval=1h30m", "--metrics-max-age=2h"],
            "max_age",
            7200.0,
            id="max-age-explicit",
        ),
        pytest.param([], "relist_interval", 600.0, id="relist-default-10m"),
        pytest.param([], "cache_ttl", 1.0, id="cache-ttl-default"),
        pytest.param(["--cache-ttl=0"], "cache_ttl", 0.0, id="cache-off"),
        pytest.param([], "batch_window", 5.0, id="batch-window-default"),
        pytest.param(["--batch-window=0"], "batch_window", 0.0, id="batching-off"),
        pytest.param(["--batch-window=1500ms"], "batch_window", 1.5, id="batch-window-go"),
        pytest.param([], "external_batch_window", 2.0, id="external-window-default"),
        pytest.param(
            ["--external-batch-window=500ms"], "external_batch_window", 0.5, id="external-window"
        ),
        pytest.param(
            ["--batch-window=1s"], "external_batch_window", 1.0, id="external-window-capped"
        ),
        pytest.param(["--batch-window=0"], "external_batch_window", 0.0, id="external-window-off"),
        pytest.param([], "secure_port", 6443, id="port-default"),
        pytest.param(["--kubeconfig", "/k"], "lister_kubeconfig", "/k", id="kubeconfig-alias"),
        pytest.param(["-v=4"], "verbosity", 4, id="klog-v"),
        pytest.param(["--v", "2"], "verbosity", 2, id="klog-v-space"),
    ],
)
def test_defaults_and_go_style_values(argv, field, want):
    options = parse_args(["--config=x", *argv])
    assert getattr(options, field) == want


def test_prometheus_flags():
    options = parse_args(
        [
            "--config=x",
            "--prometheus-url=https://prom:9090",
            "--prometheus-verb=post",
            "--prometheus-header",
            "X-A=1",
            "--prometheus-header=X-B=2=3",
            "--prometheus-auth-incluster",
            "--prometheus-timeout=250ms",
        ]
    )
    prom = options.prometheus
    assert (prom.url, prom.verb, prom.in_cluster, prom.timeout) == (
        "https://prom:9090",
        "POST",
        True,
        0.25,
    )
    assert dict(prom.headers) == {"X-A": "1", "X-B": "2=3"}


@pytest.mark.prometheus
async def test_the_program_serves_and_reloads_rules_on_sighup(prometheus, tmp_path):
    await remote_write(
        prometheus.url,
        [
            series("gauge_value", {"namespace": "default", "pod": "web-1"}, [2.5]),
            series("extra_gauge", {"namespace": "default", "pod": "web-1"}, [1]),
        ],
    )
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    kubeconfig = tmp_path / "kubeconfig"  # an API server that is not there: names need none
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        *ADAPTER,
        f"--config={rules}",
        f"--prometheus-url={prometheus.url}",
        f"--secure-port={port}",
        "--bind-address=127.0.0.1",
        f"--cert-dir={tmp_path / 'certs'}",
        "--authorization-mode=AlwaysAllow",
        f"--lister-kubeconfig={kubeconfig}",
        "--metrics-relist-interval=1h",
        "--metrics-max-age=1h",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    base = f"https://127.0.0.1:{port}"
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as http:
            await wait_ready(http, base)
            build = f'python_version="{platform.python_version()}",version="{version()}"'
            assert await scrape(http, base, f"promscaler_adapter_build_info{{{build}}}") == 1
            pod = f"{base}/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/web-1"
            async with http.get(f"{pod}/gauge_value") as resp:
                assert resp.status == 200
                assert (await resp.json())["items"][0]["value"] == "2500m"
            async with http.get(f"{pod}/extra_gauge") as resp:
                assert resp.status == 404
            # the program installs the input limits: an oversized URI is a Status, not a drop
            wildcard = f"{base}/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*"
            async with http.get(f"{wildcard}/gauge_value?labelSelector={'a' * 9000}") as resp:
                assert resp.status == 414
                assert (await resp.json())["reason"] == "RequestURITooLong"
            # SIGHUP: extra_gauge now comes from a second backend (the same server here)
            second = f"backends:\n  second: {{url: '{prometheus.url}'}}\n"
            reloaded = RULES.replace("gauge_value{", "extra_gauge{", 1).replace(
                "metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'",
                "backend: second\n  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by "
                "(<<.GroupBy>>)'",
                1,
            )
            assert "backend: second" in reloaded
            rules.write_text(second + reloaded)
            proc.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 10
            status = 0
            while time.monotonic() < deadline and status != 200:
                await asyncio.sleep(0.1)
                async with http.get(f"{pod}/extra_gauge") as resp:
                    status = resp.status
            assert status == 200
            assert await scrape(http, base, "promscaler_adapter_config_last_reload_successful") == 1
            series_calls = (
                "promscaler_adapter_prometheus_request_duration_seconds_count"
                '{backend="second",endpoint="series"}'
            )
            assert await scrape(http, base, series_calls) >= 1
            # no signal this time: the file watch notices the change
            rules.write_text("rules:\n- {seriesQuery: x, metricsQuery: '<<.Nope>>'}\n")
            deadline = time.monotonic() + 10
            while await scrape(http, base, "promscaler_adapter_config_last_reload_successful"):
                assert time.monotonic() < deadline, "the bad file was not reported"
                await asyncio.sleep(0.1)
            async with http.get(f"{pod}/extra_gauge") as resp:
                assert resp.status == 200  # the running rules stay
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), timeout=15)
        stderr = (await proc.stderr.read()).decode()
    assert code == 0, stderr
    assert 't"' not in stderr or "token" not in stderr


async def scrape(http: aiohttp.ClientSession, base: str, name: str) -> float:
    async with http.get(f"{base}/metrics") as resp:
        text = await resp.text()
    (line,) = [ln for ln in text.splitlines() if ln.startswith(f"{name} ")]
    return float(line.rsplit(" ", 1)[1])


async def wait_ready(http: aiohttp.ClientSession, base: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            async with http.get(f"{base}/readyz") as resp:
                if resp.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError("the adapter did not become ready")


def test_every_flag_has_help():
    from adapter.cli import build_parser

    parser = build_parser()
    assert [a.option_strings[0] for a in parser._actions if a.option_strings and not a.help] == []
