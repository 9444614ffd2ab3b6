"""`python -m demo.dashboard`: the Grafana dashboard's main panels, drawn with matplotlib from
the self-metrics a `make demo` run left in its Prometheus (no Grafana needed).

    make demo && .venv/bin/python -m demo.dashboard --out docs/dashboard.png

It restarts a Prometheus on the run's data directory, asks it each panel's own queries from
charts/promscaler/files/dashboard.json over the run (Grafana's `$__rate_interval` as 15 s, four
of the demo's 1 s scrapes; every variable as "all"), and draws one subplot per panel.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandbox.prometheus import PrometheusServer

from .stack import REPO

__all__ = ["main"]

DASHBOARD = REPO / "charts" / "promscaler" / "files" / "dashboard.json"
# the panels a reader needs to see what the dashboard shows, in reading order
MAIN_PANELS = (
    "Requests by route",
    "Request latency by route (p99)",
    "PromQL latency by backend (p99)",
    "Cache hit ratio",
    "Discovery age",
    "Replicas: current, desired, min, max",
    "Metric value vs target",
    "Reconcile lag",
)
RATE_INTERVAL = "15s"  # four scrapes of the demo's 1 s interval, as Grafana would pick
STEP = 1.0  # seconds between points: the scrape interval
Series = tuple[str, list[float], list[float]]  # legend, seconds since start, values


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    panels = {p["title"]: p for p in json.loads(DASHBOARD.read_text())["panels"]}
    prometheus = PrometheusServer(args.run / "prometheus")
    prometheus.start()
    try:
        start, end = _time_range(prometheus.url)
        drawn = [(t, _panel_series(prometheus.url, panels[t], start, end)) for t in MAIN_PANELS]
    finally:
        prometheus.stop()
    _draw(drawn, args.out)
    print(f"dashboard: {args.out}")
    return 0


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m demo.dashboard",
        description="Draw the Grafana dashboard's main panels from a `make demo` run.",
    )
    parser.add_argument(
        "--run",
        type=Path,
        default=REPO / "out" / "demo" / "run",
        help="the demo's run directory (default: out/demo/run)",
    )
    parser.add_argument(
        "--out", type=Path, default=REPO / "out" / "demo" / "dashboard.png", help="the PNG"
    )
    return parser.parse_args(argv)


def _api(url: str, path: str, **params: str) -> Any:
    query = urllib.parse.urlencode(params)
    with urllib.request.urlopen(f"{url}/api/v1/{path}?{query}", timeout=30) as resp:
        payload = json.load(resp)
    return payload["data"]


def _time_range(url: str) -> tuple[float, float]:
    """The span of the run's data (the TSDB head: the demo's Prometheus ran once)."""
    head = _api(url, "status/tsdb")["headStats"]
    if not head.get("numSeries"):
        raise SystemExit("the run's Prometheus holds no data: run `make demo` first")
    return head["minTime"] / 1000, head["maxTime"] / 1000


def _panel_series(url: str, panel: dict[str, Any], start: float, end: float) -> list[Series]:
    out: list[Series] = []
    for target in panel["targets"]:
        expr = _grafana_to_promql(target["expr"])
        params = {"query": expr, "start": str(start), "end": str(end), "step": str(STEP)}
        for item in _api(url, "query_range", **params)["result"]:
            legend = _legend(target.get("legendFormat", ""), item["metric"])
            xs = [float(t) - start for t, _ in item["values"]]
            ys = [float(v) for _, v in item["values"]]
            out.append((legend, xs, ys))
    return out


def _grafana_to_promql(expr: str) -> str:
    expr = expr.replace("$__rate_interval", RATE_INTERVAL)
    return re.sub(r"\$\{?\w+\}?", ".*", expr)


def _legend(template: str, labels: dict[str, str]) -> str:
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m[1], ""), template)


def _draw(panels: list[tuple[str, list[Series]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 2
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(14, 3.2 * rows), sharex=True)
    fig.suptitle("promscaler dashboard, main panels, over one `make demo` run")
    for ax, (title, series) in zip(axes.flat, panels, strict=False):
        ax.set_title(title, fontsize=10)
        for legend, xs, ys in series:
            ax.plot(xs, ys, label=legend, linewidth=1.2)
        if series:
            ax.legend(fontsize=7, loc="upper left", ncol=2)
        else:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("seconds since the programs started")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
