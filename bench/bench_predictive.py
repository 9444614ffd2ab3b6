"""Predictive scaling on generated and real traces: does it cut the time short of demand, and at
what cost?

Two seeded traces of 21 days and a real one of 84, one pass every 15 s, an External metric
(requests per second) with an AverageValue target of 50 per replica, minReplicas 2, maxReplicas
200, pods ready 60 s after they are created, no behavior (upstream's defaults), `predictive:
{mode: Scale, horizon: 5m, history: 336h, seasonality: [24h, 168h]}`:

- `seasonal`: a working-day cycle (a steep morning rise, an evening fall), weekends at 40%, a
  trend of +0.5% a day, correlated noise (about 3%), a one-off spike (x1.8 for 20 minutes) on
  day 10 (in the history the model reads later), a public holiday on day 19 (a Tuesday at the
  weekend level), and an unforeseeable spike (x1.5 for 10 minutes) on day 18;
- `flat`: no cycle: a level that wanders slowly, correlated noise and random bursts;
- `taylor`: a real series, the half-hourly electricity demand of England and Wales from Monday
  5 June to Sunday 27 August 2000 (12 weeks; J. W. Taylor, 2003), as the `pmdarima` package
  ships it (`pmdarima/datasets/taylor.py`): megawatts / 10 as requests per second (about 1,900
  to 3,900), joined linearly between the half hours. The first run downloads pmdarima's wheel
  with pip (`--no-deps`) into .cache/bench/ and reads the numbers out of its source; nothing of
  pmdarima is imported or installed.

Each trace is replayed with `simulate` with and without `predictive` (the model sees only the
points before each pass; the goals are decided at the default `tolerance`, 0.05, and the replay is
repeated at tolerances 0 and 0.1 to show the trade), and measured over days 14 to 21 (the first two
weeks are the history the weekly season needs; `taylor` over days 14 to 84): pod-seconds short
of demand (demand above ready replicas x target), replica-seconds, scale events. Goals (issue 37):
on `seasonal` and `taylor`, prediction cuts the pod-seconds short by at least 50% for at most 10%
more replica-seconds; on `flat` it is no worse than reactive (no more pod-seconds short, at most
10% more replica-seconds).

With --callgrind (needs valgrind), the decision core's cost in instructions: a pass without
`predictive` (the control), a pass with it (the decision, and the forecast from the cached fit,
computed once per one-minute grid step, so on every fourth pass), a pass whose forecast raises
the recommendation (the decision is then made twice, to report whether the forecast changed it),
one refit of the model (14 days of one-minute history, two seasons; simulate refits every
30 minutes of replay time), and one refit of that history 30 minutes on from the previous
refit's memo (autoscaler/core/forecast_memo.py), as the controller and simulate make them.
The figures go to bench/results/bench_predictive.json (bench/record.py): the replays' counts,
the cuts as ratios against the reactive replay of the same run, which decide the goals, the
instruction counts, and the replays' CPU per pass (context).

    .venv/bin/python bench/bench_predictive.py [--callgrind] [--json FILE]
"""

from __future__ import annotations

import argparse
import ast
import functools
import math
import os
import random
import shutil
import subprocess
import sys
import time
import zipfile
from array import array
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autoscaler.core import parse_spec
from autoscaler.core.controls_document import parse_controls
from autoscaler.core.controls_model import EMPTY_CONTROL_STATUS, Controls
from autoscaler.core.forecast import Forecast, ModelFit, Series, fit, forecast
from autoscaler.core.forecast_memo import refit
from autoscaler.core.model import NS, History, MetricItems, MetricSample, Pod, Scale, Spec, Status
from autoscaler.core.orchestrate import decide_controlled
from autoscaler.core.replay_figures import RunFigures, run_figures
from autoscaler.core.simulate import SimPoint, simulate
from bench import record

T0 = 1_767_225_600 * NS  # 2026-01-01T00:00:00Z, a Thursday
DAYS = 21
STEP = 15  # seconds: the controller's sync period
MEASURED_FROM = 14  # days: the first two weeks are history
READY_DELAY = 60  # seconds from creation to ready
SEED = 37

OBJ: dict[str, Any] = {
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2,
        "maxReplicas": 200,
        "metrics": [
            {
                "type": "External",
                "external": {
                    "metric": {"name": "http_requests_per_second"},
                    "target": {"type": "AverageValue", "averageValue": "50"},
                },
            }
        ],
        "predictive": {
            "mode": "Scale",
            "horizon": "5m",
            "history": "336h",
            "seasonality": ["24h", "168h"],
        },
    }
}


