"""The end of a pass: the Decision's status, history and conditions, for a pass that could
not compute (`failed`), one that did (`finish`), and a rescale whose write failed
(`rescale_failed`)."""

from __future__ import annotations

from dataclasses import replace

from autoscaler.core.behavior import store_scale_event
from autoscaler.core.conditions import ABLE_TO_SCALE, FALSE, SCALED_TO_ZERO, TRUE, Conditions
from autoscaler.core.model import Decision, History, Spec, Status

__all__ = ["Failed", "failed", "finish", "rescale_failed", "unwritten"]


class Failed(Exception):
    """computeReplicasForMetrics returned -1."""

    def __init__(self, error: str, statuses: tuple[dict[str, object], ...]) -> None:
        super().__init__(error)
        self.error = error
        self.statuses = statuses


def failed(
    conds: Conditions,
    status: Status,
    hist: History,
    current: int,
    failed: Failed,
    lines: list[str],
) -> Decision:
    """setCurrentReplicasAndMetricsInStatus: desiredReplicas keeps its previous value."""
    new_status = Status(
        current_replicas=current,
        desired_replicas=status.desired_replicas,
        last_scale_time=status.last_scale_time,
        current_metrics=failed.statuses,
        conditions=conds.snapshot(),
    )
    summary = f"no change: {failed.error}"
    return Decision(
        status.desired_replicas,
        False,
        new_status,
        hist,
        tuple(lines),
        summary,
        compute_error=failed.error,
        failed_update_history=hist,
    )


def finish(
    conds: Conditions,
    status: Status,
    hist: History,
    spec: Spec,
    current: int,
    desired: int,
    rescale: bool,
    statuses: tuple[dict[str, object], ...],
    lines: list[str],
    reason: str,
    compute_error: str | None,
    now: int,
    gate: bool,
    min_replicas: int,
    has_obj_ext: bool,
) -> Decision:
    pre_rescale = conds.snapshot() if rescale else ()
    new_hist = hist
    last_scale = status.last_scale_time
    if rescale:
        conds.set(
            ABLE_TO_SCALE,
            TRUE,
            "SucceededRescale",
            f"the HPA controller was able to update the target scale to {desired}",
        )
        if spec.behavior is not None:
            if desired > current:
                new_hist = replace(
                    hist,
                    scale_up_events=store_scale_event(
                        hist.scale_up_events, desired - current, spec.behavior.scale_up, now=now
                    ),
                )
            else:
                new_hist = replace(
                    hist,
                    scale_down_events=store_scale_event(
                        hist.scale_down_events, current - desired, spec.behavior.scale_down, now=now
                    ),
                )
        if gate:
            if current > 0 and desired == 0 and min_replicas == 0 and has_obj_ext:
                conds.set(SCALED_TO_ZERO, TRUE, "ScaledToZero")
            else:
                conds.set(SCALED_TO_ZERO, FALSE, "NotScaledToZero")
        else:
            conds.remove(SCALED_TO_ZERO)
        last_scale = now
        # upstream's reason is empty when only normalization moved the count (stabilization)
        lines.append(f"scale {current} -> {desired}" + (f" ({reason})" if reason else ""))
        summary = f"scale {current} -> {desired}" + (f": {reason}" if reason else "")
    else:
        desired = current
        summary = f"keep {current} replicas" + (f": {lines[-1]}" if lines else "")
    new_status = Status(current, desired, last_scale, statuses, conds.snapshot())
    return Decision(
        desired,
        rescale,
        new_status,
        new_hist,
        tuple(lines),
        summary,
        compute_error=compute_error,
        rescale_reason=reason if rescale else "",  # upstream's event text: rescales only
        failed_update_history=hist,
        previous_status=status,
        pre_rescale_conditions=pre_rescale,
        now=now,
    )


def rescale_failed(decision: Decision, *, message: str) -> tuple[Status, History]:
    """The status and history to keep when the scale write of a rescaling decision failed:
    AbleToScale=False/FailedUpdateScale, desiredReplicas and lastScaleTime unchanged, no scale
    event stored (upstream's FailedUpdateScale branch). `message` is the write's error."""
    if not decision.rescale or decision.previous_status is None:
        return decision.status, decision.history
    conds = Conditions(decision.pre_rescale_conditions, now=decision.now)
    conds.set(
        ABLE_TO_SCALE,
        FALSE,
        "FailedUpdateScale",
        f"the HPA controller was unable to update the target scale: {message}",
    )
    previous = decision.previous_status
    status = Status(
        decision.status.current_replicas,
        previous.desired_replicas,
        previous.last_scale_time,
        decision.status.current_metrics,
        conds.snapshot(),
    )
    return status, decision.failed_update_history or decision.history


def unwritten(decision: Decision) -> Decision:
    """The decision as if its /scale write were not made (pause, conflicts): what it would do
    stays in desiredReplicas; no scale event is stored, lastScaleTime and the conditions are
    those from before the rescale."""
    if not decision.rescale or decision.previous_status is None:
        return decision
    status = Status(
        decision.status.current_replicas,
        decision.desired_replicas,
        decision.previous_status.last_scale_time,
        decision.status.current_metrics,
        decision.pre_rescale_conditions,
    )
    return replace(
        decision,
        rescale=False,
        status=status,
        history=decision.failed_update_history or decision.history,
        rescale_reason="",
        pre_rescale_conditions=(),
    )
