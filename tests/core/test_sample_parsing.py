"""How a pod metric's window is read: Go's time.ParseDuration, exact to the nanosecond.

Go adds a component's whole part exactly and its fraction as
`uint64(float64(f) * (float64(unit) / scale))`, so "1.005s" is 1005000000ns (a float product
1.005 * 1e9 would give 1004999999).
"""

from __future__ import annotations

import pytest

from autoscaler.core.fields import duration_ns
from tests.core import builders as b
from tests.core.test_calculators import Case, run


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("1.005s", 1_005_000_000, id="fraction-not-rounded-down"),
        pytest.param("4.35s", 4_350_000_000, id="two-fraction-digits"),
        pytest.param("1h2m3.004005006s", 3_723_004_005_006, id="every-unit-to-the-nanosecond"),
        pytest.param("1.5ns", 1, id="fraction-of-a-nanosecond-truncates"),
        pytest.param(".5s", 500_000_000, id="no-whole-part"),
        pytest.param("-1.5s", -1_500_000_000, id="negative"),
        pytest.param("0", 0, id="bare-zero"),
    ],
)
def test_duration(text: str, want: int) -> None:
    assert duration_ns(text, "window") == want


def test_window_decides_freshness_at_the_nanosecond() -> None:
    # p0 is inside its CPU initialization period (started 100s ago, 2m period) and Ready since
    # 1.004999999s ago; its sample (now) is Before LTT + window (1.005s) by 1ns, so it is unready.
    # Without p0: 200m of 2 cores = 10%, ratio 0.1, ceil(0.1 x 2) = 1.
    # (If p0 counted: 1200m of 3 cores = 40%, ceil(0.4 x 3) = 2.)
    pods = [
        b.pod("p0", start=-100, ltt=-1.004999999),
        b.pod("p1"),
        b.pod("p2"),
    ]
    case = Case(3, 1, b.cpu_utilization(100), b.cpu_levels([1000, 100, 100], window="1.005s"), pods)
    assert run(case)["desiredReplicas"] == case.want
