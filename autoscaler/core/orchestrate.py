"""The controls around the upstream decision, in the order they apply (docs/decision-document.md,
"The controls"): schedules bound [min, max]; the metrics are measured once; failures are
counted and metrics in fallback propose their fallback; activation and the cooldowns shape the
recommendation; `decide` (upstream's pass) decides; pause and conflicts act on its result.

With no control present this is `decide`, bit for bit. All memory is in `ControlStatus`, which
the caller persists in the Autoscaler's status, so a restart or a failover changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from autoscaler.core.activation import active_flags
from autoscaler.core.conditions import ABLE_TO_SCALE, FALSE, TRUE, Conditions
from autoscaler.core.controls_model import (
    EMPTY_CONTROL_STATUS,
    NO_CONTROLS,
    ActiveSchedule,
    ControlEvent,
    Controls,
    ControlStatus,
    MetricHealth,
)
from autoscaler.core.cooldown import DownWindow, last_active_time, zero_shape
from autoscaler.core.decide import decide
from autoscaler.core.failures import count_failures
from autoscaler.core.fallback import fallback_events, fallback_replicas, with_fallback
from autoscaler.core.finish import unwritten
from autoscaler.core.forecast import Forecast
from autoscaler.core.measure import Outcome, measure, selector_problem
from autoscaler.core.model import (
    DEFAULT_OPTIONS,
    Condition,
    ControllerOptions,
    Decision,
    History,
    MetricInput,
    Pod,
    Scale,
    Shape,
    Spec,
    Status,
)
from autoscaler.core.normalize import scale_down_window
from autoscaler.core.pause import Pause, apply_pause, pause_report, read_pause
from autoscaler.core.predictive import PREDICTIVE, Predicted, predict, predictive_condition
from autoscaler.core.proposal import MetricFailure, Proposal
from autoscaler.core.schedules import effective_bounds, open_windows

__all__ = ["decide_controlled"]

PAUSED = "Paused"
FALLBACK = "Fallback"
AMBIGUOUS = "AmbiguousTarget"


@dataclass(frozen=True, slots=True)
class _Before:
    """What the controls settle before upstream decides."""

    spec: Spec  # with the effective [min, max] of the open windows
    windows: tuple[ActiveSchedule, ...]
    window_lines: tuple[str, ...]
    outcomes: tuple[Outcome, ...] | None  # fallback proposals in place; None: nothing measured
    health: tuple[MetricHealth, ...]
    active: bool | None  # None: neither activation blocks nor scaleToZero
    in_fallback: bool
    last_active: int | None
    shape: Shape | None
    predicted: Predicted | None = None  # spec.predictive's proposals and report


def decide_controlled(
    spec: Spec,
    status: Status,
    scale: Scale,
    pods: Sequence[Pod],
    metrics: Sequence[MetricInput],
    history: History | None = None,
    *,
    now: int,
    options: ControllerOptions = DEFAULT_OPTIONS,
    controls: Controls = NO_CONTROLS,
    state: ControlStatus = EMPTY_CONTROL_STATUS,
    forecasts: Sequence[Forecast | None] = (),
) -> Decision:
    """`decide` with the controls: `controls` from the spec, metadata and controller, `state`
    the controls' memory from the status, `forecasts` per spec metric for `spec.predictive`
    (None: no history for that metric yet). The Decision's `controls` is the new memory and
    `events` what to record."""
    if not controls.present:
        decision = decide(spec, status, scale, pods, metrics, history, now=now, options=options)
        return decision if state == EMPTY_CONTROL_STATUS else _retired(decision, state, now=now)

    def settled(with_forecasts: Sequence[Forecast | None] | None) -> tuple[_Before, Decision]:
        got = _settle(
            spec, scale, pods, metrics, history, now, options, controls, state, with_forecasts
        )
        outcomes, shape = got.outcomes, got.shape
        args = (got.spec, status, scale, pods, metrics, history)
        return got, decide(*args, now=now, options=options, outcomes=outcomes, shape=shape)

    before, decision = settled(forecasts)
    if before.predicted is not None and before.predicted.raised:
        # did the forecasts change what is written? decide once more without them to tell
        _, reactive = settled(None)
        changed = reactive.desired_replicas != decision.desired_replicas
        report = replace(before.predicted.report, changed=changed)
        before = replace(before, predicted=replace(before.predicted, report=report))
    return _after(decision, before, status, controls, state, current=scale.spec_replicas, now=now)


def _settle(
    spec: Spec,
    scale: Scale,
    pods: Sequence[Pod],
    metrics: Sequence[MetricInput],
    history: History | None,
    now: int,
    options: ControllerOptions,
    controls: Controls,
    state: ControlStatus,
    forecasts: Sequence[Forecast | None] | None,
) -> _Before:
    """Windows, measurements, failure counts, fallback proposals, the forecasts' proposals
    (`forecasts` None: leave them out), activity and the shape."""
    current = scale.spec_replicas
    windows = open_windows(controls.schedules, now=now)
    base_min = 1 if spec.min_replicas is None else spec.min_replicas
    low, high, window_lines = effective_bounds(base_min, spec.max_replicas, windows)
    eff = replace(spec, min_replicas=low, max_replicas=high) if windows else spec
    measured = _measure(eff, scale, pods, metrics, now=now, options=options)
    flags = (
        active_flags(spec.metrics, metrics, measured, controls.activation)
        if measured is not None
        else (None,) * len(spec.metrics)
    )
    health = count_failures(
        state.metric_health,
        spec.metrics,
        metrics,
        measured,
        fallback=controls.fallback,
        active=flags,
    )
    given = (
        with_fallback(measured, health, spec.metrics, controls.fallback, current=current)
        if measured is not None
        else None
    )
    in_fallback = controls.fallback is not None and any(h.fallback for h in health)
    predicted = None
    if controls.predictive is not None and given is not None and forecasts is not None:
        predicted = predict(
            controls.predictive,
            eff,
            scale,
            pods,
            metrics,
            given,
            flags,
            forecasts,
            thresholds=controls.activation,
            in_fallback=tuple(h.fallback for h in health),
            now=now,
            options=options,
        )
        given, flags = predicted.outcomes, predicted.flags
    active = _active(controls, flags, given)
    tracks = controls.has_activation or controls.scale_to_zero is not None
    last_active = (
        last_active_time(
            state.last_active_time, was_active=state.active, active=active, history=history, now=now
        )
        if tracks
        else None
    )
    failing = measured is not None and any(isinstance(o, MetricFailure) for o in measured)
    fb = controls.fallback
    waking = in_fallback and fb is not None and fallback_replicas(fb, current) > 0
    shape = zero_shape(
        controls,
        current=current,
        active=active or (failing and current > 0),  # a failed metric never lets 1 go to 0
        waking_fallback=waking,
        last_active=last_active,
        now=now,
        window=DownWindow(
            scale_down_window(spec.behavior, options), counts_cutoff=spec.behavior is None
        ),
    )
    return _Before(
        eff,
        windows,
        window_lines,
        given,
        health,
        active if tracks else None,
        in_fallback,
        last_active,
        shape,
        predicted,
    )


def _after(
    decision: Decision,
    before: _Before,
    status: Status,
    controls: Controls,
    state: ControlStatus,
    *,
    current: int,
    now: int,
) -> Decision:
    """Pause or conflict on the result, the controls' conditions and events, the new memory."""
    pause = read_pause(controls, state)
    if controls.conflict is not None:  # another Autoscaler or an HPA owns the target
        decision = unwritten(decision)
        decision = replace(decision, summary=f"in conflict, nothing written: {controls.conflict}")
    else:
        decision = apply_pause(decision, pause, current=current, now=now)
    conds = Conditions(decision.status.conditions, now=now)
    events = _report(conds, before, status, controls, state, pause, current=current)
    memory = ControlStatus(
        last_active_time=before.last_active,
        metric_health=before.health,
        active=before.active,
        fallback=before.in_fallback if controls.fallback is not None else None,
        paused=pause.paused,
        paused_replicas=pause.replicas,
        schedules=before.windows if controls.schedules else None,
        predictive=before.predicted.report if before.predicted is not None else None,
    )
    return replace(
        decision,
        status=replace(decision.status, conditions=conds.snapshot()),
        explanation=(*before.window_lines, *decision.explanation),
        controls=memory,
        events=events,
    )


