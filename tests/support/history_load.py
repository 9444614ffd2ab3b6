"""A day of history for spec.predictive's tests: a load with an hourly peak, as remote-write
samples (a Prometheus started with an out-of-order window accepts them)."""

from __future__ import annotations

HISTORY_HOURS = 26  # the model needs a season (1h) + a day + 30 minutes before now


def hourly_load(now: int, hours: int = HISTORY_HOURS) -> list[tuple[float, float]]:
    """One sample a minute over the last `hours`: 10, and 100 for a quarter of each hour
    starting three minutes after the current minute (so the next peak is three minutes away)."""
    minute = now // 60 * 60
    peak = (minute // 60 + 3) % 60

    def load(t: int) -> float:
        return 100.0 if ((t // 60) - peak) % 60 < 15 else 10.0

    first = minute - hours * 3600
    return [(float(t), load(t)) for t in range(first, minute, 60)]
