"""The values of the controls around the upstream decision (docs/decision-document.md,
"The controls"): what the spec, the metadata and the controller say (`Controls`), what the
controls remember between passes (`ControlStatus`, persisted in the Autoscaler's status) and
what a pass tells the controller to record (`ControlEvent`).

Frozen dataclasses; instants and durations are integer nanoseconds, quantities thousandths.
"""

from __future__ import annotations

from dataclasses import dataclass

from autoscaler.core.predictive_model import PredictiveReport, PredictiveSpec

__all__ = [
    "FALLBACK_BEHAVIORS",
    "NO_CONTROLS",
    "ActiveSchedule",
    "ControlEvent",
    "ControlStatus",
    "Controls",
    "Fallback",
    "MetricHealth",
    "ScaleToZero",
    "Schedule",
]

STATIC = "Static"
CURRENT = "CurrentReplicas"
CURRENT_IF_HIGHER = "CurrentReplicasIfHigher"
CURRENT_IF_LOWER = "CurrentReplicasIfLower"
FALLBACK_BEHAVIORS = (STATIC, CURRENT, CURRENT_IF_HIGHER, CURRENT_IF_LOWER)

PAUSED_ANNOTATION = "promscaler.dev/paused"
PAUSED_REPLICAS_ANNOTATION = "promscaler.dev/paused-replicas"


@dataclass(frozen=True, slots=True)
class ScaleToZero:
    """spec.scaleToZero: the cooldowns of the last step, 1 -> 0 (seconds)."""

    cooldown_seconds: int = 300  # KEDA's cooldownPeriod default, what its users expect
    initial_cooldown_seconds: int = 0  # none: a new Autoscaler may scale to zero at once


@dataclass(frozen=True, slots=True)
class Fallback:
    """spec.fallback: what a metric that keeps failing proposes, and the hysteresis."""

    replicas: int
    failure_threshold: int = 3  # KEDA's documented example; "more than 3 failed passes"
    recovery_threshold: int = 1  # no hysteresis unless asked for
    behavior: str = STATIC


@dataclass(frozen=True, slots=True)
class Schedule:
    """One entry of spec.schedules: a window opened by each cron firing for `duration`."""

    name: str
    schedule: str  # five-field cron, evaluated on the wall clock of `time_zone`
    duration: int  # ns, > 0
    min_replicas: int
    max_replicas: int | None = None
    time_zone: str = "UTC"


@dataclass(frozen=True, slots=True)
class Controls:
    """Everything the controls read besides the upstream inputs.

    activation: per spec metric, the activation threshold in thousandths (None: no block).
    created: metadata.creationTimestamp (ns), None when unknown.
    paused, paused_replicas: the raw annotation values (None: absent).
    conflict: why another Autoscaler or an HPA owns the target (None: no conflict).
    """

    activation: tuple[int | None, ...] = ()
    scale_to_zero: ScaleToZero | None = None
    fallback: Fallback | None = None
    schedules: tuple[Schedule, ...] = ()
    created: int | None = None
    paused: str | None = None
    paused_replicas: str | None = None
    conflict: str | None = None
    predictive: PredictiveSpec | None = None  # spec.predictive (docs/predictive.md)

    @property
    def has_activation(self) -> bool:
        # parse_controls leaves () when no metric has a block: the common case costs nothing
        return bool(self.activation) and any(t is not None for t in self.activation)

    @property
    def present(self) -> bool:
        """Whether any control is present; without one the decision is upstream's, bit for bit."""
        return (
            self.has_activation
            or self.scale_to_zero is not None
            or self.fallback is not None
            or bool(self.schedules)
            or self.paused is not None
            or self.paused_replicas is not None
            or self.conflict is not None
            or self.predictive is not None
        )


NO_CONTROLS = Controls()


@dataclass(frozen=True, slots=True)
class MetricHealth:
    """status.metricHealth[i]: one spec metric's failure counts and activity."""

    index: int
    name: str
    active: bool | None = None  # None: no activation block, or never measured
    consecutive_failures: int = 0
    consecutive_successes: int = 0
    fallback: bool = False
    last_error: str = ""
    last_reason: str = ""


@dataclass(frozen=True, slots=True)
class ActiveSchedule:
    """status.schedules[i]: a window open now."""

    name: str
    start: int  # ns
    end: int  # ns, exclusive
    min_replicas: int
    max_replicas: int | None = None


@dataclass(frozen=True, slots=True)
class ControlStatus:
    """The controls' memory, kept in the Autoscaler's status so a restart changes nothing."""

    last_active_time: int | None = None
    metric_health: tuple[MetricHealth, ...] = ()
    active: bool | None = None
    fallback: bool | None = None
    paused: bool = False
    paused_replicas: int | None = None
    schedules: tuple[ActiveSchedule, ...] | None = None
    predictive: PredictiveReport | None = None  # output only: recomputed on every pass


EMPTY_CONTROL_STATUS = ControlStatus()


@dataclass(frozen=True, slots=True)
class ControlEvent:
    """An event the controller should record for this pass."""

    type: str  # Normal or Warning
    reason: str
    message: str
