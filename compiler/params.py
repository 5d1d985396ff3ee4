"""Range checks of the estimators' numeric parameters, made at fit as scikit-learn's are: a bad value is named
in a ValueError with its range, before any training, instead of surfacing later as an IndexError, a NaN that
slips through ``value < 0`` or a table the model format refuses. The CLI's options carry the same ranges
(click's ``IntRange``/``FloatRange``); these are for the Python entry points."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np


def _interval(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if high is None:
        return f"> {low:g}" if low_open else f">= {low:g}"
    if low is None:
        return f"< {high:g}" if high_open else f"<= {high:g}"
    return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def check_number(name: str, value: Any, *, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False, integer: bool = False,
                 none_ok: bool = False) -> None:
    """ValueError naming ``name`` unless ``value`` is a finite real number (a whole one when ``integer``; bool
    is neither) within the interval from ``low`` to ``high`` (open at an end when ``low_open`` / ``high_open``).
    None passes when ``none_ok``."""
    if value is None and none_ok:
        return
    kind = "an integer" if integer else "a finite number"
    where = "" if low is None and high is None else " " + _interval(low, high, low_open, high_open)
    wanted = f"{name} must be {kind}{where}{' or None' if none_ok else ''}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, Integral if integer else Real):
        raise ValueError(wanted)
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(wanted)
    if low is not None and (v <= low if low_open else v < low):
        raise ValueError(wanted)
    if high is not None and (v >= high if high_open else v > high):
        raise ValueError(wanted)


def check_numbers(name: str, values: Any) -> None:
    """ValueError naming ``name`` unless ``values`` is a non-empty sequence (list, tuple, 1-D array) of numbers; each
    value's range is the caller's to check."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not hasattr(values, "__iter__") \
            or len(values) == 0 or not all(isinstance(v, Real) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{name} must be a non-empty sequence of numbers (a tuple or a list), got {values!r}")


def check_n_jobs(value: Any) -> None:
    """n_jobs as the CLI's --jobs: None (one process), a positive number of processes or -1 (one per core)."""
    if value is None or (isinstance(value, Integral) and not isinstance(value, bool) and (value >= 1 or value == -1)):
        return
    raise ValueError(f"n_jobs must be None, a positive number of processes or -1 (one per core), got {value!r}")


def check_flag(name: str, value: Any, *, none_ok: bool = False) -> None:
    """ValueError naming ``name`` unless ``value`` is True or False (numpy's bool too), or None when ``none_ok``:
    a flag given as 'no', 0.5 or NaN would otherwise be taken for its truth value without a word."""
    if value is None and none_ok:
        return
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be {'True, False or None' if none_ok else 'True or False'}, got {value!r}")


def check_text(name: str, value: Any, *, none_ok: bool = False) -> None:
    """ValueError naming ``name`` unless ``value`` is a string (or None when ``none_ok``)."""
    if value is None and none_ok:
        return
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string{' or None' if none_ok else ''}, got {value!r}")