def _logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def seasonal(seed: int) -> list[float]:
    rng = random.Random(seed)
    noise = 0.0
    out = []
    for i in range(DAYS * 86400 // STEP):
        t = i * STEP
        day, hour = t // 86400, (t % 86400) / 3600
        weekday = (3 + day) % 7  # 0 Monday; day 0 is a Thursday
        shape = 0.15 + 0.85 * _logistic((hour - 8) / 0.3) * (1 - _logistic((hour - 18.5) / 0.6))
        weekend = weekday >= 5 or day == 19  # day 19, a Tuesday, is a public holiday
        v = 4000 * shape * (0.4 if weekend else 1.0) * (1 + 0.005 * t / 86400)
        noise = 0.95 * noise + rng.gauss(0, 0.01)
        v *= 1 + noise
        if day == 10 and 14 <= hour < 14 + 1 / 3:
            v *= 1.8  # a one-off spike in the history
        if day == 18 and 15 <= hour < 15 + 1 / 6:  # a Monday
            v *= 1.5  # an unforeseeable spike in the measured week
        out.append(max(0.0, v))
    return out


def flat(seed: int) -> list[float]:
    rng = random.Random(seed)
    level, noise, burst = math.log(1500), 0.0, 0
    out = []
    for _ in range(DAYS * 86400 // STEP):
        level += rng.gauss(0, 0.004)
        level = min(max(level, math.log(300)), math.log(5000))
        noise = 0.95 * noise + rng.gauss(0, 0.01)
        if burst == 0 and rng.random() < 1 / 2000:
            burst = rng.randint(20, 80)  # 5 to 20 minutes
        burst = max(0, burst - 1)
        out.append(math.exp(level) * (1 + noise) * (1.6 if burst else 1.0))
    return out


ROOT = Path(__file__).resolve().parent.parent
PMDARIMA = "pmdarima==2.1.1"  # its wheel's pmdarima/datasets/taylor.py holds the series
PMDARIMA_CACHE = ROOT / ".cache" / "bench" / "pmdarima"
TAYLOR_POINTS = 4032  # 12 weeks of half hours
HALF_HOUR = 1800


def taylor_half_hours() -> list[float]:
    """The 4,032 half-hourly values of Taylor's series, read from pmdarima's wheel (downloaded
    once; the numbers are the list literal `load_taylor` passes to `np.array`)."""
    wheels = sorted(PMDARIMA_CACHE.glob("pmdarima-*.whl"))
    if not wheels:
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        subprocess.run([*pip, "--dest", str(PMDARIMA_CACHE), PMDARIMA], check=True)
        wheels = sorted(PMDARIMA_CACHE.glob("pmdarima-*.whl"))
    with zipfile.ZipFile(wheels[-1]) as wheel:
        source = wheel.read("pmdarima/datasets/taylor.py").decode()
    found = [
        ast.literal_eval(node.args[0])
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "array"
        and node.args
        and isinstance(node.args[0], ast.List)
    ]
    if len(found) != 1 or len(found[0]) != TAYLOR_POINTS:
        raise SystemExit(f"{wheels[-1].name}: no list of {TAYLOR_POINTS} values in taylor.py")
    return [float(v) for v in found[0]]


def taylor() -> list[float]:
    """Taylor's series at one value per pass: megawatts / 10, linear between the half hours
    (the last half hour holds its value)."""
    half_hours = taylor_half_hours()
    out = []
    for i in range(len(half_hours) * HALF_HOUR // STEP):
        k, into = divmod(i * STEP, HALF_HOUR)
        after = half_hours[min(k + 1, len(half_hours) - 1)]
        out.append((half_hours[k] + (after - half_hours[k]) * into / HALF_HOUR) / 10)
    return out


TRACES: dict[str, Callable[[], list[float]]] = {
    "seasonal": lambda: seasonal(SEED),
    "flat": lambda: flat(SEED),
    "taylor": taylor,
}
SEASONAL = {"seasonal", "taylor"}  # the traces held to the cut goal


def spec_and_controls() -> tuple[Spec, Controls]:
    return parse_spec(OBJ["spec"], "spec"), parse_controls({}, OBJ)


# spec.predictive.tolerance values replayed besides the default (the goals are decided at the
# default): what a user trades by narrowing or widening the forecast's band
SWEEP = {"tolerance_0": 0.0, "tolerance_0_1": 0.1}


def replay(values: list[float]) -> dict[str, tuple[RunFigures, float]]:
    """Each mode's figures over the measured week, and its replay's CPU seconds per pass:
    `reactive`, `predictive` (the default tolerance), then one per SWEEP value."""
    spec, controls = spec_and_controls()
    timeline = [SimPoint(T0 + i * STEP * NS, (v,)) for i, v in enumerate(values)]
    since = T0 + MEASURED_FROM * 86400 * NS  # the rest of the trace is measured
    out: dict[str, tuple[RunFigures, float]] = {}
    assert controls.predictive is not None
    runs = [("reactive", replace(controls, predictive=None)), ("predictive", controls)]
    runs += [
        (name, replace(controls, predictive=replace(controls.predictive, tolerance=tolerance)))
        for name, tolerance in SWEEP.items()
    ]
    for name, ctl in runs:
        started = time.process_time()
        steps = simulate(spec, timeline, replicas=2, pod_ready_delay=READY_DELAY, controls=ctl)
        cpu = time.process_time() - started
        out[name] = (run_figures(spec, steps, since=since), cpu / len(steps))
    return out


def record_trace(run: record.Run, trace: str, replays: dict[str, tuple[RunFigures, float]]) -> str:
    """The trace's figures and goals in `run`; returns the line printed for it."""
    for mode, (f, cpu) in replays.items():
        if mode in SWEEP:
            record_sweep(run, trace, mode, f, replays["reactive"][0])
            continue
        without = "without" if mode == "reactive" else "with"
        what = f"{trace}, {without} prediction"
        run.figure(
            f"{trace}_{mode}_short",
            f"{what}: pod-seconds short of demand",
            round(f.short_pod_seconds, 1),
            "pod-seconds",
            kind="count",
        )
        run.figure(
            f"{trace}_{mode}_replica_seconds",
            f"{what}: replica-seconds",
            round(f.replica_seconds, 1),
            "replica-seconds",
            kind="count",
        )
        run.figure(
            f"{trace}_{mode}_scale_events",
            f"{what}: scale events",
            f.scale_events,
            "scale writes",
            kind="count",
        )
        run.figure(
            f"{trace}_{mode}_cpu_per_pass",
            f"{what}: replay CPU per pass",
            round(cpu * 1e6, 1),
            "us",
            kind="time",
        )
    r, p = replays["reactive"][0], replays["predictive"][0]
    # with nothing short in the control there is nothing to cut: no cut, not an infinite one
    cut = 1 - p.short_pod_seconds / r.short_pod_seconds if r.short_pod_seconds else 0.0
    extra = p.replica_seconds / r.replica_seconds - 1
    cut_goal, cost_goal = f"{trace}_short_cut", f"{trace}_replica_cost"
    run.figure(
        f"{trace}_short_cut",
        f"{trace}: pod-seconds short cut by prediction (against the reactive replay)",
        round(cut, 4),
        "x",
        kind="ratio",
        decides=cut_goal,
    )
    run.figure(
        f"{trace}_extra_replica_seconds",
        f"{trace}: extra replica-seconds with prediction (against the reactive replay)",
        round(extra, 4),
        "x",
        kind="ratio",
        decides=cost_goal,
    )
    if trace in SEASONAL:
        run.goal(
            cut_goal,
            f"{trace} trace: prediction cuts the pod-seconds short of demand by at least 50%",
            figure=f"{trace}_short_cut",
            met=cut >= 0.5,
        )
    else:
        run.goal(
            cut_goal,
            f"{trace} trace (no seasonality): no more pod-seconds short of demand than reactive",
            figure=f"{trace}_short_cut",
            met=p.short_pod_seconds <= r.short_pod_seconds,
        )
    run.goal(
        cost_goal,
        f"{trace} trace: at most 10% more replica-seconds than reactive",
        figure=f"{trace}_extra_replica_seconds",
        met=extra <= 0.10,
    )
    return (
        f"{trace:9} short {r.short_pod_seconds:9.0f} -> {p.short_pod_seconds:9.0f} pod-s "
        f"({cut * 100:+.1f}% cut), replica-s {r.replica_seconds:.0f} -> "
        f"{p.replica_seconds:.0f} ({extra * 100:+.2f}%), "
        f"events {r.scale_events} -> {p.scale_events}"
    ) + "".join(
        f"\n{'':9} tolerance {SWEEP[mode]:g}: short {f.short_pod_seconds:9.0f} pod-s "
        f"({(1 - f.short_pod_seconds / r.short_pod_seconds) * 100:+.1f}% cut), replica-s "
        f"{(f.replica_seconds / r.replica_seconds - 1) * 100:+.2f}%, events {f.scale_events}"
        for mode, (f, _) in replays.items()
        if mode in SWEEP and r.short_pod_seconds
    )


def record_sweep(run: record.Run, trace: str, mode: str, f: RunFigures, r: RunFigures) -> None:
    """A swept tolerance's replay: its counts, and its cut and extra against the reactive one."""
    tolerance = SWEEP[mode]
    what = f"{trace}, with prediction at tolerance {tolerance:g}"
    run.figure(
        f"{trace}_{mode}_short",
        f"{what}: pod-seconds short of demand",
        round(f.short_pod_seconds, 1),
        "pod-seconds",
        kind="count",
    )
    run.figure(
        f"{trace}_{mode}_scale_events",
        f"{what}: scale events",
        f.scale_events,
        "scale writes",
        kind="count",
    )
    cut = 1 - f.short_pod_seconds / r.short_pod_seconds if r.short_pod_seconds else 0.0
    run.figure(
        f"{trace}_{mode}_short_cut",
        f"{what}: pod-seconds short cut (against the reactive replay)",
        round(cut, 4),
        "x",
        kind="ratio",
    )
    run.figure(
        f"{trace}_{mode}_extra_replica_seconds",
        f"{what}: extra replica-seconds (against the reactive replay)",
        round(f.replica_seconds / r.replica_seconds - 1, 4),
        "x",
        kind="ratio",
    )


# ---- the decision core's cost under callgrind ------------------------------------------------

PASSES = 200
COUNTED = (  # (kind, units counted, what one unit is)
    ("reactive", PASSES, "a pass without `predictive` (the control)"),
    ("predictive", PASSES, "a pass with `predictive`, forecast below the reactive proposal"),
    ("raised", PASSES, "a pass whose forecast raises the recommendation (decided twice)"),
    ("refit", 5, "one refit (14 days of one-minute history, two seasons)"),
    (
        "refit-incremental",
        20,
        "one refit of that history 30 minutes on, from the memo of the one before (its oldest "
        "30 minutes dropped, its last 5 read again)",
    ),
)


def _core_setup() -> tuple[Spec, Controls, Series, ModelFit, int]:
    spec, controls = spec_and_controls()
    values = seasonal(SEED)
    minutes = [max(values[i : i + 4]) for i in range(0, len(values), 4)]  # one-minute highs
    now = T0 + 15 * 86400 * NS + 10 * 3600 * NS  # day 15, 10:00
    series = Series(T0, 60 * NS, minutes[: (now - T0) // (60 * NS)])
    assert controls.predictive is not None
    p = controls.predictive
    model = fit(series, now=now, horizon=p.horizon, seasonality=p.seasonality)
    return spec, controls, series, model, now


def _passes(
    kind: str, setup: tuple[Spec, Controls, Series, ModelFit, int]
) -> Callable[[int], None]:
    """A function running n passes of `kind` (set up before: only the passes are counted)."""
    spec, controls, series, model, now = setup
    horizon = 300 * NS
    # the forecast is about 4,400 rps: at 5,000 rps (100 replicas) it stays below the reactive
    # proposal; at 2,000 rps (40 replicas) it raises it on every pass
    value, replicas = (2_000_000, 40) if kind == "raised" else (5_000_000, 100)
    if kind == "reactive":
        controls = replace(controls, predictive=None)
    pods = [Pod(f"p{i}", ready="True", start_time=0, ready_transition=0) for i in range(replicas)]
    scale = Scale(replicas, replicas, "app=web")

    def run(passes: int) -> None:
        status, history, state = Status(replicas, replicas), History(), EMPTY_CONTROL_STATUS
        fc: tuple[Forecast | None, ...] = ()
        for i in range(passes):
            at = now + i * STEP * NS
            if kind != "reactive" and (not fc or at % (60 * NS) < STEP * NS):
                # once per grid minute, as simulate and a controller keep it
                fc = (forecast(series, model, now=at, horizon=horizon),)
            d = decide_controlled(
                spec,
                status,
                scale,
                pods,
                [MetricItems((MetricSample(value, at),))],
                history,
                now=at,
                controls=controls,
                state=state,
                forecasts=fc,
            )
            status, history, state = d.status, d.history, d.controls or EMPTY_CONTROL_STATUS

    return run


def _refits(setup: tuple[Spec, Controls, Series, ModelFit, int]) -> Callable[[int], None]:
    _, controls, series, _, now = setup
    assert controls.predictive is not None
    p = controls.predictive

    def run(refits: int) -> None:
        for i in range(refits):
            fit(series, now=now + i * 60 * NS, horizon=p.horizon, seasonality=p.seasonality)

    return run


def _incremental_refits(
    setup: tuple[Spec, Controls, Series, ModelFit, int],
) -> Callable[[int], None]:
    """Refits as a controller makes them: the history 30 minutes on (its oldest 30 minutes
    dropped, its last 5 read again with other values), from the memo of the refit before."""
    _, controls, series, _, now = setup
    assert controls.predictive is not None
    p = controls.predictive
    step, values = series.step, list(series.values)
    earlier = Series(series.start, step, values[:-30])
    _, memo = refit(
        earlier, now=now - 30 * step, horizon=p.horizon, seasonality=p.seasonality, memo=None
    )
    later = values[30:]
    for i in range(len(later) - 35, len(later) - 30):
        later[i] *= 1.01  # the overlap read again: a rate's newest steps moved
    moved = Series(series.start + 30 * step, step, array("d", later))  # as the controller holds it

    # checked before anything is counted: fit's answer, and most of the work reused
    model, made = refit(moved, now=now, horizon=p.horizon, seasonality=p.seasonality, memo=memo)
    assert model == fit(moved, now=now, horizon=p.horizon, seasonality=p.seasonality)
    assert made.stats.terms_reused > 10 * made.stats.terms_computed, made.stats

    def run(refits: int) -> None:
        for _ in range(refits):  # a memo is never changed by a refit: each one does the same work
            refit(moved, now=now, horizon=p.horizon, seasonality=p.seasonality, memo=memo)

    return run


def _toggle(*args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(os.getpid())], check=True, capture_output=True)


def counted(kind: str, n: int) -> None:
    """Runs under callgrind (collection off): switches it on around `n` units of `kind`."""
    setup = _core_setup()
    runs = {"refit": _refits, "refit-incremental": _incremental_refits}
    run = runs.get(kind, functools.partial(_passes, kind))(setup)
    run(2)  # warm the memos and imports
    _toggle("--zero")
    _toggle("-i", "on")
    run(n)
    _toggle("-i", "off")


def callgrind(kind: str, n: int) -> float | None:
    """Instructions per unit (pass or refit), or None when valgrind is missing or failed."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        return None
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-predictive-callgrind.{os.getpid()}"
    argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-instr=no"]
    argv += [f"--callgrind-out-file={out}.%p", sys.executable, __file__, "--counted", kind, str(n)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    for leftover in out.parent.glob(out.name + ".*"):
        leftover.unlink()
    total = [line.split()[-1] for line in done.stderr.splitlines() if "Collected :" in line]
    if done.returncode != 0 or not total:
        print(f"callgrind failed for {kind} ({done.returncode}): {done.stderr[-300:]}")
        return None
    # the setup and the warm-up ran with collection off: only the n units are counted
    return int(total[-1]) / n


def record_cost(run: record.Run) -> None:
    per: dict[str, float] = {}
    for kind, n, what in COUNTED:
        counted_per = callgrind(kind, n)
        print(
            f"callgrind {kind:10}: "
            + ("skipped" if counted_per is None else f"{counted_per / 1e6:.3f} M")
        )
        if counted_per is None:
            run.note(f"callgrind did not count {kind}: no instruction count for it in this run")
            continue
        per[kind] = counted_per
        run.figure(
            f"instructions_{kind}",
            f"decision core: {what}",
            round(counted_per),
            "instructions",
            kind="count",
        )
    if "reactive" in per and "predictive" in per:
        run.figure(
            "instructions_predictive_over_reactive",
            "decision core: a pass with `predictive` against one without",
            round(per["predictive"] / per["reactive"], 3),
            "x",
            kind="ratio",
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--callgrind", action="store_true", help="also count instructions")
    record.add_json_option(parser)
    parser.add_argument("--counted", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.counted:
        counted(args.counted[0], int(args.counted[1]))
        return
    run = record.Run.begin(args)
    for trace, make in TRACES.items():
        print(record_trace(run, trace, replay(make())), flush=True)
    run.note(
        f"seed {SEED}; {PMDARIMA}'s Taylor series; each trace replayed with `simulate` without "
        f"prediction and with it at three tolerances, measured from day {MEASURED_FROM} to its "
        f"end (day {DAYS}; `taylor`: day {TAYLOR_POINTS * HALF_HOUR // 86400}): the counts are "
        "the same on every run of this commit"
    )
    if args.callgrind:
        record_cost(run)
    else:
        run.note("run without --callgrind: no instruction counts")
    run.write()


if __name__ == "__main__":
    main()
