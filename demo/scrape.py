"""The demo's Prometheus scrapes the adapter and the autoscaler, as a cluster's would, so the
run leaves their self-metrics behind for the dashboard's picture (`python -m demo.dashboard`).

The adapter's /metrics is HTTPS and authorized by SubjectAccessReview: Prometheus verifies the
adapter's certificate against the demo CA and presents the viewer's token, which the sandbox's
policy lets `get` every non-resource URL.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path
from typing import Any

import yaml

from sandbox.prometheus import PrometheusServer

__all__ = ["scrape_programs"]

# the chart's ServiceMonitors name their jobs after the Services; the alerts expect this shape
ADAPTER_JOB = "promscaler-adapter"
AUTOSCALER_JOB = "promscaler-autoscaler"


def scrape_programs(
    prometheus: PrometheusServer,
    *,
    adapter_port: int,
    autoscaler_port: int,
    ca_pem: bytes,
    token: str,
) -> None:
    """Add both programs to the running Prometheus' scrape configs and reload it."""
    ca_file = prometheus.dir / "adapter-ca.crt"
    ca_file.write_bytes(ca_pem)
    token_file = prometheus.dir / "scrape.token"
    token_file.write_text(token)
    config: dict[str, Any] = yaml.safe_load(prometheus.config_path.read_text())
    config["scrape_configs"] = _jobs(adapter_port, autoscaler_port, ca_file, token_file)
    prometheus.config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    request = urllib.request.Request(f"{prometheus.url}/-/reload", method="POST")
    with urllib.request.urlopen(request, timeout=10) as resp:
        resp.read()


def _jobs(adapter: int, autoscaler: int, ca_file: Path, token_file: Path) -> list[dict[str, Any]]:
    return [
        {
            "job_name": ADAPTER_JOB,
            "scheme": "https",
            "authorization": {"credentials_file": str(token_file)},
            "tls_config": {"ca_file": str(ca_file)},
            "static_configs": [{"targets": [f"127.0.0.1:{adapter}"]}],
        },
        {
            "job_name": AUTOSCALER_JOB,
            # its per-Autoscaler series name the Autoscaler's namespace
            "honor_labels": True,
            "static_configs": [{"targets": [f"127.0.0.1:{autoscaler}"]}],
        },
    ]
