"""Per-direction tolerances (`Tolerances`, `tolerancesForHpa` in replica_calculator.go)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal
from typing import Any

from autoscaler.core.fields import DocumentError
from autoscaler.core.model import ControllerOptions, Spec
from common.quantity import QuantityError, parse_quantity

__all__ = ["Tolerances", "as_approximate_float64", "parse_tolerance", "tolerances_for"]


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


def parse_tolerance(value: Any, path: str) -> float:
    """A tolerance Quantity as the controller's AsApproximateFloat64 sees it; DocumentError
    naming `path` when it does not parse or is negative."""
    text = value if isinstance(value, str) else repr(value)
    try:
        tolerance = as_approximate_float64(parse_quantity(text))
    except QuantityError as e:
        raise DocumentError(path, str(e)) from e
    if tolerance < 0:
        raise DocumentError(path, "must not be negative")
    return tolerance


def as_approximate_float64(exact: Decimal) -> float:
    """Quantity.AsApproximateFloat64 of a tolerance as the controller reads it back from the API.

    The API stores the canonical form (0.059 -> "59m", rounded up to a nano), which parses to an
    integer mantissa and a power of ten that is a multiple of 3; Go then computes
    `float64(mantissa) * math.Pow10(exponent)`: 59 * 1e-3 = 0.059000000000000004, not 0.059,
    and at a tolerance bound that last bit decides.
    """
    nanos = exact.scaleb(9).to_integral_value(rounding=ROUND_UP)  # ParseQuantity's inf.RoundUp
    if nanos == 0:
        return 0.0
    mantissa, exponent = int(nanos), -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3  # AsCanonicalBytes lowers the exponent to a multiple of 3
    mantissa, exponent = mantissa * 10**shift, exponent - shift
    return float(mantissa) if exponent == 0 else float(mantissa) * 10.0**exponent
