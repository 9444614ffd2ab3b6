"""The soak's output: the table of invariants with counts, a JSON summary, and soak.png."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .checks import Check, Sample
from .run import Record

__all__ = ["plot", "table", "write_summary"]


def table(
    checks: list[Check],
    counts: dict[str, Any],
    slopes: list[tuple[str, float, float, float, float]],
) -> str:
    width = max(len(c.name) for c in checks)
    lines = [f"{'invariant':<{width}}  {'checked':>9}  {'breaches':>8}  note"]
    for c in checks:
        lines.append(f"{c.name:<{width}}  {c.looked_at:>9}  {c.breaches:>8}  {c.note}")
        lines += [f"{'':<{width}}    ! {example}" for example in c.examples]
    lines.append("")
    lines += [f"{key}: {value}" for key, value in counts.items()]
    lines.append("")
    lines.append("process       after warm-up   RSS MB/h    fds/h   tasks/h")
    for process, span, rss, fds, tasks in slopes:
        lines.append(
            f"{process:<13} {span / 60:>9.1f} min {rss:>+10.1f} {fds:>+8.1f} {tasks:>+9.1f}"
        )
    return "\n".join(lines)


def counts(record: Record, *, passes: int, rescales: int) -> dict[str, Any]:
    kinds = Counter(kind for _, _, kind in record.faults)
    return {
        "passes (decision log, both replicas)": passes,
        "rescales decided": rescales,
        "/scale writes seen by the sandbox": len(record.writes),
        "faults by kind": ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none",
        "restarts by process": ", ".join(f"{k} {n}" for k, n in sorted(record.incarnations.items()))
        or "none",
        "adapter probes": len(record.probes),
        "unexpected exits": len(record.exits),
    }


def write_summary(path: Path, *, seed: int, minutes: float, text: str, ok: bool) -> None:
    path.write_text(json.dumps({"seed": seed, "minutes": minutes, "ok": ok, "table": text}))


def plot(record: Record, path: Path, *, shown: int = 4) -> None:
    """Faults over time, the replicas of a few Autoscalers, and each process's RSS."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (faults, replicas, rss) = plt.subplots(3, 1, figsize=(12, 9), sharex=True)
    fig.suptitle("promscaler soak: faults, replicas and memory over time")
    kinds = sorted({kind for _, _, kind in record.faults})
    for start, end, kind in record.faults:
        faults.barh(kinds.index(kind), end - start, left=start, height=0.6, color="tab:red")
    faults.set_yticks(range(len(kinds)), kinds, fontsize=7)
    faults.set_title("faults injected (seeded schedule)")
    picked = _picked(record, shown)
    for name in picked:
        points = record.series.get(name, [])
        replicas.step([p[0] for p in points], [p[1] for p in points], where="post", label=name)
    replicas.set_ylabel("replicas")
    replicas.legend(fontsize=7, loc="upper right")
    replicas.set_title("spec.replicas of a few Autoscalers' targets")
    by_process: dict[str, list[tuple[float, float]]] = {}
    for s in record.samples:
        by_process.setdefault(s.process, []).append((s.t, s.rss_mb))
    for process, usage in sorted(by_process.items()):
        rss.plot([p[0] for p in usage], [p[1] for p in usage], label=process)
    rss.set_ylabel("RSS (MB)")
    rss.set_xlabel("seconds")
    rss.legend(fontsize=7, loc="upper left")
    rss.set_title("resident memory per process (restarts start again low)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _picked(record: Record, shown: int) -> list[str]:
    """One Autoscaler per kind of metric and minReplicas, up to `shown`."""
    seen: dict[tuple[str, int], str] = {}
    for m in record.members:
        seen.setdefault((m.metric, m.min_replicas), m.name)
    return list(seen.values())[:shown]


def write_samples(path: Path, samples: Iterable[Sample]) -> None:
    """Every resource sample as CSV, so a slope can be looked at again after the run."""
    lines = ["t,process,incarnation,rss_mb,fds,tasks"]
    lines += [
        f"{s.t:.1f},{s.process},{s.incarnation},{s.rss_mb:.2f},{s.fds},{s.tasks:g}" for s in samples
    ]
    path.write_text("\n".join(lines) + "\n")
