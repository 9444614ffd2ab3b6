"""What the demo saw, second by second, and the picture and summary made from it."""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Sample:
    """One observation of the whole system."""

    t: float  # seconds since the scenario started
    phase: str
    web_rps: float  # offered load on web, requests/s in total
    arrivals: float  # queue items arriving per second
    queue_depth: float
    web_replicas: int  # the Deployment's spec.replicas (what the autoscaler set)
    web_ready: int
    worker_replicas: int
    worker_ready: int
    web_metric: str  # the autoscaler's last reading, from its status ("" if none yet)
    worker_metric: str
    web_conditions: str  # short form, e.g. "AbleToScale ScalingActive !ScalingLimited"
    worker_conditions: str


def write_csv(samples: list[Sample], path: Path) -> None:
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=[f.name for f in fields(Sample)])
        writer.writeheader()
        for sample in samples:
            writer.writerow(asdict(sample))


def replica_path(values: list[int]) -> list[int]:
    """The sequence of distinct consecutive values: [1, 1, 3, 3, 1] -> [1, 3, 1]."""
    path: list[int] = []
    for value in values:
        if not path or path[-1] != value:
            path.append(value)
    return path


def summary_lines(samples: list[Sample]) -> list[str]:
    """The replica paths the demo prints at the end (CI asserts on these lines)."""
    web = replica_path([s.web_replicas for s in samples])
    worker = replica_path([s.worker_replicas for s in samples])
    peak_queue = max((s.queue_depth for s in samples), default=0.0)
    return [
        "web replica path: " + " -> ".join(map(str, web)),
        "worker replica path: " + " -> ".join(map(str, worker)),
        f"peak web load: {max((s.web_rps for s in samples), default=0):.0f} req/s; "
        f"peak queue depth: {peak_queue:.0f}",
    ]


def plot(samples: list[Sample], path: Path, *, native_web: bool = True) -> None:
    """Load and replicas over time, one panel per workload, as a PNG."""
    web_by = "native HorizontalPodAutoscaler" if native_web else "promscaler Autoscaler"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s.t for s in samples]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    fig.suptitle(
        "promscaler demo: one adapter, two consumers (native HPA for web, Autoscaler for worker)"
    )

    top.plot(t, [s.web_rps for s in samples], color="tab:blue", label="web load (req/s)")
    top.set_ylabel("requests / s", color="tab:blue")
    top_r = top.twinx()
    top_r.step(
        t,
        [s.web_replicas for s in samples],
        where="post",
        color="tab:red",
        label="web replicas (desired)",
    )
    top_r.step(
        t,
        [s.web_ready for s in samples],
        where="post",
        color="tab:orange",
        linestyle="--",
        label="web pods ready",
    )
    top_r.set_ylabel("replicas", color="tab:red")
    top.set_title(f"web: {web_by}, Pods metric http_requests_per_second, target 20 per pod")
    _legend(top, top_r)

    bottom.plot(t, [s.arrivals for s in samples], color="tab:green", label="arrivals (items/s)")
    bottom.plot(
        t, [s.queue_depth for s in samples], color="tab:purple", label="queue depth (items)"
    )
    bottom.set_ylabel("items")
    bottom_r = bottom.twinx()
    bottom_r.step(
        t,
        [s.worker_replicas for s in samples],
        where="post",
        color="tab:red",
        label="worker replicas (desired)",
    )
    bottom_r.set_ylabel("replicas", color="tab:red")
    bottom.set_title(
        "worker: promscaler Autoscaler, External metric queue_depth, 10 per replica, minReplicas 0"
    )
    bottom.set_xlabel("seconds")
    _legend(bottom, bottom_r)

    _shade_phases(samples, (top, bottom))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _legend(left: Any, right: Any) -> None:
    lines, labels = left.get_legend_handles_labels()
    more_lines, more_labels = right.get_legend_handles_labels()
    left.legend(lines + more_lines, labels + more_labels, loc="center right", fontsize=8)


def _shade_phases(samples: list[Sample], axes: tuple[Any, ...]) -> None:
    """Label each phase of the load shape along the top panel."""
    start, current = 0.0, samples[0].phase if samples else ""
    spans = []
    for s in samples:
        if s.phase != current:
            spans.append((start, s.t, current))
            start, current = s.t, s.phase
    if samples:
        spans.append((start, samples[-1].t, current))
    for i, (a, b, name) in enumerate(spans):
        for ax in axes:
            if i % 2:
                ax.axvspan(a, b, color="0.93", zorder=0)
        axes[0].text(
            (a + b) / 2,
            0.97,
            name,
            transform=axes[0].get_xaxis_transform(),
            ha="center",
            va="top",
            fontsize=8,
            color="0.35",
        )
