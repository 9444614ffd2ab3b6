"""One controller pass for one autoscaler, like upstream's `reconcileAutoscaler` minus the I/O.

The caller (the controller, `decide_document`, `simulate`) has already read the scale, the pods
and the metrics; `decide` returns what to write. It assumes the scale write succeeds; when it
does not, `rescale_failed(decision, message=...)` gives the status and history to keep instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from autoscaler.core.calculators import MetricFailure
from autoscaler.core.conditions import (
    ABLE_TO_SCALE,
    FALSE,
    MESSAGES,
    SCALED_TO_ZERO,
    SCALING_ACTIVE,
    SCALING_LIMITED,
    TRUE,
    Conditions,
)
from autoscaler.core.finish import Failed, failed, finish, rescale_failed
from autoscaler.core.measure import Outcome, measure, selector_problem
from autoscaler.core.model import (
    DEFAULT_OPTIONS,
    EMPTY_HISTORY,
    EXTERNAL,
    OBJECT,
    ControllerOptions,
    Decision,
    History,
    MetricInput,
    Pod,
    Recommendation,
    Scale,
    Shape,
    Spec,
    Status,
)
from autoscaler.core.normalize import normalize_with_behavior, normalize_without_behavior

__all__ = ["decide", "rescale_failed"]


def decide(
    spec: Spec,
    status: Status,
    scale: Scale,
    pods: Sequence[Pod],
    metrics: Sequence[MetricInput],
    history: History | None = None,
    *,
    now: int,
    options: ControllerOptions = DEFAULT_OPTIONS,
    outcomes: Sequence[Outcome] | None = None,
    shape: Shape | None = None,
) -> Decision:
    """Decide one step for one autoscaler.

    spec: the validated, defaulted autoscaling/v2 spec (see `document.parse_spec`).
    status: the autoscaler's current status (its conditions carry ScaledToZero across steps).
    scale: the target's scale subresource (spec.replicas is "current", as upstream).
    pods: the pods the scale's selector selects (not filtered again here).
    metrics: one entry per spec.metrics[i], same order: ResourceMetrics, MetricItems or MetricError.
    history: the controller's memory from the previous step (None on the first pass).
    now: the instant of this step, integer nanoseconds since the Unix epoch.
    options: kube-controller-manager flags and gates.
    outcomes: the metrics already measured (`measure.measure`), to reuse instead of measuring.
    shape: the controls' hold on the recommendation (None: upstream's decision, bit for bit).

    Pure: reads no clock, mutates nothing; raises ValueError only when `metrics` does not match
    `spec.metrics` in length.
    """
    if len(metrics) != len(spec.metrics):
        raise ValueError(f"{len(metrics)} metric inputs for {len(spec.metrics)} spec.metrics")
    conds = Conditions(status.conditions, now=now)
    conds.set(ABLE_TO_SCALE, TRUE, "SucceededGetScale")
    current = scale.spec_replicas
    hist = history if history is not None else EMPTY_HISTORY
    if hist.recommendations is None:
        # recordInitialRecommendation: only a nil history gets one (an empty one does not)
        hist = History(
            (Recommendation(current, now),), hist.scale_up_events, hist.scale_down_events
        )
    min_replicas = 1 if spec.min_replicas is None else spec.min_replicas
    max_replicas = spec.max_replicas
    gate = options.scale_to_zero
    has_obj_ext = False
    for m in spec.metrics:
        if m.type == OBJECT or m.type == EXTERNAL:
            has_obj_ext = True
            break
    stz = conds.first(SCALED_TO_ZERO)
    scaled_to_zero = gate and stz is not None and stz.status == TRUE
    if shape is not None and shape.asleep_at_zero:
        scaled_to_zero = gate  # activation: a target at 0 is asleep, never "disabled"
    lines: list[str] = []
    statuses: tuple[dict[str, object], ...] = ()
    rescale_reason = ""
    compute_error: str | None = None

    if current == 0 and not (
        (min_replicas != 0 and scaled_to_zero) or (scaled_to_zero and has_obj_ext)
    ):
        conds.set(SCALING_ACTIVE, FALSE, "ScalingDisabled")
        if not gate:
            conds.remove(SCALED_TO_ZERO)
        lines.append(
            "the target has 0 replicas and was not scaled to zero by this autoscaler: "
            "autoscaling is disabled (scale it up to resume)"
        )
        return finish(
            conds,
            status,
            hist,
            spec,
            current,
            0,
            False,
            (),
            lines,
            "",
            None,
            now,
            gate,
            min_replicas,
            has_obj_ext,
        )
    if current != 0 and current > max_replicas:
        desired = max_replicas
        rescale_reason = "Current number of replicas above Spec.MaxReplicas"
        lines.append(
            f"current replicas {current} above maxReplicas {max_replicas}: set to {desired}"
        )
    elif current != 0 and current < min_replicas:
        desired = min_replicas
        rescale_reason = "Current number of replicas below Spec.MinReplicas"
        lines.append(
            f"current replicas {current} below minReplicas {min_replicas}: set to {desired}"
        )
    else:
        try:
            metric_desired, metric_name, statuses, compute_error = _compute(
                spec, scale, pods, metrics, conds, lines, now=now, options=options, given=outcomes
            )
        except Failed as failure:
            lines.append("no scaling: " + failure.error)
            return failed(conds, status, hist, current, failure, lines)
        desired = max(0, metric_desired)
        # the event's reason follows the recommendation as the controls bound it
        bounded = desired if shape is None else _bounded(shape, desired)
        if bounded > current:
            rescale_reason = f"{metric_name} above target"
        elif bounded < current:
            rescale_reason = "All metrics below target"
        if spec.behavior is None:
            norm = normalize_without_behavior(
                hist,
                current=current,
                desired=desired,
                min_replicas=min_replicas,
                max_replicas=max_replicas,
                now=now,
                options=options,
                shape=shape,
            )
        else:
            norm = normalize_with_behavior(
                hist,
                spec.behavior,
                current=current,
                desired=desired,
                min_replicas=min_replicas,
                max_replicas=max_replicas,
                now=now,
                options=options,
                shape=shape,
            )
        hist = History(norm.recommendations, hist.scale_up_events, hist.scale_down_events)
        able = norm.able_reason
        conds.set(ABLE_TO_SCALE, TRUE, able, MESSAGES[able])
        limited = norm.limited_reason
        conds.set(SCALING_LIMITED, TRUE if norm.replicas != norm.stabilized else FALSE, limited)
        lines.extend(norm.lines)
        desired = norm.replicas
        if current == 0 and min_replicas != 0 and scaled_to_zero and desired < min_replicas:
            # waking from zero after minReplicas was raised: at least minReplicas
            lines.append(f"waking from zero: raised to minReplicas {min_replicas}")
            desired = min_replicas
            if rescale_reason == "":
                rescale_reason = "Current number of replicas below Spec.MinReplicas"
    rescale = desired != current
    return finish(
        conds,
        status,
        hist,
        spec,
        current,
        desired,
        rescale,
        statuses,
        lines,
        rescale_reason,
        compute_error,
        now,
        gate,
        min_replicas,
        has_obj_ext,
    )


def _compute(
    spec: Spec,
    scale: Scale,
    pods: Sequence[Pod],
    metrics: Sequence[MetricInput],
    conds: Conditions,
    lines: list[str],
    *,
    now: int,
    options: ControllerOptions,
    given: Sequence[Outcome] | None,
) -> tuple[int, str, tuple[dict[str, object], ...], str | None]:
    """computeReplicasForMetrics: the max of valid proposals, and the invalid-metric rule."""
    if scale.selector == "":
        conds.set(SCALING_ACTIVE, FALSE, "InvalidSelector", MESSAGES["InvalidSelectorMissing"])
        raise Failed("selector is required", ())
    problem = selector_problem(scale.selector)
    if problem is not None:
        msg = f"couldn't convert selector into a corresponding internal selector object: {problem}"
        conds.set(SCALING_ACTIVE, FALSE, "InvalidSelector", msg)
        raise Failed(msg, ())
    outcomes = (
        given
        if given is not None
        else measure(spec, scale, pods, metrics, now=now, options=options)
    )
    replicas = 0
    name = ""
    invalid = 0
    first: MetricFailure | None = None
    statuses: list[dict[str, object]] = []
    for i, proposal in enumerate(outcomes):
        if isinstance(proposal, MetricFailure):
            failure = proposal
            invalid += 1
            first = first or failure
            statuses.append({"type": ""})  # upstream leaves a failed metric's status slot empty
            lines.append(f"metrics[{i}] failed ({failure.reason}): {failure.error}")
            continue
        statuses.append(proposal.status)
        lines.append(f"metrics[{i}] {proposal.detail}")
        if replicas == 0 or proposal.replicas > replicas:
            replicas, name = proposal.replicas, proposal.name
    result = tuple(statuses)
    if first is not None:
        error = (
            f"invalid metrics ({invalid} invalid out of {len(spec.metrics)}), "
            f"first error is: {first.error}"
        )
        if invalid >= len(spec.metrics) or replicas < scale.spec_replicas:
            # with a metric missing the autoscaler may hold or grow, never shrink
            conds.set(SCALING_ACTIVE, FALSE, first.reason, first.condition_message)
            if invalid < len(spec.metrics):
                lines.append(
                    f"the valid metrics propose {replicas} < {scale.spec_replicas} current "
                    "replicas, but a metric failed: no scale-down while a metric is invalid"
                )
            raise Failed(error, result)
    else:
        error = None
    conds.set(
        SCALING_ACTIVE,
        TRUE,
        "ValidMetricFound",
        f"the HPA was able to successfully calculate a replica count from {name}",
    )
    if len(spec.metrics) > 1:
        lines.append(f"the highest proposal wins: {replicas} ({name})")
    return replicas, name, result, error


def _bounded(shape: Shape, desired: int) -> int:
    """The controls' floor and ceiling on a recommendation (normalize applies them after
    stabilization; here only for the direction of the event's reason)."""
    bounded = max(desired, shape.floor)
    return bounded if shape.ceiling is None else min(bounded, shape.ceiling)
