"""`promscaler-autoscaler simulate`: replay an autoscaler spec over a metric timeline.

    promscaler-autoscaler simulate --spec hpa.yaml --timeline load.csv [--plot out.png]
    promscaler-autoscaler simulate --spec hpa.yaml --prometheus-url http://127.0.0.1:9090 \\
        --query 'sum(rate(http_requests_total[1m]))' --start=-1h --end now --step 15s

The spec file is YAML or JSON: an Autoscaler or HorizontalPodAutoscaler object, or a bare spec.
The timeline is CSV (header `time,<one column per spec metric>`; time as RFC3339 or Unix
seconds) or JSON (`[{"time": ..., "values": [...]}]` or `[{"time": ..., "value": ...}]`), or
one Prometheus range query per spec metric (series are summed). Each point is one controller
pass; the load model is in docs/decision-document.md. A point without a value is a failed
metric on that pass, so a replay of an outage shows fallback; schedules open in their own time
zones; an object's pause annotations hold for the whole replay. With `spec.predictive`, the
timeline is replayed with and without prediction (the model sees only the points before each
pass) and both runs are compared (docs/predictive.md). The spec is judged as the API server
judges it with our CRD (`check_spec`, as `convert` does): a spec it would refuse is refused here,
naming the field. Exit status 2 for bad input.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import io
import json
import math
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from autoscaler.core import Controls, DocumentError, parse_spec
from autoscaler.core.controls_document import parse_controls
from autoscaler.core.document import parse_options
from autoscaler.core.fields import milli, time_ns
from autoscaler.core.model import NS, Spec
from autoscaler.core.simulate import SimPoint, SimStep, simulate
from autoscaler.core.spec_rules import check_spec
from autoscaler.simulate_compare import comparison_json, plot_both, render_comparison, run_both
from common.kubetime import format_time_ns

__all__ = ["main"]

PROG = "promscaler-autoscaler simulate"


class InputError(Exception):
    """Bad input a person typed: reported in one line, exit status 2."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Replay an autoscaler spec over a metric timeline. A point without a value is a "
            "failed metric on that pass; the spec's controls (fallback, activation, cooldowns, "
            "schedules in their time zones, the object's pause annotations) apply. With "
            "spec.predictive, the run with prediction is compared with the run without it: "
            "pod-seconds short of demand, replica-seconds, scale events; --plot draws both."
        ),
    )
    p.add_argument(
        "--spec", required=True, help="YAML/JSON: an Autoscaler/HPA object or a bare spec"
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--timeline", help="CSV or JSON timeline file ('-' for stdin)")
    src.add_argument("--prometheus-url", help="Prometheus base URL for --query range queries")
    p.add_argument(
        "--query", action="append", default=[], help="PromQL, once per spec metric, in order"
    )
    p.add_argument("--start", help="RFC3339, Unix seconds, 'now' or -DURATION (write --start=-1h)")
    p.add_argument("--end", default="now", help="as --start (default now)")
    p.add_argument("--step", default="15s", help="query resolution = the sync period (default 15s)")
    p.add_argument("--replicas", type=int, help="replicas at the start (default: minReplicas or 1)")
    p.add_argument("--request", default="1", help="each pod's request of the resource (default 1)")
    p.add_argument(
        "--pod-ready-delay", type=int, default=30, help="seconds until a new pod is ready"
    )
    p.add_argument("--controller", help="controller options as JSON, e.g. '{\"tolerance\": 0.05}'")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    p.add_argument(
        "--plot", metavar="PNG", help="also draw the run into this PNG (needs matplotlib)"
    )
    return p


def load_spec(path: str) -> tuple[Spec, Controls]:
    """The spec and its controls (an object's annotations pause it for the whole replay)."""
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from e
    except yaml.YAMLError as e:
        raise InputError(f"{path}: not YAML or JSON: {e}") from e
    if not isinstance(raw, dict):
        raise InputError(f"{path}: must hold an object")
    spec: dict[str, Any] = raw["spec"] if isinstance(raw.get("spec"), dict) else raw
    obj = raw if spec is not raw else {"spec": raw}
    try:
        parsed, controls = parse_spec(spec, "spec"), parse_controls({}, obj)
        # then the CRD's judgement: a spec `kubectl apply` would refuse is not replayed
        check_spec(obj)
    except DocumentError as e:  # parse_controls names the fields of a decide document
        raise InputError(f"{path}: {e.path.removeprefix('autoscaler.')}: {e.problem}") from e
    return parsed, controls


def _instant(text: str, *, now: int) -> int:
    text = text.strip()
    if text == "now":
        return now
    if text.startswith("-"):
        return now - _seconds(text[1:]) * NS
    try:
        return round(float(text) * NS)
    except ValueError:
        pass
    try:
        return time_ns(text, "time")
    except DocumentError as e:
        raise InputError(f"invalid time {text!r}: use RFC3339, Unix seconds, now or -1h") from e


def _seconds(text: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    try:
        if text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(float(text))
    except (ValueError, IndexError) as e:
        raise InputError(f"invalid duration {text!r}: use e.g. 15s, 5m or 1h") from e


def _number(text: Any, where: str) -> float | None:
    if text is None or (isinstance(text, str) and text.strip() in ("", "NaN", "nan")):
        return None
    try:
        return float(text)
    except (TypeError, ValueError) as e:
        raise InputError(f"{where}: {text!r} is not a number") from e


def read_timeline(text: str, count: int, *, name: str) -> list[SimPoint]:
    """CSV or JSON (detected by the first character), `count` values per point."""
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        return _json_timeline(stripped, count, name)
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2:
        raise InputError(f"{name}: a header line and at least one row are needed")
    header, points = rows[0], []
    if len(header) != count + 1:
        raise InputError(
            f"{name}: {len(header) - 1} value columns for {count} spec metrics "
            "(header: time,<one column per metric>)"
        )
    for i, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != count + 1:
            raise InputError(f"{name}: line {i} has {len(row)} columns, expected {count + 1}")
        t = _instant(row[0], now=0)
        points.append(SimPoint(t, tuple(_number(v, f"{name}: line {i}") for v in row[1:])))
    return points


def _json_timeline(text: str, count: int, name: str) -> list[SimPoint]:
    try:
        data = json.loads(text)
    except ValueError as e:
        raise InputError(f"{name}: not JSON: {e}") from e
    if not isinstance(data, list):
        raise InputError(f"{name}: a JSON timeline is a list of {{time, value(s)}} objects")
    points = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or "time" not in item:
            raise InputError(f"{name}[{i}]: needs time and value or values")
        values = item.get("values", [item.get("value")])
        if not isinstance(values, list) or len(values) != count:
            raise InputError(f"{name}[{i}]: needs {count} value(s), one per spec metric")
        points.append(
            SimPoint(
                _instant(str(item["time"]), now=0),
                tuple(_number(v, f"{name}[{i}]") for v in values),
            )
        )
    return points


def prometheus_timeline(
    url: str, queries: Sequence[str], *, start: int, end: int, step: int
) -> list[SimPoint]:
    """One range query per metric; all series of a query are summed per instant."""
    from prometheus_api_client.exceptions import PrometheusApiClientException
    from prometheus_api_client.prometheus_connect import PrometheusConnect

    client = PrometheusConnect(url=url, disable_ssl=False)
    columns: list[dict[int, float]] = []
    for query in queries:
        try:
            result = client.custom_query_range(
                query,
                start_time=datetime.fromtimestamp(start / NS, UTC),
                end_time=datetime.fromtimestamp(end / NS, UTC),
                step=str(step),
            )
        except PrometheusApiClientException as e:
            raise InputError(f"query {query!r} failed: {e}") from e
        except OSError as e:  # requests' connection errors are OSErrors
            raise InputError(f"cannot reach Prometheus at {url}: {e}") from e
        column: dict[int, float] = {}
        for series in result:
            for ts, value in series.get("values", []):
                key = round(float(ts) * NS)
                column[key] = column.get(key, 0.0) + float(value)
        columns.append(column)
    instants = range(start, end + 1, step * NS)
    return [SimPoint(t, tuple(_finite(c.get(t)) for c in columns)) for t in instants]


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def render_table(steps: Sequence[SimStep], count: int, *, controls: bool = False) -> str:
    """The run as a table; with controls, a `controls` column (fallback, paused, windows)."""
    head = ["time", *(f"metric[{i}]" for i in range(count)), "current", "ready", "desired"]
    rows = [head + (["controls"] if controls else [])]
    for s in steps:
        vals = ["-" if v is None else f"{v:g}" for v in s.values]
        row = [format_time_ns(s.time), *vals, str(s.current), str(s.ready), str(s.desired)]
        rows.append(row + ([_marks(s)] if controls else []))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return (
        "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
        + "\n"
    )


def _marks(s: SimStep) -> str:
    marks = (["fallback"] if s.fallback else []) + (["paused"] if s.paused else [])
    marks += [f"schedule:{name}" for name in s.schedules]
    return ",".join(marks) or "-"


def _spans(times: Sequence[datetime], flags: Sequence[bool]) -> list[tuple[datetime, datetime]]:
    """The runs of consecutive True flags, as (from, to) instants (to: the next point)."""
    spans, begin = [], None
    for i, flag in enumerate(flags):
        if flag and begin is None:
            begin = times[i]
        if not flag and begin is not None:
            spans.append((begin, times[i]))
            begin = None
    if begin is not None:
        spans.append((begin, times[-1]))
    return spans


def _shade(ax: Any, steps: Sequence[SimStep], times: Sequence[datetime]) -> None:
    """Fallback (red), pause (grey) and open schedule windows (blue) as shaded spans."""
    marks: list[tuple[str, str, list[bool]]] = [
        ("fallback", "tab:red", [s.fallback for s in steps]),
        ("paused", "tab:gray", [s.paused for s in steps]),
    ]
    for name in sorted({n for s in steps for n in s.schedules}):
        marks.append((f"schedule {name}", "tab:blue", [name in s.schedules for s in steps]))
    for label, color, flags in marks:
        for i, (a, b) in enumerate(_spans(times, flags)):
            ax.axvspan(a, b, color=color, alpha=0.15, label=label if i == 0 else None)


def plot(steps: Sequence[SimStep], path: str) -> None:
    plt, fig = figure(steps)
    fig.savefig(path)
    plt.close(fig)


def figure(steps: Sequence[SimStep]) -> tuple[Any, Any]:
    """(pyplot, the figure of the run): metric values, desired and ready replicas, and the
    controls' spans (fallback, paused, open schedule windows)."""
    try:
        matplotlib: Any = importlib.import_module("matplotlib")
        matplotlib.use("Agg")  # files only, never a window
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError as e:
        raise InputError("--plot needs matplotlib: pip install 'promscaler[tools]'") from e
    times = [datetime.fromtimestamp(s.time / NS, UTC) for s in steps]
    fig, load_ax = plt.subplots(figsize=(10, 4))
    for i in range(len(steps[0].values) if steps else 0):
        load_ax.plot(times, [s.values[i] for s in steps], label=f"metric[{i}]", alpha=0.7)
    load_ax.set_ylabel("metric value")
    replicas_ax = load_ax.twinx()
    replicas_ax.step(
        times, [s.desired for s in steps], where="post", color="black", label="desired"
    )
    replicas_ax.step(
        times, [s.ready for s in steps], where="post", color="green", linestyle="--", label="ready"
    )
    replicas_ax.set_ylabel("replicas")
    _shade(load_ax, steps, times)
    fig.legend(loc="upper left")
    fig.autofmt_xdate()
    fig.tight_layout()
    return plt, fig


def _run(args: argparse.Namespace) -> int:
    spec, controls = load_spec(args.spec)
    count = len(spec.metrics)
    try:
        options = parse_options(json.loads(args.controller)) if args.controller else None
        request = milli(args.request, "--request")
    except (ValueError, DocumentError) as e:
        raise InputError(str(e)) from e
    if args.timeline is not None:
        try:
            text = sys.stdin.read() if args.timeline == "-" else Path(args.timeline).read_text()
        except OSError as e:
            raise InputError(f"cannot read {args.timeline}: {e.strerror}") from e
        timeline = read_timeline(text, count, name=args.timeline)
    else:
        if len(args.query) != count:
            raise InputError(
                f"give --query {count} time(s), one per spec metric (got {len(args.query)})"
            )
        if not args.start:
            raise InputError("--start is required with --prometheus-url")
        now = round(datetime.now(UTC).timestamp()) * NS
        timeline = prometheus_timeline(
            args.prometheus_url,
            args.query,
            start=_instant(args.start, now=now),
            end=_instant(args.end, now=now),
            step=_seconds(args.step),
        )
    replicas = args.replicas if args.replicas is not None else (spec.min_replicas or 1)
    kw: dict[str, Any] = {"replicas": replicas, "request_milli": request, "options": options}
    kw["pod_ready_delay"] = args.pod_ready_delay
    without, result = None, None  # with spec.predictive: the run without it, and the comparison
    if controls.predictive is not None:
        without, steps, result = run_both(spec, timeline, controls, **kw)
    else:
        steps = simulate(spec, timeline, controls=controls, **kw)
    if args.json:
        for s in steps:
            sys.stdout.write(json.dumps(_json_step(s, controls=controls.present)) + "\n")
    else:
        sys.stdout.write(render_table(steps, count, controls=controls.present))
    if result is not None:
        text = (
            json.dumps(comparison_json(result)) if args.json else "\n" + render_comparison(result)
        )
        sys.stdout.write(text.rstrip("\n") + "\n")
    if args.plot:
        plot_both(without, steps, args.plot) if without is not None else plot(steps, args.plot)
    return 0


def _json_step(s: SimStep, *, controls: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "time": format_time_ns(s.time),
        "values": list(s.values),
        "current": s.current,
        "ready": s.ready,
        "desired": s.desired,
        "summary": s.summary,
    }
    if controls:  # only with a control: without one the output is what it always was
        out.update(fallback=s.fallback, paused=s.paused, schedules=list(s.schedules))
    if s.forecast:
        out["forecast"] = list(s.forecast)
    return out


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except InputError as e:
        sys.stderr.write(f"{PROG}: {e}\n")
        return 2
    except BrokenPipeError:
        return 0
