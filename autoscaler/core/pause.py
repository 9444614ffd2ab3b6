"""Pause: the annotations, read strictly, and what they do to a decision.

`promscaler.dev/paused` is a boolean as Go's strconv.ParseBool reads it; `paused-replicas` a
non-negative int32 in decimal, and it wins over `paused`. A value that is neither is a problem
reported in the `Paused` condition and a Warning event, never a guess: the previous pause state
is kept (from the status) until the value is fixed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from autoscaler.core.controls_model import (
    PAUSED_ANNOTATION,
    PAUSED_REPLICAS_ANNOTATION,
    ControlEvent,
    Controls,
    ControlStatus,
)
from autoscaler.core.finish import unwritten
from autoscaler.core.model import Decision
from autoscaler.core.numeric import MAX_INT32

__all__ = ["Pause", "apply_pause", "pause_report", "read_pause"]

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})  # strconv.ParseBool
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
_DECIMAL = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class Pause:
    """paused: never write /scale; replicas: hold the target at this count (implies paused);
    problem: why an annotation value was not understood ("" when all is well)."""

    paused: bool = False
    replicas: int | None = None
    problem: str = ""


def read_pause(controls: Controls, previous: ControlStatus) -> Pause:
    problems = []
    replicas_raw = controls.paused_replicas
    if replicas_raw is not None:
        if _DECIMAL.fullmatch(replicas_raw) and int(replicas_raw) <= MAX_INT32:
            return Pause(True, int(replicas_raw))
        problems.append(
            f"annotation {PAUSED_REPLICAS_ANNOTATION}: invalid value {replicas_raw!r}: "
            "must be a non-negative integer"
        )
    paused_raw = controls.paused
    if paused_raw is not None:
        if paused_raw in _TRUE:
            return Pause(True, None, "; ".join(problems))
        if paused_raw in _FALSE and not problems:
            return Pause(False)
        if paused_raw not in _FALSE:
            problems.append(
                f"annotation {PAUSED_ANNOTATION}: invalid value {paused_raw!r}: "
                "must be true or false"
            )
    if not problems:
        return Pause(False)
    kept = previous.paused
    state = (
        f"kept paused at {previous.paused_replicas} replicas"
        if kept and previous.paused_replicas is not None
        else ("kept paused" if kept else "not paused")
    )
    return Pause(
        kept, previous.paused_replicas if kept else None, "; ".join(problems) + f" ({state})"
    )


def pause_report(
    pause: Pause, previous: ControlStatus, old_message: str | None
) -> tuple[tuple[str, str, str] | None, tuple[ControlEvent, ...]]:
    """The `Paused` condition (status, reason, message) to set, None to leave it absent, and the
    events of a change. `old_message`: the input status's Paused condition message, if any."""
    if pause.problem:
        status = "True" if pause.paused else "False"
        events: tuple[ControlEvent, ...] = ()
        if old_message != pause.problem:  # once per bad value, not on every pass
            events = (ControlEvent("Warning", "InvalidAnnotation", pause.problem),)
        return (status, "InvalidAnnotation", pause.problem), events
    if pause.paused:
        message = (
            f"held at {pause.replicas} replicas by the {PAUSED_REPLICAS_ANNOTATION} annotation"
            if pause.replicas is not None
            else f"paused by the {PAUSED_ANNOTATION} annotation: /scale is not written"
        )
        changed = not previous.paused or previous.paused_replicas != pause.replicas
        return ("True", "PausedByAnnotation", message), (
            (ControlEvent("Normal", "Paused", message),) if changed else ()
        )
    if previous.paused or old_message is not None:
        message = "the pause annotations are gone: autoscaling resumed"
        events = (ControlEvent("Normal", "Unpaused", message),) if previous.paused else ()
        return ("False", "Unpaused", message), events
    return None, ()


def apply_pause(decision: Decision, pause: Pause, *, current: int, now: int) -> Decision:
    """No /scale write while paused; with paused-replicas, the write that holds N."""
    if not pause.paused:
        return decision
    d = unwritten(decision)
    if pause.replicas is None:
        return replace(d, summary=f"paused: {d.summary}")
    n = pause.replicas
    rescale = current != n
    status = replace(
        d.status, desired_replicas=n, last_scale_time=now if rescale else d.status.last_scale_time
    )
    reason = f"held at {n} replicas by the {PAUSED_REPLICAS_ANNOTATION} annotation"
    lines = (*d.explanation, f"paused-replicas: set the target to {n}" if rescale else reason)
    return replace(
        d,
        desired_replicas=n,
        rescale=rescale,
        status=status,
        explanation=lines,
        summary=f"scale {current} -> {n}: {reason}" if rescale else f"keep {n} replicas: {reason}",
        rescale_reason=reason if rescale else "",
        previous_status=d.previous_status,
        pre_rescale_conditions=d.status.conditions if rescale else (),
    )
