"""Helpers shared by the protocol modules."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..reading import DecodeError


def scale(count: int, exponent: int) -> float:
    """``count * 10**exponent`` computed so that 12340, -5 gives exactly 0.1234."""
    if exponent < 0:
        return count / 10 ** (-exponent)
    return float(count * 10**exponent)


def pick_range(
    value: float, ranges: Sequence[tuple[int, int]], max_count: int
) -> tuple[int, int, int] | None:
    """Choose the finest range that can show ``value``.

    ``ranges`` holds (range index, exponent) pairs; returns (index, exponent, count) or None when
    the value overflows every range.
    """
    for index, exponent in sorted(ranges, key=lambda r: r[1]):
        count = int(round(abs(value) / 10.0**exponent))
        if count <= max_count:
            return index, exponent, count
    return None


def pick_decimals(
    display: float, max_count: int, choices: Sequence[int] = (3, 2, 1, 0)
) -> tuple[int, int] | None:
    """For LCD-style protocols: the most decimals that keep ``display`` within the count limit."""
    if math.isinf(display) or math.isnan(display):
        return None
    for decimals in choices:
        count = int(round(abs(display) * 10**decimals))
        if count <= max_count:
            return decimals, count
    return None


def bit(byte: int, n: int) -> bool:
    return (byte >> n) & 1 == 1


def scale_display(count: int, divisor: int, factor: float) -> float:
    """``count / divisor * factor`` with a single rounding (1234 / 10 * 1e-3 gives exactly 0.1234)."""
    if factor < 1:
        return count / (divisor * round(1 / factor))
    return count * round(factor) / divisor


def range_exponent(family: str, mode: str, exponents: Sequence[int | None], index: int) -> int:
    """``exponents[index]``, the exponent of the digit count on range ``index``; a range the mode does not
    have (None) is a corrupt packet, a DecodeError naming the ranges it has."""
    exponent = exponents[index]
    if exponent is None:
        have = ", ".join(str(i) for i, e in enumerate(exponents) if e is not None)
        raise DecodeError(f"{family}: {mode} has no range {index} (ranges {have})")
    return exponent


def diode_volts(family: str, unit: str) -> str:
    """The unit of a reading with the diode symbol: volts; beside another quantity it is no meter's state."""
    if unit not in ("", "V"):
        raise DecodeError(f"{family}: the diode symbol beside {unit} (diode mode shows volts)")
    return "V"
