"""Fixed-point helpers shared by every q15 model family: the integer limits,
the float-to-fixed conversion the C runtime does (fm_float_to_fixed), rounding
of table values and the choice of a shift."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from pyruntime.arrays import require

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1
MAX_SHIFT = 30


def float_to_fixed(x: np.ndarray, shift: int) -> np.ndarray:
    """trunc(x * 2**shift) saturated to +-INT32_MAX, from the float32 bits (fm_float_to_fixed)."""
    require(0 <= shift <= MAX_SHIFT, "shift must be in 0..30")
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.int64)
    e = (bits >> 23) & 0xFF
    m = bits & 0x7FFFFF
    sub = e == 0
    e = np.where(sub, 1, e)
    m = np.where(sub, m, m | 0x800000)
    k = e - 150 + shift
    up = np.where(k > 7, INT32_MAX, m << np.clip(k, 0, 7))
    down = np.where(k <= -24, 0, m >> np.clip(-k, 0, 23))
    mag = np.where(m == 0, 0, np.where(k >= 0, up, down))
    mag = np.minimum(mag, INT32_MAX)
    return np.where((bits & 0x80000000) != 0, -mag, mag).astype(np.int32)


def to_fixed(value: float, shift: int, lo: int = INT32_MIN, hi: int = INT32_MAX) -> int:
    """round(value * 2**shift), saturated to [lo, hi]."""
    return int(np.clip(np.round(np.float64(value) * 2.0**shift), lo, hi))


def weight_shift(wmax: float, bound: float | None = None) -> int:
    """A scorer's weight shift: the largest that keeps every weight (|w| <= wmax) in int16 and, given ``bound``
    (the scorer's score bound |bias| + |threshold| + sum |w| * input absmax), every partial score in half the
    int32 range. Without the bound, weights far below their inputs' magnitude (features of order 1e6 and weights
    of order 1e-6) took shift 30 and saturated the bias and the sums."""
    shift = pick_shift(wmax)
    return shift if bound is None else min(shift, pick_shift(bound, INT32_MAX // 2))


def score_bound(bias: float, threshold: float, weights: np.ndarray, absmax: float) -> float:
    """|bias| + |threshold| + sum |w| * absmax: no partial score of a linear scorer exceeds it on inputs within
    +-absmax (the bound weight_shift keeps in int32)."""
    wsum = float(np.abs(np.asarray(weights, np.float64)).sum())
    return abs(float(bias)) + abs(float(threshold)) + wsum * float(absmax)


def scorers_weight_shift(scorers: Iterable[tuple[float, float, np.ndarray]], absmax: float | None) -> int:
    """One weight shift for linear scorers (bias, threshold, weights) that share an accumulator scale: weight_shift
    of their largest |w| and, given the inputs' largest |x| ``absmax``, their largest score bound."""
    parts = list(scorers)
    require(len(parts) > 0, "scorers_weight_shift needs at least one scorer")
    wmax = max(float(np.max(np.abs(np.asarray(w, np.float64)), initial=0.0)) for _, _, w in parts)
    bound = None if absmax is None else max(score_bound(b, t, w, absmax) for b, t, w in parts)
    return weight_shift(wmax, bound)


def pick_shift(peak: float, limit: int = 32767) -> int:
    """Largest shift in 0..30 with round(peak * 2**shift) <= limit (0 if none fits)."""
    shift = MAX_SHIFT
    while shift > 0 and np.round(peak * 2.0**shift) > limit:
        shift -= 1
    return shift
