"""The decision core's values: the validated input of one step, and the Decision it yields.

Everything here is a frozen dataclass. Instants are integer nanoseconds since the Unix epoch
(negative for Go's zero time, year 1) because upstream compares `time.Time` values strictly at
nanosecond precision; quantities are integer thousandths (`Quantity.MilliValue()`, rounded up).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from autoscaler.core.controls_model import ControlEvent, ControlStatus

if TYPE_CHECKING:  # deletioncost reads fields, which reads this module
    from autoscaler.core.deletioncost import PodDeletionCost

__all__ = [
    "DEFAULT_OPTIONS",
    "Behavior",
    "Condition",
    "ContainerRequests",
    "ContainerUsage",
    "ControllerOptions",
    "Decision",
    "History",
    "MetricError",
    "MetricInput",
    "MetricItems",
    "MetricSample",
    "MetricSpec",
    "MetricTarget",
    "Pod",
    "PodMetrics",
    "Recommendation",
    "ResourceMetrics",
    "Scale",
    "ScaleEvent",
    "ScalingPolicy",
    "ScalingRules",
    "Shape",
    "Spec",
    "Status",
]

NS = 1_000_000_000  # nanoseconds per second
ZERO_TIME = -62_135_596_800 * NS  # Go's zero time.Time, 0001-01-01T00:00:00Z

RESOURCE = "Resource"
CONTAINER_RESOURCE = "ContainerResource"
PODS = "Pods"
OBJECT = "Object"
EXTERNAL = "External"


@dataclass(frozen=True, slots=True)
class ControllerOptions:
    """kube-controller-manager flags and feature gates that change a decision."""

    tolerance: float = 0.1  # --horizontal-pod-autoscaler-tolerance; 0 means the default 0.1
    cpu_initialization_period_seconds: int = (
        300  # --horizontal-pod-autoscaler-cpu-initialization-period
    )
    initial_readiness_delay_seconds: int = 30  # --horizontal-pod-autoscaler-initial-readiness-delay
    downscale_stabilization_seconds: int = (
        300  # --horizontal-pod-autoscaler-downscale-stabilization
    )
    # HPAScaleToZero gate: upstream default is off before 1.37; our product turns it on
    scale_to_zero: bool = True
    # HPAConfigurableTolerance gate (beta and on since 1.35, GA in 1.37): behavior tolerances
    configurable_tolerance: bool = True
    # PodLevelResources gate (beta and on since 1.34, GA in 1.37): pod.spec.resources.requests
    # win over the containers' when no container is named
    pod_level_resources: bool = True
    # package variables of horizontal.go; the upstream tests set the factor to 8
    scale_up_limit_factor: float = 2.0
    scale_up_limit_minimum: float = 4.0

    @property
    def effective_tolerance(self) -> float:
        # NewReplicaCalculator is given the flag; the flag's 0 is replaced by its default
        return self.tolerance if self.tolerance != 0 else 0.1


DEFAULT_OPTIONS = ControllerOptions()


# ---- the spec ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetricTarget:
    """autoscaling/v2 MetricTarget; quantities in thousandths, None when unset."""

    type: str
    value: int | None = None
    average_value: int | None = None
    average_utilization: int | None = None


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One entry of spec.metrics.

    `name` is the resource name (Resource, ContainerResource) or the metric name (others);
    `metric` is the MetricIdentifier JSON as given (name and selector), echoed in the status;
    `described_object` is the Object source's CrossVersionObjectReference JSON.
    """

    type: str
    name: str
    target: MetricTarget
    container: str | None = None
    metric: Mapping[str, Any] | None = None
    described_object: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ScalingPolicy:
    type: str  # "Pods" or "Percent"; any other value keeps the previous policy's proposal
    value: int
    period_seconds: int


@dataclass(frozen=True, slots=True)
class ScalingRules:
    """HPAScalingRules after `SetDefaults_HorizontalPodAutoscalerBehavior`.

    `stabilization_window_seconds` None means "the controller's downscale flag" (scaleDown only);
    `tolerance` None means "the controller's tolerance".
    """

    stabilization_window_seconds: int | None
    select_policy: str
    policies: tuple[ScalingPolicy, ...]
    tolerance: float | None = None


@dataclass(frozen=True, slots=True)
class Behavior:
    scale_up: ScalingRules
    scale_down: ScalingRules


@dataclass(frozen=True, slots=True)
class Spec:
    """autoscaling/v2 HorizontalPodAutoscalerSpec, validated and defaulted."""

    max_replicas: int
    metrics: tuple[MetricSpec, ...]
    min_replicas: int | None = None  # None: the API default 1
    behavior: Behavior | None = None
    # the extra behavior.scaleDown.podDeletionCost (core/deletioncost.py); None: absent
    pod_deletion_cost: PodDeletionCost | None = None


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: int | None = None  # ns; None when unset


