"""Sparse linear scorers (kind ``linear``): IR, q15 quantization, the numpy
reference evaluator, the per-row read memo shared with the tree ensembles,
and the cffi binding of runtime_c/src/core/fm_linear.c.

The reference reproduces the C runtime bit for bit:

- float32: ``acc = bias; acc = acc + f32(w[k] * x[feature[k]])`` in stored
  order (no FMA); label 1 iff ``acc > decision_threshold``;
- q15 (integer only): ``x_q = trunc(x * 2**in_shift)`` computed from the
  float's IEEE bits and saturated to +-INT32_MAX (``float_to_fixed``);
  ``p = w_q * x_q`` in int64, divided by ``2**sh`` truncating toward
  zero, where sh is ``in_shift`` or the term's ``term_shift[k]`` (a weight
  far below the largest keeps 16 bits: ``w_q = round(w * 2**(w_shift + e))``,
  ``sh = in_shift + e``); ``acc = sat32(acc + p)`` after every term, starting at ``bias_q``;
  label 1 iff ``acc > decision_threshold_q``; score = acc * 2**-w_shift;
- every feature is read at most once per prediction, n_read counts distinct
  features, cost sums their costs in first-read order (float32; q15: uint16
  cost units summed in a saturating uint32, times ``cost_unit``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyruntime.arrays import FieldTables, check_inputs, f32_scalar, require, set_arrays
from pyruntime.cbind import CEvaluator, c_ptr
from pyruntime.errors import FM_OK
from pyruntime.fixedpoint import (
    INT32_MAX,
    INT32_MIN,
    MAX_SHIFT,
    float_to_fixed,
    pick_shift,
    score_bound,
    scorers_weight_shift,
    to_fixed,
)
from pyruntime.memo import ReadState, check_costs, check_q15_costs, quantize_costs
from pyruntime.result import Predictions

MAX_TERM_SHIFT = 60  # FM_MAX_TERM_SHIFT: a product |w_q * x_q| < 2**46 shifted in 64 bits


# -- float32 scorer ----------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class LinearScorer(FieldTables):
    """acc = bias + sum_k weight[k] * x[feature[k]] (float32, stored order); label 1 iff acc > threshold."""

    FIELDS = ("n_features", "feature", "weight", "bias", "decision_threshold", "costs")
    WHAT = "linear tables"

    n_features: int
    feature: np.ndarray  # int32 [nnz]
    weight: np.ndarray  # float32 [nnz]
    bias: float
    decision_threshold: float = 0.0
    costs: np.ndarray | None = None  # float32 [n_features]; None = cost 1 each

    def __post_init__(self) -> None:
        set_arrays(self, (("feature", "i4"), ("weight", "f4")))
        object.__setattr__(self, "bias", f32_scalar(self.bias, "bias"))
        object.__setattr__(self, "decision_threshold", f32_scalar(self.decision_threshold, "decision_threshold"))
        set_arrays(self, (), (("costs", "f4"),))
        self.validate()

    @property
    def nnz(self) -> int:
        return int(self.feature.shape[0])

    def validate(self) -> None:
        """Raise ModelFormatError unless lengths and indices are consistent (as fm_linear_check)."""
        require(isinstance(self.n_features, int) and self.n_features >= 0, "n_features must be an int >= 0")
        require(self.weight.shape == self.feature.shape, "weight and feature differ in length")
        require(bool(np.all((self.feature >= 0) & (self.feature < self.n_features))),
                "feature index out of range")
        require(bool(np.all(np.isfinite(self.weight))), "weights must be finite")
        require(bool(np.isfinite(self.bias) and np.isfinite(self.decision_threshold)),
                "bias and decision_threshold must be finite")
        check_costs(self.costs, self.n_features)

    # -- reference evaluation --
    def score_into(self, X32: np.ndarray, state: ReadState, acc: np.ndarray,
                   rows: np.ndarray | None = None) -> None:
        """acc[r] += terms for the rows r (default all) that have not failed (fm_linear_score)."""
        for f, w in zip(self.feature.tolist(), self.weight, strict=True):
            r = state.active(rows)
            x = state.read(X32, r, np.full(len(r), f, np.int64), self.costs)
            ok = state.status[r] == FM_OK
            r, x = r[ok], x[ok]
            acc[r] = (acc[r] + (w * x).astype(np.float32)).astype(np.float32)

    def reference(self, X32: np.ndarray) -> tuple[Predictions, np.ndarray]:
        """Predictions and per-row status over a float32 matrix that may hold NaN/inf."""
        X32 = np.asarray(X32, dtype=np.float32)
        state = ReadState.start(X32.shape[0], self.n_features)
        acc = np.full(X32.shape[0], self.bias, np.float32)
        self.score_into(X32, state, acc)
        label = (acc > np.float32(self.decision_threshold)).astype(np.int32)
        return Predictions(label=label, score=acc, n_read=state.n_read, cost=state.cost,
                           stage=np.zeros(len(acc), np.uint32)), state.status

    def predict_reference(self, X: Any) -> Predictions:
        return self.reference(check_inputs(X, self.n_features))[0]

    def score_bound(self, absmax: float) -> float:
        """|bias| + |threshold| + sum |w| * absmax (fixedpoint.score_bound): no partial score exceeds it on inputs
        within +-absmax."""
        return score_bound(self.bias, self.decision_threshold, self.weight, absmax)

    def bound_terms(self) -> tuple[float, float, np.ndarray]:
        """(bias, threshold, weights): the terms of its score bound (fixedpoint.scorers_weight_shift)."""
        return float(self.bias), float(self.decision_threshold), self.weight

    def q15(self, in_shift: int = 16, w_shift: int | None = None, *, absmax: float | None = None) -> LinearScorerQ15:
        return quantize_linear(self, in_shift, w_shift, absmax=absmax)


# -- fixed-point scorer ----------------------------------------------------------

@dataclass(frozen=True, eq=False)
class LinearScorerQ15(FieldTables):
    """Integer-only linear scorer (see the module docstring for the exact arithmetic)."""

    FIELDS = ("n_features", "feature", "weight_q", "bias_q", "decision_threshold_q", "in_shift", "w_shift", "costs",
              "cost_unit", "term_shift")
    WHAT = "linear tables"

    n_features: int
    feature: np.ndarray  # int32 [nnz]
    weight_q: np.ndarray  # int16 [nnz], weight * 2**w_shift (* 2**(term_shift[k] - in_shift) with term shifts)
    bias_q: int
    decision_threshold_q: int
    in_shift: int
    w_shift: int
    costs: np.ndarray | None = None  # uint16 cost units [n_features]; None = 1 each
    cost_unit: float = 1.0
    term_shift: np.ndarray | None = None  # uint8 [nnz] product shift of each term; None = in_shift for all

    def __post_init__(self) -> None:
        set_arrays(self, (("feature", "i4"), ("weight_q", "i2")), (("costs", "u2"), ("term_shift", "u1")))
        self.validate()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinearScorerQ15:
        """As FieldTables.from_dict; a map without term_shift (written before it existed) has none."""
        return super().from_dict({"term_shift": None, **data} if isinstance(data, dict) else data)

    def shifts(self) -> np.ndarray:
        """The product shift of every term (int64 [nnz])."""
        if self.term_shift is None:
            return np.full(self.nnz, self.in_shift, np.int64)
        return self.term_shift.astype(np.int64)

    @property
    def nnz(self) -> int:
        return int(self.feature.shape[0])

    def validate(self) -> None:
        for name in ("n_features", "bias_q", "decision_threshold_q", "in_shift", "w_shift"):
            require(isinstance(getattr(self, name), int), f"{name} must be an integer")
        require(self.n_features >= 0, "n_features must be >= 0")
        require(self.weight_q.shape == self.feature.shape, "weight_q and feature differ in length")
        require(bool(np.all((self.feature >= 0) & (self.feature < self.n_features))),
                "feature index out of range")
        require(INT32_MIN <= self.bias_q <= INT32_MAX and INT32_MIN <= self.decision_threshold_q <= INT32_MAX,
                "bias_q and decision_threshold_q must fit int32")
        require(0 <= self.in_shift <= MAX_SHIFT and 0 <= self.w_shift <= MAX_SHIFT, "shifts must be in 0..30")
        if self.term_shift is not None:
            require(self.term_shift.shape == self.feature.shape, "term_shift and feature differ in length")
            require(bool(np.all((self.term_shift >= self.in_shift) & (self.term_shift <= MAX_TERM_SHIFT))),
                    f"term shifts must be in in_shift..{MAX_TERM_SHIFT}")
        check_q15_costs(self.costs, self.n_features, self.cost_unit)

    def score_into(self, X32: np.ndarray, state: ReadState, acc: np.ndarray,
                   rows: np.ndarray | None = None) -> None:
        """acc (int64 holding int32 values) updated as fm_linear_q15_score."""
        for f, w, sh in zip(self.feature.tolist(), self.weight_q.astype(np.int64), self.shifts(), strict=True):
            r = state.active(rows)
            x = state.read(X32, r, np.full(len(r), f, np.int64), self.costs, integer=True)
            ok = state.status[r] == FM_OK
            r, x = r[ok], x[ok]
            p = w * float_to_fixed(x, self.in_shift).astype(np.int64)
            p = np.where(p < 0, -((-p) >> sh), p >> sh)
            acc[r] = np.clip(acc[r] + p, INT32_MIN, INT32_MAX)

    def reference(self, X32: np.ndarray) -> tuple[Predictions, np.ndarray]:
        """Predictions (score in int32 table units, cost in cost units * cost_unit) and status."""
        X32 = np.asarray(X32, dtype=np.float32)
        state = ReadState.start(X32.shape[0], self.n_features)
        acc = np.full(X32.shape[0], self.bias_q, np.int64)
        self.score_into(X32, state, acc)
        label = (acc > self.decision_threshold_q).astype(np.int32)
        return Predictions(label=label, score=acc.astype(np.int32), n_read=state.n_read,
                           cost=state.cost_q.astype(np.float64) * self.cost_unit,
                           stage=np.zeros(len(acc), np.uint32)), state.status

    def predict_reference(self, X: Any) -> Predictions:
        return self.reference(check_inputs(X, self.n_features))[0]




def quantize_linear(s: LinearScorer, in_shift: int = 16, w_shift: int | None = None, *,
                    term_shifts: bool = True, absmax: float | None = None) -> LinearScorerQ15:
    """Fixed-point tables: inputs scaled by 2**in_shift (choose it so that |x| * 2**in_shift < 2**31),
    weights by 2**w_shift (default: the largest that keeps every weight in int16 and, given the inputs' largest
    |x| ``absmax``, the score bound in half the int32 range: fixedpoint.weight_shift). With ``term_shifts``, a
    weight that is not exact at w_shift is scaled by 2**(w_shift + e), e the largest that keeps it in int16, and
    its product shifted by in_shift + e (term_shift; None when no weight gains a bit)."""
    require(0 <= in_shift <= MAX_SHIFT, "in_shift must be in 0..30")
    if w_shift is None:
        w_shift = scorers_weight_shift([s.bound_terms()], absmax)
    require(0 <= w_shift <= MAX_SHIFT, "w_shift must be in 0..30")
    w = s.weight.astype(np.float64)
    extra = np.zeros(len(w), np.int64)
    if term_shifts:  # a weight held exactly at w_shift keeps it (so do zero weights)
        extra = np.array([0 if float(v * 2.0**w_shift).is_integer() else max(pick_shift(abs(float(v))) - w_shift, 0)
                          for v in w], np.int64)
    wq = np.clip(np.round(w * 2.0 ** (w_shift + extra)), -32768, 32767).astype(np.int16)
    costs, unit = quantize_costs(s.costs)
    return LinearScorerQ15(n_features=s.n_features, feature=s.feature.copy(), weight_q=wq,
                           bias_q=to_fixed(s.bias, w_shift),
                           decision_threshold_q=to_fixed(s.decision_threshold, w_shift),
                           in_shift=in_shift, w_shift=w_shift, costs=costs, cost_unit=unit,
                           term_shift=(in_shift + extra).astype(np.uint8) if np.any(extra > 0) else None)


def in_shift_for(absmax: float) -> int:
    """Largest input shift in 0..30 with absmax * 2**shift < 2**31 (no saturation up to absmax)."""
    return pick_shift(float(absmax), INT32_MAX - 1)


def q15_input_scale(input_absmax: float) -> tuple[int, float]:
    """A model's q15 input scale from its training inputs' largest |x|: (in_shift, absmax), absmax at least 1.
    Every linear part of a gated, CSTC or skyline model is quantized with it (in_shift_for(absmax), and absmax
    in its score bound). Inputs of order one or below all take in_shift 30; the floor of 1 keeps room in the
    score bound for new inputs up to +-1 where the training inputs were smaller (or all zero)."""
    amax = max(float(input_absmax), 1.0)
    return in_shift_for(amax), amax


# -- C binding -------------------------------------------------------------------------

def linear_struct(ffi: Any, tables: dict[str, Any], keep: list[Any]) -> Any:
    """fm_linear / fm_linear_q15 over the arrays of a to_dict() (not validated: C checks it)."""
    q = "weight_q" in tables
    s = ffi.new("fm_linear_q15 *" if q else "fm_linear *")
    s.n_features = tables["n_features"]
    s.nnz = len(tables["feature"])
    s.feature = c_ptr(ffi, keep, "const int32_t *", tables["feature"], "i4")
    if q:
        s.weight_q = c_ptr(ffi, keep, "const int16_t *", tables["weight_q"], "i2")
        s.bias_q, s.decision_threshold_q = tables["bias_q"], tables["decision_threshold_q"]
        s.in_shift, s.w_shift = tables["in_shift"], tables["w_shift"]
        s.costs = c_ptr(ffi, keep, "const uint16_t *", tables["costs"], "u2")
        s.term_shift = c_ptr(ffi, keep, "const uint8_t *", tables.get("term_shift"), "u1")
    else:
        s.weight = c_ptr(ffi, keep, "const float *", tables["weight"], "f4")
        s.bias, s.decision_threshold = tables["bias"], tables["decision_threshold"]
        s.costs = c_ptr(ffi, keep, "const float *", tables["costs"], "f4")
    return s


class CLinear(CEvaluator):
    """The C evaluator over a linear scorer's tables (float32 or q15 by the model's type)."""

    family, what = "linear", "linear scorer"

    def make_struct(self) -> Any:
        return linear_struct(self.ffi, self.model.to_dict(), self._keep)
