"""Which pods a ReplicaSet deletes when it has too many: kube-controller-manager's choice.

Stands in for upstream's `getPodsToDelete` and `getPodsRankedByRelatedPodsOnSameNode`
(pkg/controller/replicaset/replica_set.go) and `ActivePodsWithRanks.Less`
(pkg/controller/controller_utils.go), with the PodDeletionCost (on by default since 1.22) and
LogarithmicScaleDown (GA since 1.31) gates on. Rules, each deciding only when the one before
ties; the pod that sorts first is deleted first:

1. unassigned (no spec.nodeName) before assigned;
2. Pending before Unknown before Running;
3. not ready before ready;
4. lower `controller.kubernetes.io/pod-deletion-cost` first (absent or invalid: 0);
5. more active related pods on the same node first (pods of all ReplicaSets of the same owner);
6. both ready: ready more recently first, compared on a log2 scale of the time since, the
   UID breaking a tie of scale (a zero time sorts first);
7. more container restarts first;
8. created more recently first, on the same log2 scale with the same UID tie-break.

Equal pods keep the order they came in (upstream's sort is not stable, so any order is theirs).
Also the API server's check of the annotation (`must be a 32bit integer`) on pod writes.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from common.kubetime import TimeError, parse_time_ns
from common.selectors import SelectorError, selector_from_label_selector

__all__ = [
    "ANNOTATION",
    "annotation_causes",
    "deletion_cost",
    "less",
    "pods_to_delete",
    "related_pods",
]

Obj = dict[str, Any]
ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
_PHASE = {"Pending": 0, "Unknown": 1, "Running": 2}  # any other phase reads as 0, as a Go map does
_INT32 = (-(2**31), 2**31 - 1)
# an optional minus and digits, no plus sign; leading zeros only in "0" (validFirstDigit) or
# after the minus (strconv.ParseInt accepts "-007")
_COST = re.compile(r"0|-[0-9]+|[1-9][0-9]*")


def deletion_cost(annotations: Mapping[str, Any] | None) -> tuple[int, str | None]:
    """GetDeletionCostFromPodAnnotations: the cost and an error; 0 when absent or invalid."""
    value = (annotations or {}).get(ANNOTATION)
    if value is None:
        return 0, None
    if not isinstance(value, str) or not _COST.fullmatch(value):
        return 0, f"invalid value {value!r}"
    number = int(value)
    if not _INT32[0] <= number <= _INT32[1]:
        return 0, f'strconv.ParseInt: parsing "{value}": value out of range'
    return number, None


def annotation_causes(
    annotations: Any, old: Any, *, path: str = "metadata.annotations"
) -> list[tuple[str, str, str]]:
    """ValidatePodSpecificAnnotations' check of the cost, on a pod (`metadata.annotations`) or
    a workload's pod template (`spec.template.annotations`); `old` is the stored object's
    annotations on an update (None on a create). An update of an object whose stored value was
    already invalid is let through (upstream's AllowInvalidPodDeletionCost ratcheting)."""
    annotations = annotations if isinstance(annotations, dict) else {}
    _, error = deletion_cost(annotations)
    if error is None:
        return []
    if old is not None and deletion_cost(old if isinstance(old, dict) else {})[1]:
        return []
    shown = annotations[ANNOTATION]
    why = f'Invalid value: "{shown}": must be a 32bit integer'
    return [("FieldValueInvalid", f"{path}[{ANNOTATION}]", why)]


def related_pods(rs: Obj, replicasets: Sequence[Obj], pods: Sequence[Obj]) -> list[Obj]:
    """getIndirectlyRelatedPods: the pods selected by every ReplicaSet with the same controller
    as `rs` (none when `rs` has no controller), each pod once."""
    owner = _controller_uid(rs)
    if owner is None:
        return []
    seen: dict[str, Obj] = {}
    for other in replicasets:
        if _controller_uid(other) != owner:
            continue
        try:
            selector = selector_from_label_selector((other.get("spec") or {}).get("selector"))
        except SelectorError:
            continue  # upstream returns the error and ranks nothing: same ranks for all
        for pod in pods:
            meta = pod.get("metadata") or {}
            if selector.matches(meta.get("labels") or {}):
                seen.setdefault(str(meta.get("uid", meta.get("name"))), pod)
    return list(seen.values())


def pods_to_delete(
    filtered: Sequence[Obj], related: Sequence[Obj], diff: int, *, now: int
) -> list[Obj]:
    """getPodsToDelete: the `diff` pods of `filtered` (the ReplicaSet's active pods) to delete;
    `now` (ns since the epoch) is the reference of the log2 time scale."""
    if diff >= len(filtered):
        return list(filtered[:diff])
    on_node: dict[str, int] = {}
    for pod in related:
        if _active(pod):
            node = _node(pod)
            on_node[node] = on_node.get(node, 0) + 1
    ranked = [(pod, on_node.get(_node(pod), 0)) for pod in filtered]

    def compare(a: tuple[Obj, int], b: tuple[Obj, int]) -> int:
        return -1 if less(a, b, now=now) else 1 if less(b, a, now=now) else 0

    return [pod for pod, _ in sorted(ranked, key=functools.cmp_to_key(compare))[:diff]]


def less(a: tuple[Obj, int], b: tuple[Obj, int], *, now: int) -> bool:
    """ActivePodsWithRanks.Less: whether pod `a` (with its rank) is deleted before `b`."""
    (p, rank_p), (q, rank_q) = a, b
    node_p, node_q = _node(p), _node(q)
    if node_p != node_q and (not node_p or not node_q):
        return not node_p
    phase_p, phase_q = _PHASE.get(_phase(p), 0), _PHASE.get(_phase(q), 0)
    if phase_p != phase_q:
        return phase_p < phase_q
    ready_p, ready_q = _is_ready(p), _is_ready(q)
    if ready_p != ready_q:
        return not ready_p
    cost_p, cost_q = deletion_cost(_annotations(p))[0], deletion_cost(_annotations(q))[0]
    if cost_p != cost_q:
        return cost_p < cost_q
    if rank_p != rank_q:
        return rank_p > rank_q
    if ready_p and ready_q:
        since_p, since_q = _ready_time(p), _ready_time(q)
        if since_p != since_q:
            return _later(since_p, since_q, p, q, now)
    restarts_p, restarts_q = _restarts(p), _restarts(q)
    if restarts_p != restarts_q:
        return restarts_p > restarts_q
    created_p, created_q = _time(p, "creationTimestamp"), _time(q, "creationTimestamp")
    if created_p != created_q:
        return _later(created_p, created_q, p, q, now)
    return False


def _later(t1: int | None, t2: int | None, p: Obj, q: Obj, now: int) -> bool:
    """Whether t1 is the more recent, on a log2 scale of the time before `now`; a zero time
    (None) counts as the most recent; a tie of scale goes to the smaller UID."""
    if t1 is None or t2 is None:
        return t1 is None  # afterOrZero
    diff = _log_rank(now - t1) - _log_rank(now - t2)
    if diff == 0:
        return _uid(p) < _uid(q)
    return diff < 0


def _log_rank(elapsed_ns: int) -> int:
    return int(math.log2(elapsed_ns)) if elapsed_ns > 0 else -1


def _node(pod: Obj) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _annotations(pod: Obj) -> Mapping[str, Any] | None:
    annotations = (pod.get("metadata") or {}).get("annotations")
    return annotations if isinstance(annotations, dict) else None


def _uid(pod: Obj) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


def _active(pod: Obj) -> bool:
    """IsPodActive: not finished and not being deleted."""
    meta = pod.get("metadata") or {}
    return _phase(pod) not in ("Succeeded", "Failed") and not meta.get("deletionTimestamp")


def _ready_condition(pod: Obj) -> Mapping[str, Any] | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True":
            return c
    return None


def _is_ready(pod: Obj) -> bool:
    return _ready_condition(pod) is not None


def _ready_time(pod: Obj) -> int | None:
    """podReadyTime: the Ready condition's lastTransitionTime (None: Go's zero time)."""
    c = _ready_condition(pod)
    return None if c is None else _parse(c.get("lastTransitionTime"))


def _time(pod: Obj, key: str) -> int | None:
    return _parse((pod.get("metadata") or {}).get(key))


def _parse(text: Any) -> int | None:
    """An RFC 3339 time in ns; None (the zero time) when absent or unreadable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return parse_time_ns(text)
    except TimeError:
        return None


def _restarts(pod: Obj) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return max(
        (int(s.get("restartCount") or 0) for s in statuses if isinstance(s, dict)), default=0
    )


def _controller_uid(obj: Obj) -> str | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid"))
    return None
