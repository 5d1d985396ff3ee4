"""The COST column of `frugalml predict` and of the firmware examples: one text both sides produce
byte for byte, without printf("%g") on the device (runtime_c/include/core/fm_cost_text.h is the C twin).

The value printed is a float32 V: float32 tables print fm_result.cost; q15 tables print
(float)cost_q * (float)cost_unit (one float32 multiply; cost_unit is FM_COST_UNIT in the generated
header, 1 whenever the feature costs are integers up to 65535), except tables whose cost is a float in
both numeric types (``cost_is_float``: the skyline's cost polynomial), which print fm_result.cost.
V is printed exactly rounded to 6 decimals (round half to even on V's exact binary value), without
trailing zeros or a trailing point: 3 -> "3", 0.1f -> "0.1", 2.5 -> "2.5", 1e-7f -> "0". Non-finite
values print as "inf" / "-inf" / "nan", and values of 2^64 or more as "M*2^E" (M the 24-bit
significand, E the power of two)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

DECIMALS = 6


def cost_text(value: float | np.floating) -> str:
    v = np.float32(value)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    sign = "-" if np.signbit(v) and v != 0 else ""
    a = abs(float(v))
    if a >= 2.0 ** 64:
        m, e = np.frexp(np.float32(a))  # a = m * 2^e, 0.5 <= m < 1
        return f"{sign}{int(m * (1 << 24))}*2^{int(e) - 24}"
    n = round(Fraction(a) * 10 ** DECIMALS)  # exact value, round half to even
    whole, frac = divmod(n, 10 ** DECIMALS)
    text = str(whole) + (f".{frac:0{DECIMALS}d}".rstrip("0") if frac else "")
    return sign + text if text != "0" else "0"


def device_costs(cost: np.ndarray, q15: bool, cost_unit: float) -> np.ndarray:
    """The float32 cost the device prints, from Predictions.cost (q15: cost_q * cost_unit in float64)."""
    if not q15:
        return np.asarray(cost, dtype=np.float32)
    cost_q = np.rint(np.asarray(cost, np.float64) / cost_unit)
    return (cost_q.astype(np.float32) * np.float32(cost_unit)).astype(np.float32)


def no_label_text(classes: list[str]) -> str:
    """LABEL of a row without a class (deferred, or nothing fits the budget): "-1", or, when a class is named
    "-1" (libsvm's -1/+1 labels), the first of "none", "none_", ... that names no class."""
    return "-1" if "-1" not in classes else unused_text("none", classes)


def unused_text(base: str, classes: list[str]) -> str:
    """``base``, or the first of base + "_", base + "__", ... that names no class: a name the program gives
    (the deferred answer, one-vs-rest's other side, a report's column) never reads as a class's."""
    text = base
    while text in classes:
        text += "_"
    return text


def label_texts(labels: object, classes: list[str] | None) -> list[str]:
    """LABEL of `frugalml predict` and of the firmware (FM_LABEL_TEXT): the class's label text, no_label_text
    for an index outside the classes (deferred, or nothing fits the budget); the index itself without classes."""
    idx = [int(v) for v in labels]  # type: ignore[attr-defined]
    if classes is None:
        return [str(i) for i in idx]
    none = no_label_text(classes)
    return [classes[i] if 0 <= i < len(classes) else none for i in idx]


def predict_fields(tables: object, pred: object, q15: bool, cost_unit: float,
                   classes: list[str] | None = None) -> list[list[str]]:
    """The fields of each line of `frugalml predict` (and of the firmware examples): LABEL, FEATURES_READ,
    plus COST for tables whose class says ``reports_cost`` (every kind but naive Bayes). LABEL is the label
    text of the class (label_texts), or the class index when classes is None."""
    labels = label_texts(pred.label, classes)  # type: ignore[attr-defined]
    reads = [str(int(v)) for v in pred.n_read]  # type: ignore[attr-defined]
    if not getattr(tables, "reports_cost", True):
        return [[a, b] for a, b in zip(labels, reads)]
    q_cost = q15 and not getattr(tables, "cost_is_float", False)  # the skyline's cost is its float polynomial
    costs = device_costs(pred.cost, q_cost, cost_unit)  # type: ignore[attr-defined]
    return [[a, b, cost_text(c)] for a, b, c in zip(labels, reads, costs)]


def predict_lines(tables: object, pred: object, q15: bool, cost_unit: float,
                  classes: list[str] | None = None) -> list[str]:
    """The lines of `frugalml predict`: predict_fields joined by one space."""
    return [" ".join(f) for f in predict_fields(tables, pred, q15, cost_unit, classes)]


class CostedView:
    """Stands for tables that report costs (predict -o CSV always has the cost column)."""

    reports_cost = True