def _report(
    conds: Conditions,
    before: _Before,
    status: Status,
    controls: Controls,
    state: ControlStatus,
    pause: Pause,
    *,
    current: int,
) -> tuple[ControlEvent, ...]:
    """Sets the Paused, Fallback and AmbiguousTarget conditions; returns the pass's events."""
    events: list[ControlEvent] = []
    old_message = _condition(status.conditions, PAUSED, "message")
    paused_cond, pause_events = pause_report(pause, state, old_message)
    if paused_cond is not None:
        conds.set(PAUSED, *paused_cond)
    events.extend(pause_events)
    if controls.fallback is not None:
        _fallback_condition(conds, before.health, in_fallback=before.in_fallback)
        events.extend(
            fallback_events(
                state.fallback, before.in_fallback, before.health, controls.fallback, current
            )
        )
    events.extend(_schedule_events(state.schedules, before.windows))
    if before.predicted is not None:
        predictive_condition(conds, before.predicted.report)
    if controls.conflict is not None:
        conds.set(ABLE_TO_SCALE, FALSE, AMBIGUOUS, controls.conflict)
        # the upstream step may have set AbleToScale=True this pass: a lasting conflict keeps
        # the stored transition time, so the status does not change on every pass
        stored = next((c for c in status.conditions if c.type == ABLE_TO_SCALE), None)
        conds.keep_since(ABLE_TO_SCALE, stored)
        if _condition(status.conditions, ABLE_TO_SCALE, "reason") != AMBIGUOUS:
            events.append(ControlEvent("Warning", AMBIGUOUS, controls.conflict))
    return tuple(events)


