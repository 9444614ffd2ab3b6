"""`simulate` with `spec.predictive`: the replay run with prediction and without, side by side
(docs/predictive.md "simulate"). The prediction run acts on its forecasts whatever the mode (it
shows what `Scale` would do); the other run has no `predictive` at all."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from autoscaler.core import Controls
from autoscaler.core.model import NS, Spec
from autoscaler.core.predictive_model import SCALE
from autoscaler.core.replay_figures import RunFigures, run_figures
from autoscaler.core.simulate import SimPoint, SimStep, simulate

__all__ = [
    "Comparison",
    "compare",
    "comparison_json",
    "plot_both",
    "render_comparison",
    "run_both",
    "runs",
]


@dataclass(frozen=True, slots=True)
class Comparison:
    reactive: RunFigures
    predictive: RunFigures


def runs(controls: Controls) -> tuple[Controls, Controls]:
    """(without prediction, with prediction acting)."""
    assert controls.predictive is not None
    acting = replace(controls, predictive=replace(controls.predictive, mode=SCALE))
    return replace(controls, predictive=None), acting


def run_both(
    spec: Spec, timeline: Sequence[SimPoint], controls: Controls, **kw: Any
) -> tuple[list[SimStep], list[SimStep], Comparison]:
    """(the run without prediction, the run with it, their comparison); `kw` as `simulate`'s."""
    plain, acting = runs(controls)
    without = simulate(spec, timeline, controls=plain, **kw)
    steps = simulate(spec, timeline, controls=acting, **kw)
    request = kw.get("request_milli", 1000)
    return without, steps, compare(spec, without, steps, request_milli=request)


def compare(
    spec: Spec,
    reactive: Sequence[SimStep],
    predictive: Sequence[SimStep],
    *,
    request_milli: int,
) -> Comparison:
    return Comparison(
        run_figures(spec, reactive, request_milli=request_milli),
        run_figures(spec, predictive, request_milli=request_milli),
    )


def _change(a: float, b: float) -> str:
    if a == 0:
        return "" if b == 0 else "(from 0)"
    return f"({(b - a) / a:+.1%})"


def render_comparison(c: Comparison) -> str:
    r, p = c.reactive, c.predictive
    rows = [
        ("", "without prediction", "with prediction", ""),
        (
            "pod-seconds short of demand",
            f"{r.short_pod_seconds:.0f}",
            f"{p.short_pod_seconds:.0f}",
            _change(r.short_pod_seconds, p.short_pod_seconds),
        ),
        (
            "replica-seconds",
            f"{r.replica_seconds:.0f}",
            f"{p.replica_seconds:.0f}",
            _change(r.replica_seconds, p.replica_seconds),
        ),
        ("scale events", str(r.scale_events), str(p.scale_events), ""),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
    return "\n".join(lines) + "\n"


def comparison_json(c: Comparison) -> dict[str, Any]:
    def one(f: RunFigures) -> dict[str, Any]:
        return {
            "shortPodSeconds": round(f.short_pod_seconds, 3),
            "replicaSeconds": round(f.replica_seconds, 3),
            "scaleEvents": f.scale_events,
        }

    return {
        "comparison": {"withoutPrediction": one(c.reactive), "withPrediction": one(c.predictive)}
    }


def plot_both(reactive: Sequence[SimStep], predictive: Sequence[SimStep], path: str) -> None:
    """The metric with its forecasts, and the ready and desired replicas of both runs."""
    from autoscaler.simulate_cli import InputError

    try:
        matplotlib: Any = importlib.import_module("matplotlib")
        matplotlib.use("Agg")  # files only, never a window
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError as e:
        raise InputError("--plot needs matplotlib: pip install 'promscaler[tools]'") from e
    times = [datetime.fromtimestamp(s.time / NS, UTC) for s in predictive]
    fig, (load_ax, rep_ax) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    for i in range(len(predictive[0].values) if predictive else 0):
        load_ax.plot(times, [s.values[i] for s in predictive], label=f"metric[{i}]", alpha=0.7)
        load_ax.plot(
            times,
            [s.forecast[i] if len(s.forecast) > i else None for s in predictive],
            label=f"metric[{i}] forecast (highest within the horizon)",
            linestyle=":",
        )
    load_ax.set_ylabel("metric value")
    load_ax.legend(loc="upper left")
    for steps, name, color in (
        (reactive, "without prediction", "tab:red"),
        (predictive, "with prediction", "tab:green"),
    ):
        rep_ax.step(
            times, [s.ready for s in steps], where="post", color=color, label=f"ready, {name}"
        )
        rep_ax.step(
            times,
            [s.desired for s in steps],
            where="post",
            color=color,
            linestyle="--",
            alpha=0.5,
            label=f"desired, {name}",
        )
    rep_ax.set_ylabel("replicas")
    rep_ax.legend(loc="upper left")
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
