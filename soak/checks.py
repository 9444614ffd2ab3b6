"""The soak's invariants, as pure functions over what the run recorded. Each returns a
`Check`: its name, how many things it looked at, and the breaches (with a few examples)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from common.kubetime import format_time, parse_time

__all__ = [
    "Check",
    "Probe",
    "Sample",
    "adapter_answers",
    "bounds_in_log",
    "bounds_observed",
    "converged",
    "no_scale_down_on_failed_metric",
    "resource_slopes",
    "single_writer",
]

EXAMPLES = 5  # breaches quoted in the report per check


@dataclass
class Check:
    name: str
    looked_at: int = 0
    breaches: int = 0
    examples: list[str] = field(default_factory=list)
    note: str = ""

    def breach(self, text: str) -> None:
        self.breaches += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(text)


def _spec(entry: dict[str, Any]) -> dict[str, Any]:
    return dict(entry["document"]["autoscaler"]["spec"])


def _current(entry: dict[str, Any]) -> int:
    return int(entry["document"]["scale"]["spec"]["replicas"])


def _failed_metrics(entry: dict[str, Any]) -> bool:
    return any("error" in m for m in entry["document"].get("metrics") or [])


def no_scale_down_on_failed_metric(entries: Iterable[dict[str, Any]]) -> Check:
    """No rescale below the current replicas on a pass where a metric could not be read (the
    spec has no fallback field: a failed metric never allows a scale-down)."""
    check = Check("no scale-down on a pass with a failed metric")
    failed = 0
    for e in entries:
        check.looked_at += 1
        result = e.get("result") or {}
        if not _failed_metrics(e):
            continue
        failed += 1
        desired = int(result.get("desiredReplicas", _current(e)))
        if result.get("rescale") and desired < _current(e):
            name = e["document"]["autoscaler"]["spec"]["scaleTargetRef"]["name"]
            check.breach(f"{name} at {e['document']['now']}: {_current(e)} -> {desired}")
    check.note = f"{failed} passes had a failed metric"
    return check


def bounds_in_log(entries: Iterable[dict[str, Any]]) -> Check:
    """Every rescale the core decided lands within [minReplicas, maxReplicas]."""
    check = Check("rescales within [min, max] (decision log)")
    for e in entries:
        result = e.get("result") or {}
        if not result.get("rescale"):
            continue
        check.looked_at += 1
        spec = _spec(e)
        low, high = int(spec.get("minReplicas", 1)), int(spec["maxReplicas"])
        desired = int(result["desiredReplicas"])
        if not low <= desired <= high:
            check.breach(f"{spec['scaleTargetRef']['name']}: {desired} not in [{low}, {high}]")
    return check


def bounds_observed(observations: Iterable[tuple[float, str, int, int, int]]) -> Check:
    """(time, name, replicas, min, max) polled from the API: always within bounds."""
    check = Check("replicas within [min, max] (polled)")
    for t, name, replicas, low, high in observations:
        check.looked_at += 1
        if not low <= replicas <= high:
            check.breach(f"{name} at +{t:.0f}s: {replicas} not in [{low}, {high}]")
    return check


def single_writer(writes: Iterable[dict[str, Any]], *, min_gap: float) -> Check:
    """/scale writes of one object by two different autoscaler users must be at least
    `min_gap` seconds apart (lease duration - renew deadline: the earliest a new leader can
    act after the old one last could)."""
    check = Check("one /scale writer per lease term (sandbox audit)")
    last: dict[tuple[str, str], dict[str, Any]] = {}
    gaps = []
    for w in sorted(writes, key=lambda w: float(w["time"])):
        check.looked_at += 1
        key = (w["namespace"], w["name"])
        before = last.get(key)
        if before is not None and before["user"] != w["user"]:
            gap = float(w["time"]) - float(before["time"])
            gaps.append(gap)
            if gap < min_gap:
                check.breach(f"{key[1]}: {before['user']} then {w['user']} {gap:.2f}s apart")
        last[key] = w
    check.note = f"{len(gaps)} hand-overs, shortest {min(gaps):.1f}s" if gaps else "no hand-over"
    return check


@dataclass(frozen=True)
class Probe:
    t: float
    adapter: int
    status: int  # 0: no answer (connection refused or reset)
    seconds: float
    prom_fault: bool  # a Prometheus fault was in force
    other_fault: bool  # a sandbox fault, or the adapter (re)started within the grace period


def adapter_answers(probes: Iterable[Probe], *, timeout: float) -> Check:
    """Never a 500, never an answer later than the Prometheus timeout plus slack; while
    Prometheus fails, only 503 (or the NaN policy's 404 / an empty 200); while everything is
    healthy, 200."""
    check = Check("adapter: 503 only while Prometheus fails, never 500 or a hang")
    slack = 2.0  # seconds beyond the Prometheus timeout for TLS, queueing on a loaded machine
    for p in probes:
        check.looked_at += 1
        where = f"adapter-{p.adapter} at +{p.t:.0f}s: {p.status} in {p.seconds:.1f}s"
        allowed = (200, 404, 503) if p.prom_fault else (200,)
        hung = p.seconds > timeout + slack
        unexpected = not p.other_fault and p.status not in allowed
        if p.status == 500 or hung or unexpected:
            check.breach(where)
    return check


@dataclass(frozen=True)
class Sample:
    t: float
    process: str  # role, e.g. adapter-0
    incarnation: int  # how many times it was (re)started before this sample
    rss_mb: float
    fds: int
    tasks: float  # NaN when /metrics could not be read


def _slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope, per hour."""
    if len(points) < 3:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if var == 0:
        return 0.0
    return 3600 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var


def resource_slopes(
    samples: Iterable[Sample],
    *,
    warmup: float,
    judge_after: float,
    judged: tuple[str, ...] = ("adapter-", "autoscaler-"),
) -> tuple[Check, list[tuple[str, float, float, float, float]]]:
    """Per process, its longest-lived run after `warmup` seconds of it: slopes of RSS (MB/h),
    fds and tasks (per hour), over the whole run. Judged only on runs longer than `judge_after`
    seconds (a few minutes of a process are too short for a slope):
    - RSS: above 5 MB/h over the run's second half. The first half is warm-up too: bounded
      caches (Event aggregation, token reviews, selectors) fill and the allocator's high-water
      mark settles after the first relists; a leak keeps growing after that.
    - fds and tasks: grown when even the lowest count of the last quarter is above the highest
      of the first quarter. Both move by a few with connections and passes in flight; a leak
      lifts the floor above the earlier ceiling."""
    runs: dict[tuple[str, int], list[Sample]] = defaultdict(list)
    for s in samples:
        runs[(s.process, s.incarnation)].append(s)
    longest: dict[str, list[Sample]] = {}
    for (process, _), run in runs.items():
        start = run[0].t
        kept = [s for s in run if s.t - start >= warmup]
        if len(kept) > len(longest.get(process, [])):
            longest[process] = kept
    check = Check("RSS, fds, tasks flat after warm-up")
    rows = []
    for process, run in sorted(longest.items()):
        check.looked_at += len(run)
        span = run[-1].t - run[0].t if run else 0.0
        tasks = [(s.t, s.tasks) for s in run if s.tasks == s.tasks]
        rows.append(
            (
                process,
                span,
                _slope([(s.t, s.rss_mb) for s in run]),
                _slope([(s.t, float(s.fds)) for s in run]),
                _slope(tasks),
            )
        )
        if span < judge_after or len(run) < 8 or not process.startswith(judged):
            continue
        later = run[len(run) // 2 :]
        rss = _slope([(s.t, s.rss_mb) for s in later])
        if rss > 5.0:
            check.breach(f"{process}: RSS {rss:+.1f} MB/h over its last {span / 120:.0f} min")
        for label, series in (
            ("fds", [float(s.fds) for s in run]),
            ("tasks", [t for _, t in tasks]),
        ):
            quarter = len(series) // 4
            if quarter < 2:
                continue
            ceiling, floor = max(series[:quarter]), min(series[-quarter:])
            if floor > ceiling:
                check.breach(
                    f"{process}: {label} grew from at most {ceiling:.0f} to at least {floor:.0f}"
                )
    # the sandbox stands in for an API server and its etcd: it keeps every object and Event
    # written, so it grows by design; its slope is reported, not judged
    check.note = f"programs judged on runs over {judge_after / 60:.0f} min; sandbox reported"
    return check, rows


def converged(
    entries: Iterable[dict[str, Any]],
    replicas: dict[str, int],
    *,
    after: datetime,
    before: datetime,
) -> Check:
    """Each Autoscaler's target has the replicas that its last pass between `after` (every
    process serving again after the last fault) and `before` (3 sync periods later, when
    `replicas` were read) decided from all its metrics. A pass that could not read a metric
    holds the replicas, so the last pass that could read them all is the core's answer."""
    check = Check("converged to the core's answer after the last fault")
    last: dict[str, dict[str, Any]] = {}
    for e in entries:
        name = e["document"]["autoscaler"]["spec"]["scaleTargetRef"]["name"]
        now = parse_time(e["document"]["now"])
        usable = "result" in e and after <= now <= before and not _failed_metrics(e)
        # two replicas' logs: the later pass wins, whichever log holds it
        if usable and (name not in last or parse_time(last[name]["document"]["now"]) <= now):
            last[name] = e
    for name, have in sorted(replicas.items()):
        check.looked_at += 1
        final = last.get(name)
        if final is None:
            check.breach(f"{name}: no pass read its metrics after {format_time(after)}")
        elif int(final["result"]["desiredReplicas"]) != have:
            want, at = final["result"]["desiredReplicas"], final["document"]["now"]
            check.breach(f"{name}: {have} replicas, the core decided {want} at {at}")
    return check
