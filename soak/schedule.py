"""The soak's fault schedule: seeded, pure, and printed at the start so a run can be replayed.

One fault at a time, each for a few seconds, with healthy gaps between them; a share of them
also SIGKILL an adapter or autoscaler replica in the middle. Nothing is scheduled in the
warm-up or in the quiet tail, where convergence is checked.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "Fault", "make_schedule", "prom_plan", "sandbox_plan"]

# what each kind does: sandbox-* set the sandbox's fault plan, prom-* the Prometheus proxy's,
# kill-* SIGKILL one replica (restarted after `seconds`), restart-sandbox stops it (SIGTERM,
# its state file keeps the objects) and starts it again after `seconds`
KINDS = (
    "sandbox-errors",
    "sandbox-conflicts",
    "sandbox-latency",
    "sandbox-watch",
    "sandbox-refuse",
    "restart-sandbox",
    "prom-errors",
    "prom-hang",
    "prom-nan",
    "prom-empty",
    "prom-partial",
    "prom-latency",
    "prom-down",
    "kill-adapter",
    "kill-autoscaler",
)
KILL_DURING = 0.2  # share of plan faults that also kill a replica half-way through
# Kills hit replica 1 of each program in the first half of the run and replica 0 in the second:
# each replica then lives at least half the run, long enough to judge its RSS, fds and tasks,
# and each still takes over from the other.


@dataclass(frozen=True)
class Fault:
    start: float  # seconds from the start of the run
    seconds: float  # how long it lasts (for kills and restarts: how long the process is down)
    kind: str
    replica: int = 0  # which adapter / autoscaler replica (kill-*), or the one killed meanwhile
    seed: int = 0  # the seed of the sandbox or proxy plan
    also_kill: str = ""  # "", "adapter" or "autoscaler": killed half-way through this fault

    @property
    def end(self) -> float:
        return self.start + self.seconds


def make_schedule(*, seed: int, duration: float, warmup: float, quiet: float) -> list[Fault]:
    """Faults from `warmup` until `duration - quiet`, one after another."""
    rng = random.Random(seed)
    faults: list[Fault] = []
    t = warmup
    while True:
        kind = rng.choice(KINDS)
        seconds = _length(kind, rng)
        if t + seconds > duration - quiet:
            return faults
        also = ""
        if not kind.startswith(("kill-", "restart-")) and rng.random() < KILL_DURING:
            also = rng.choice(("adapter", "autoscaler"))
        replica = 1 if t < duration / 2 else 0  # see the comment on the kills above
        faults.append(Fault(t, seconds, kind, replica, rng.randrange(1 << 30), also))
        t += seconds + rng.uniform(4.0, 12.0)  # a healthy gap: recovery is observed too


def _length(kind: str, rng: random.Random) -> float:
    if kind.startswith("kill-") or kind == "restart-sandbox":
        return rng.uniform(1.0, 5.0)  # time down before the restart
    if kind == "sandbox-refuse":
        return rng.uniform(2.0, 5.0)
    return rng.uniform(6.0, 15.0)


def sandbox_plan(fault: Fault) -> dict[str, Any]:
    """The sandbox fault plan document for a sandbox-* fault."""
    plan: dict[str, Any] = {"seed": fault.seed}
    if fault.kind == "sandbox-errors":
        plan["errors"] = [
            {"code": 503, "rate": 0.2, "retryAfterSeconds": 1},
            {"code": 500, "rate": 0.1},
            {"code": 429, "rate": 0.1, "retryAfterSeconds": 1},
        ]
    elif fault.kind == "sandbox-conflicts":
        plan["errors"] = [{"code": 409, "rate": 0.5, "verbs": ["update", "patch"]}]
    elif fault.kind == "sandbox-latency":
        plan["latency"] = [{"distribution": "exponential", "seconds": 0.3, "max": 3}]
    elif fault.kind == "sandbox-watch":
        plan["watch"] = {"cutAfterEvents": 5, "cutAfterSeconds": 3, "goneOnResume": 0.3}
    elif fault.kind == "sandbox-refuse":
        plan["refuseSeconds"] = fault.seconds
    return plan


def prom_plan(fault: Fault) -> dict[str, Any]:
    """Arguments of `PromFaultPlan` for a prom-* fault (prom-down stops Prometheus itself)."""
    rates = {
        "prom-errors": {"error": 0.6},
        "prom-hang": {"hang": 0.5},
        "prom-nan": {"nan": 0.7},
        "prom-empty": {"empty": 0.7},
        "prom-partial": {"partial": 0.7},
        "prom-latency": {"latency": 0.8},
    }.get(fault.kind, {})
    return {"seed": fault.seed, "rates": rates, "latency_seconds": 0.4, "hang_seconds": 20.0}
