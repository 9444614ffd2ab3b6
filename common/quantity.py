"""Kubernetes resource quantities (`500m`, `1.5`, `128Mi`, `1e3`) as exact decimals.

Mirrors `k8s.io/apimachinery/pkg/api/resource`: parsing accepts every suffix the API accepts,
`milli_value` is `Quantity.MilliValue()` (a fraction rounded away from zero), and
`format_quantity` writes the canonical decimal-SI form the API server would send back (largest
suffix that keeps an integer mantissa).
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_CEILING, ROUND_HALF_UP, ROUND_UP, Context, Decimal, localcontext

__all__ = [
    "QuantityError",
    "format_milli",
    "format_quantity",
    "is_quantity",
    "milli_value",
    "parse_quantity",
]


class QuantityError(ValueError):
    """A string is not a Quantity, or a number cannot be written as one."""


# sign, digits with an optional fraction (".5" and "5." are valid), then an optional suffix
_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>|[numkMGTPE]|[KMGTPE]i|[eE][+-]?[0-9]+)$"
)

_DECIMAL_SUFFIX_EXPONENT = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_SUFFIX_EXPONENT |= {"P": 15, "E": 18}
_BINARY_SUFFIX_POWER = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
# canonical decimal suffixes, largest first
_CANONICAL = [(18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, "")]
_CANONICAL += [(-3, "m"), (-6, "u"), (-9, "n")]

# exact for any quantity the parser accepts (exponents are capped at 100)
_CTX = Context(prec=200)
_MILLI = Decimal("0.001")


def parse_quantity(text: str) -> Decimal:
    """Parse a Quantity string into its exact value.

    Raises QuantityError, naming the text, for anything the Kubernetes API would reject.
    """
    if not isinstance(text, str):
        raise QuantityError(f"quantity must be a string, not {type(text).__name__}")
    match = _QUANTITY.match(text.strip())
    if match is None or not text.strip():
        raise QuantityError(
            f"invalid quantity {text!r}: expected a number with an optional "
            "suffix such as 500m, 2, 1.5k, 128Mi or 1e3"
        )
    number, suffix = match.group("num"), match.group("suffix")
    with localcontext(_CTX):
        value = Decimal(number)
        if suffix in _BINARY_SUFFIX_POWER:
            return value * (Decimal(2) ** _BINARY_SUFFIX_POWER[suffix])
        if suffix in _DECIMAL_SUFFIX_EXPONENT:
            return value.scaleb(_DECIMAL_SUFFIX_EXPONENT[suffix])
        exponent = int(suffix[1:])
        if abs(exponent) > 100:  # the API caps exponents far below this; refuse absurd input
            raise QuantityError(f"invalid quantity {text!r}: exponent out of range")
        return value.scaleb(exponent)


def milli_value(quantity: Decimal | str) -> int:
    """`Quantity.MilliValue()`: the value in thousandths, a fraction rounded away from zero.

    1.5m -> 2 and -1.5m -> -2, as apimachinery's `negativeScaleInt64` rounds; for positive
    values that is the ceil the HPA documentation describes.
    """
    value = parse_quantity(quantity) if isinstance(quantity, str) else quantity
    with localcontext(_CTX):
        return int((value * 1000).to_integral_value(rounding=ROUND_UP))


def format_milli(milli: int) -> str:
    """The canonical Quantity string for an integer number of thousandths."""
    return _canonical(Decimal(milli).scaleb(-3))


def format_quantity(value: Decimal | int | float) -> str:
    """The canonical decimal-SI Quantity string for `value`, rounded to the nearest milli.

    0.5 -> "500m", 1.5 -> "1500m", 42 -> "42", 1000 -> "1k", 1500 -> "1500".
    Raises QuantityError for NaN and infinities, which no Quantity can carry.
    """
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{value} cannot be written as a quantity")
        value = Decimal(repr(value))  # repr keeps the shortest round-tripping digits
    elif isinstance(value, int):
        value = Decimal(value)
    if not value.is_finite():
        raise QuantityError(f"{value} cannot be written as a quantity")
    with localcontext(_CTX):
        return _canonical(value.quantize(_MILLI, rounding=ROUND_HALF_UP))


def _canonical(value: Decimal) -> str:
    with localcontext(_CTX):
        if value == 0:
            return "0"
        for exponent, suffix in _CANONICAL:
            mantissa = value.scaleb(-exponent)
            if mantissa == mantissa.to_integral_value():
                return f"{int(mantissa)}{suffix}"
        # finer than nano: the API rounds up to the next nano
        nanos = value.scaleb(9).to_integral_value(rounding=ROUND_CEILING)
        return f"{int(nanos)}n"


def is_quantity(text: str) -> bool:
    """Whether `text` parses as a Quantity."""
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True
