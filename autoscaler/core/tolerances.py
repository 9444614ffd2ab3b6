"""Per-direction tolerances (`Tolerances`, `tolerancesForHpa` in replica_calculator.go)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from autoscaler.core.model import ControllerOptions, Spec

__all__ = ["Tolerances", "tolerances_for"]


@dataclass(frozen=True, slots=True)
class Tolerances:
    scale_down: float
    scale_up: float

    def is_within(self, ratio: float) -> bool:
        """Both bounds inclusive, in float64 (22000/20000 == 1.0 + 0.1 is within); NaN never."""
        if math.isnan(ratio):
            return False
        return (1.0 - self.scale_down) <= ratio <= (1.0 + self.scale_up)

    def describe(self) -> str:
        if self.scale_down == self.scale_up:
            return f"tolerance ±{self.scale_down:g}"
        return f"tolerance -{self.scale_down:g}/+{self.scale_up:g}"


def tolerances_for(spec: Spec, options: ControllerOptions) -> Tolerances:
    """The controller tolerance, overridden per side by behavior.scale{Up,Down}.tolerance when
    the HPAConfigurableTolerance gate is on."""
    default = options.effective_tolerance
    down = up = default
    behavior = spec.behavior
    if options.configurable_tolerance and behavior is not None:
        if behavior.scale_down.tolerance is not None:
            down = behavior.scale_down.tolerance
        if behavior.scale_up.tolerance is not None:
            up = behavior.scale_up.tolerance
    return Tolerances(scale_down=down, scale_up=up)
