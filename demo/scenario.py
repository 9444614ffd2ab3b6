"""The demo's load shape and the workloads' simple physics. Pure: time comes in as seconds.

The shape, in phases: idle, ramp up, plateau, drop to idle, a burst, idle again. `web` gets a
request rate shared evenly by its ready pods; `worker` gets queue arrivals, and each ready
worker drains a fixed number of items per second.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Phase:
    """One stretch of the load shape: load moves linearly from `start` to `end` levels."""

    name: str
    seconds: float
    web_rps: tuple[float, float]  # total requests per second for `web`, at start and end
    arrivals: tuple[float, float]  # queue items arriving per second, at start and end


@dataclass(frozen=True)
class Load:
    """The load at one instant."""

    phase: str
    web_rps: float
    arrivals: float


# The full shape lasts 150 s; `--short` plays it faster (CI uses that).
PHASES: tuple[Phase, ...] = (
    Phase("idle", 10, (4, 4), (0, 0)),
    Phase("ramp", 30, (4, 160), (0, 24)),
    Phase("plateau", 30, (160, 160), (24, 24)),
    Phase("drop", 35, (4, 4), (0, 0)),
    Phase("burst", 15, (240, 240), (36, 36)),
    Phase("idle", 30, (4, 4), (0, 0)),
)

WORKER_DRAIN_PER_SECOND = 6.0  # items one ready worker processes each second


def duration(phases: tuple[Phase, ...] = PHASES) -> float:
    return sum(p.seconds for p in phases)


def load_at(t: float, *, speed: float = 1.0, phases: tuple[Phase, ...] = PHASES) -> Load:
    """The load `t` seconds into the scenario; `speed` > 1 plays the shape faster."""
    elapsed = t * speed
    for phase in phases:
        if elapsed < phase.seconds:
            frac = elapsed / phase.seconds
            return Load(
                phase.name,
                _lerp(phase.web_rps, frac),
                _lerp(phase.arrivals, frac),
            )
        elapsed -= phase.seconds
    last = phases[-1]
    return Load(last.name, last.web_rps[1], last.arrivals[1])


def _lerp(span: tuple[float, float], frac: float) -> float:
    return span[0] + (span[1] - span[0]) * frac


@dataclass
class Queue:
    """A work queue: items arrive at the scenario's rate and ready workers drain them."""

    depth: float = 0.0

    def step(self, *, arrivals: float, ready_workers: int, dt: float) -> float:
        """Advance `dt` seconds; returns the new depth (never negative)."""
        self.depth = max(
            0.0, self.depth + (arrivals - ready_workers * WORKER_DRAIN_PER_SECOND) * dt
        )
        return self.depth