@dataclass(frozen=True, slots=True)
class Status:
    """autoscaling/v2 HorizontalPodAutoscalerStatus. `current_metrics` holds MetricStatus JSON."""

    current_replicas: int = 0
    desired_replicas: int = 0
    last_scale_time: int | None = None
    current_metrics: tuple[Mapping[str, Any], ...] = ()
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True, slots=True)
class Scale:
    """autoscaling/v1 Scale: spec.replicas, status.replicas and status.selector."""

    spec_replicas: int
    status_replicas: int
    selector: str


# ---- pods -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContainerRequests:
    name: str
    requests: Mapping[str, int]  # resource -> thousandths
    restartable_init: bool = False  # an init container with restartPolicy: Always (a sidecar)


@dataclass(frozen=True, slots=True)
class Pod:
    """What the decision needs of a core/v1 Pod."""

    name: str
    phase: str = "Running"
    deleting: bool = False  # metadata.deletionTimestamp is set
    ready: str | None = None  # status of the first Ready condition; None when there is none
    ready_transition: int | None = None  # that condition's lastTransitionTime (ns)
    start_time: int | None = None  # status.startTime (ns)
    containers: tuple[ContainerRequests, ...] = ()  # spec.containers
    # spec.initContainers in order; sidecars (restartPolicy: Always) count like containers
    init_containers: tuple[ContainerRequests, ...] = ()
    pod_requests: Mapping[str, int] | None = None  # spec.resources.requests (pod level)
    overhead: Mapping[str, int] = field(default_factory=dict)


# ---- metrics ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContainerUsage:
    name: str
    usage: Mapping[str, int]  # resource -> thousandths


@dataclass(frozen=True, slots=True)
class PodMetrics:
    """metrics.k8s.io/v1beta1 PodMetrics."""

    pod: str
    timestamp: int
    window: int  # ns
    containers: tuple[ContainerUsage, ...]


@dataclass(frozen=True, slots=True)
class ResourceMetrics:
    """The resource metrics API's answer for a Resource or ContainerResource metric."""

    pods: tuple[PodMetrics, ...]


@dataclass(frozen=True, slots=True)
class MetricSample:
    """A custom.metrics MetricValue (`name` is describedObject.name) or an ExternalMetricValue."""

    value: int  # thousandths
    timestamp: int = 0
    name: str = ""
    window_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class MetricItems:
    """The custom or external metrics API's answer for a Pods, Object or External metric."""

    items: tuple[MetricSample, ...]


@dataclass(frozen=True, slots=True)
class MetricError:
    """The metric could not be fetched; `message` says why, `reason` is an optional short
    cause from the controller (Unavailable, NotFound, ...) kept in the controls' health."""

    message: str
    reason: str = ""


MetricInput = ResourceMetrics | MetricItems | MetricError


# ---- memory -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Recommendation:
    replicas: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ScaleEvent:
    change: int
    timestamp: int
    outdated: bool = False


@dataclass(frozen=True, slots=True)
class History:
    """The controller's per-autoscaler memory. `recommendations` None means "never recorded"
    (the first pass records the current replicas); an empty tuple is not None, as upstream."""

    recommendations: tuple[Recommendation, ...] | None = None
    scale_up_events: tuple[ScaleEvent, ...] = ()
    scale_down_events: tuple[ScaleEvent, ...] = ()


EMPTY_HISTORY = History()


# ---- the controls' hold on the recommendation ----------------------------------------


@dataclass(frozen=True, slots=True)
class Shape:
    """What the controls (autoscaler.core.orchestrate) ask of the upstream decision.

    asleep_at_zero: a target at 0 replicas is asleep (it may wake), never "disabled";
    floor / ceiling: bounds on the stabilized recommendation, before the policies and min/max
    (ceiling 0 is "go to zero"); the history keeps the recommendation as the metrics computed
    it, so a bound never enters the stabilization window; lines: why, for the explanation.
    """

    asleep_at_zero: bool = False
    floor: int = 0
    ceiling: int | None = None
    lines: tuple[str, ...] = ()


# ---- the result -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Decision:
    """What one step decided.

    desired_replicas: what the scale should be (== status.desired_replicas).
    rescale: whether the controller must write the scale (desired != scale.spec.replicas).
    status: the new status, assuming the scale write succeeds when `rescale`.
    history: the memory to pass to the next step, assuming the same.
    compute_error: the error upstream's reconcile would return (metrics that failed), or None.
    rescale_reason: upstream's event reason text ("cpu resource utilization ... above target").
    summary: one line for events and logs; explanation: one line per step, for people.
    failed_update_history, previous_status, pre_rescale_conditions, now: what
    `decide.rescale_failed` needs to give the status and history to keep when the write fails.
    controls: the controls' new memory (status extras), None when no control is present;
    events: what the controls ask the controller to record for this pass.
    """

    desired_replicas: int
    rescale: bool
    status: Status
    history: History
    explanation: tuple[str, ...]
    summary: str
    compute_error: str | None = None
    rescale_reason: str = ""
    failed_update_history: History | None = None
    previous_status: Status | None = None
    pre_rescale_conditions: tuple[Condition, ...] = ()
    now: int = 0
    controls: ControlStatus | None = None
    events: tuple[ControlEvent, ...] = ()