def _measure(
    spec: Spec,
    scale: Scale,
    pods: Sequence[Pod],
    metrics: Sequence[MetricInput],
    *,
    now: int,
    options: ControllerOptions,
) -> tuple[Outcome, ...] | None:
    """The metrics' outcomes; None when the scale's selector is missing or bad (upstream then
    measures nothing, and neither do the controls: the counts stay as they were)."""
    if scale.selector == "" or selector_problem(scale.selector) is not None:
        return None
    return measure(spec, scale, pods, metrics, now=now, options=options)


def _active(
    controls: Controls, flags: Sequence[bool | None], outcomes: Sequence[Outcome] | None
) -> bool:
    """Activity on this pass: a metric above its activation threshold; without activation
    blocks, a recommendation above 0 (fallback proposals included)."""
    if controls.has_activation:
        return any(f is True for f in flags)
    if outcomes is None:
        return False
    return any(isinstance(o, Proposal) and o.replicas > 0 for o in outcomes)


def _condition(conditions: Sequence[Condition], type_: str, field: str) -> str | None:
    for c in conditions:
        if c.type == type_:
            return str(getattr(c, field))
    return None


def _fallback_condition(
    conds: Conditions, health: Sequence[MetricHealth], *, in_fallback: bool
) -> None:
    """True/MetricsFailing in fallback; False/MetricsRecovered once it has been, else
    False/MetricsHealthy."""
    if in_fallback:
        names = ", ".join(f"metrics[{h.index}] {h.name}" for h in health if h.fallback)
        conds.set(FALLBACK, TRUE, "MetricsFailing", f"in fallback: {names}")
        return
    old = conds.first(FALLBACK)
    if old is not None and old.reason in ("MetricsFailing", "MetricsRecovered"):
        conds.set(FALLBACK, FALSE, "MetricsRecovered", "the metrics recovered from fallback")
    else:
        conds.set(FALLBACK, FALSE, "MetricsHealthy", "no metric is in fallback")


def _schedule_events(
    before: Sequence[ActiveSchedule] | None, now_open: Sequence[ActiveSchedule]
) -> tuple[ControlEvent, ...]:
    """ScheduleStarted / ScheduleEnded for windows that opened or closed since the last pass."""
    was = {(w.name, w.start): w for w in before or ()}
    now_keys = {(w.name, w.start) for w in now_open}
    events = [
        ControlEvent("Normal", "ScheduleEnded", f"schedule {w.name}: window closed")
        for key, w in was.items()
        if key not in now_keys
    ]
    for w in now_open:
        if (w.name, w.start) not in was:
            bound = f"min {w.min_replicas}" + (
                f", max {w.max_replicas}" if w.max_replicas is not None else ""
            )
            events.append(ControlEvent("Normal", "ScheduleStarted", f"schedule {w.name}: {bound}"))
    return tuple(events)


def _retired(decision: Decision, state: ControlStatus, *, now: int) -> Decision:
    """The first pass after the last control was removed: the status loses the extras, a pause
    ends with `Unpaused`, and the Fallback condition (its block is gone) is dropped."""
    conds = Conditions(decision.status.conditions, now=now)
    events: tuple[ControlEvent, ...] = ()
    if state.paused:
        message = "the pause annotations are gone: autoscaling resumed"
        conds.set(PAUSED, FALSE, "Unpaused", message)
        events = (ControlEvent("Normal", "Unpaused", message),)
    conds.remove(FALLBACK)
    conds.remove(PREDICTIVE)
    return replace(
        decision, status=replace(decision.status, conditions=conds.snapshot()), events=events
    )
