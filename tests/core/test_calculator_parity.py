"""Per-metric proposals at the edges the ported upstream vectors do not reach.

Expected values come from hpa-algorithm.md §2-§7 and upstream replica_calculator.go (master):
missing pods are left out at a ratio of exactly 1 for plain metrics too; the external sums stop
at their first overflow; pod-level requests include an overhead-only resource.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.core import builders as b
from tests.core.test_calculators import P3, Case, run

MAX_INT64 = 2**63 - 1


def _desired(case: Case) -> int:
    result: dict[str, Any] = run(case)
    desired: int = result["desiredReplicas"]
    return desired


CASES = [
    # §6.2: same algorithm as §6.1, so at ratio == 1 the missing pod is not filled in and the
    # rebalanced ratio stays 1 (within tolerance): keep 3 (the Pods case is in test_calculators)
    pytest.param(
        Case(3, 3, b.cpu_average(500), b.cpu_levels([500, 500]), P3),
        id="resource-average-value-missing-at-ratio-one-not-filled",
    ),
    # §6.4: the per-pod external sum is MaxInt64 as soon as it goes negative (upstream stops
    # there), so ceil(MaxInt64 / 1000) is capped at MaxInt32, then at maxReplicas 1000
    pytest.param(
        Case(3, 1000, b.external_metric(average=1000), b.external_items([-5, 10])),
        id="external-per-pod-negative-prefix-is-max-int64",
    ),
    pytest.param(
        Case(3, 1, b.external_metric(average=1000), b.external_items([10, -5])),
        id="external-per-pod-positive-sum-of-mixed-signs",
    ),
    # §6.3: once the external Value sum is capped at MaxInt64 upstream stops adding, so a later
    # negative value does not bring it back: ratio is huge, proposal MaxInt32, maxReplicas 1000
    pytest.param(
        Case(
            3,
            1000,
            b.external_metric(value=1000),
            b.external_items([MAX_INT64 - 100, 1000, -(MAX_INT64 - 100)]),
            P3,
        ),
        id="external-value-cap-stops-the-sum",
    ),
    # §7: a behavior tolerance is Quantity.AsApproximateFloat64 of the stored (canonical) value:
    # "118m" is 118 * 1e-3 = 0.11800000000000001, so 1 + it is 1.118 and a ratio of exactly
    # 1118/1000 is within (keep 3); the exact decimal 0.118 would put the bound below 1.118
    pytest.param(
        Case(
            3,
            3,
            b.pods_metric(1000),
            b.pods_items([1118, 1118, 1118]),
            P3,
            behavior={"scaleUp": {"tolerance": "118m"}},
        ),
        id="behavior-tolerance-as-approximate-float64-up",
    ),
    # "0.059" is stored as "59m": 59 * 1e-3 = 0.059000000000000004, 1 - it is 0.941, so 0.941 is
    # within (keep 20); with the exact decimal the bound is 0.9410000000000001: ceil(18.82) = 19
    pytest.param(
        Case(
            20,
            20,
            b.pods_metric(1000),
            b.pods_items([941] * 20),
            b.pods(20),
            behavior={"scaleDown": {"tolerance": "0.059"}},
        ),
        id="behavior-tolerance-as-approximate-float64-down",
    ),
    # §3: PodRequests adds spec.overhead even for a resource that neither the pod level nor any
    # container requests: 200m used of a 100m overhead-only request is 200%, ratio 2 -> 4 pods
    pytest.param(
        Case(
            2,
            4,
            b.cpu_utilization(100),
            b.cpu_levels([200, 200]),
            b.pods(2, cpu=None, pod_requests={"memory": "1Gi"}, overhead={"cpu": "100m"}),
        ),
        id="pod-level-request-overhead-only-resource",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_proposal(case: Case) -> None:
    assert _desired(case) == case.want
