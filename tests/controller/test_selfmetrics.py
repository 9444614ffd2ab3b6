"""/metrics, /healthz, /readyz of the controller."""

from __future__ import annotations

import aiohttp
import pytest

from autoscaler.controller import Controller, ControllerConfig
from autoscaler.reconcile import Outcome
from autoscaler.selfmetrics import SelfMetrics, start_health_server


async def test_endpoints_and_metric_names():
    metrics = SelfMetrics()
    ready = [False]
    runner = await start_health_server(metrics, host="127.0.0.1", port=0, ready=lambda: ready[0])
    port = runner.addresses[0][1]
    ctl = Controller(
        object(), type("S", (), {"objects": {}})(), config=ControllerConfig(), metrics=metrics
    )  # type: ignore[arg-type]
    ctl._account("ns/a", Outcome(reason="SucceededRescale", replicas=3, rescaled=True))
    ctl._account("ns/b", Outcome(reason="FailedGetScale", error="boom"))
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"http://127.0.0.1:{port}/healthz") as r:
                assert r.status == 200
            async with s.get(f"http://127.0.0.1:{port}/readyz") as r:
                assert r.status == 503
            ready[0] = True
            async with s.get(f"http://127.0.0.1:{port}/readyz") as r:
                assert r.status == 200
            async with s.get(f"http://127.0.0.1:{port}/metrics") as r:
                text = await r.text()
    finally:
        await runner.cleanup()
    for line in (
        'promscaler_autoscaler_decisions_total{reason="SucceededRescale"} 1.0',
        'promscaler_autoscaler_scale_writes_total{result="success"} 1.0',
        'promscaler_autoscaler_reconcile_errors_total{reason="FailedGetScale"} 1.0',
    ):
        assert line in text
    assert "promscaler_autoscaler_reconcile_lag_seconds_bucket" in text
    assert "promscaler_autoscaler_reconcile_duration_seconds_bucket" in text


async def test_metrics_over_tls(tmp_path):
    import ssl
    from datetime import UTC, datetime

    from autoscaler.selfmetrics import serving_context
    from sandbox.certs import issue, make_ca

    now = datetime.now(UTC)
    ca = make_ca("test-ca", now=now)
    cert, key = issue(ca, "autoscaler", now=now, hosts=("127.0.0.1",), server=True).write(
        tmp_path, "serving"
    )
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(ca.cert_pem)
    runner = await start_health_server(
        SelfMetrics(),
        host="127.0.0.1",
        port=0,
        ready=lambda: True,
        ssl_context=serving_context(str(cert), str(key)),
    )
    port = runner.addresses[0][1]
    client = ssl.create_default_context(cafile=str(ca_file))
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"https://127.0.0.1:{port}/metrics", ssl=client) as r:
                assert r.status == 200
                assert "promscaler_autoscaler_leader" in await r.text()
            with pytest.raises(aiohttp.ClientError):
                async with s.get(f"http://127.0.0.1:{port}/metrics") as r:
                    await r.read()
    finally:
        await runner.cleanup()
