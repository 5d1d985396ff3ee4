"""Sparse linear scorers (kind ``linear``): IR, q15 quantization, the numpy
reference evaluator, the per-row read memo shared with the tree ensembles,
and the cffi binding of runtime_c/src/fm_linear.c.

The reference reproduces the C runtime bit for bit:

- float32: ``acc = bias; acc = acc + f32(w[k] * x[feature[k]])`` in stored
  order (no FMA); label 1 iff ``acc > decision_threshold``;
- q15 (integer only): ``x_q = trunc(x * 2**in_shift)`` computed from the
  float's IEEE bits and saturated to +-INT32_MAX (``float_to_fixed``);
  ``p = w_q * x_q`` in int64, divided by ``2**in_shift`` truncating toward
  zero; ``acc = sat32(acc + p)`` after every term, starting at ``bias_q``;
  label 1 iff ``acc > decision_threshold_q``; score = acc * 2**-w_shift;
- every feature is read at most once per prediction, n_read counts distinct
  features, cost sums their costs in first-read order (float32; q15: uint16
  cost units summed in a saturating uint32, times ``cost_unit``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .arrays import as_array, check_inputs, require
from .cbind import LazyReader, c_ptr, results_to_predictions
from .errors import ModelFormatError, RuntimeCError
from .nb import Predictions

FM_OK = 0
FM_E_VALUE = -3
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1
MAX_SHIFT = 30


# -- helpers shared with the tree ensembles ------------------------------------

def check_costs(costs: np.ndarray | None, n_features: int) -> None:
    if costs is not None:
        require(costs.shape == (n_features,), "costs must have one entry per feature")
        require(bool(np.all(np.isfinite(costs)) and np.all(costs >= 0)), "costs must be finite and >= 0")


def quantize_costs(costs: np.ndarray | None) -> tuple[np.ndarray | None, float]:
    """uint16 cost units and the unit (integer costs up to 65535 stay exact)."""
    if costs is None:
        return None, 1.0
    c = costs.astype(np.float64)
    if np.all(c == np.round(c)) and c.max(initial=0) <= 65535:
        return c.astype(np.uint16), 1.0
    unit = float(c.max()) / 65535.0 if c.max(initial=0) > 0 else 1.0
    return np.round(c / unit).astype(np.uint16), unit


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


def pick_shift(peak: float, limit: int = 32767) -> int:
    """Largest shift in 0..30 with round(peak * 2**shift) <= limit (0 if none fits)."""
    shift = MAX_SHIFT
    while shift > 0 and np.round(peak * 2.0**shift) > limit:
        shift -= 1
    return shift


@dataclass
class ReadState:
    """Per-row read memo of a batch of lazy predictions: the numpy twin of fm_memo plus the
    n_read / cost accounting of fm_result. Share one state between the models of one
    prediction (gate and scorer, cascade stages, slices of an ensemble)."""

    seen: np.ndarray  # bool [rows, n_features]
    n_read: np.ndarray  # uint32 [rows]
    cost: np.ndarray  # float32 [rows]
    cost_q: np.ndarray  # int64 [rows], saturates at UINT32_MAX
    status: np.ndarray  # int32 [rows]: FM_OK, or FM_E_VALUE once a row read a NaN/inf

    @classmethod
    def start(cls, rows: int, n_features: int) -> ReadState:
        return cls(seen=np.zeros((rows, n_features), dtype=bool), n_read=np.zeros(rows, np.uint32),
                   cost=np.zeros(rows, np.float32), cost_q=np.zeros(rows, np.int64),
                   status=np.zeros(rows, np.int32))

    def active(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Indices of the rows (of `rows`, default all) that have not failed."""
        if rows is None:
            return np.flatnonzero(self.status == FM_OK)
        rows = np.asarray(rows, dtype=np.int64)
        return rows[self.status[rows] == FM_OK]

    def read(self, X32: np.ndarray, rows: np.ndarray, feats: np.ndarray, costs: np.ndarray | None,
             integer: bool = False) -> np.ndarray:
        """X32[rows, feats] with first-read accounting; rows (distinct) reading a non-finite value
        get status FM_E_VALUE. integer: costs are uint16 units added to cost_q."""
        vals = X32[rows, feats]
        new = ~self.seen[rows, feats]
        bad = new & ~np.isfinite(vals)
        self.status[rows[bad]] = FM_E_VALUE
        ok = new & ~bad
        r, f = rows[ok], feats[ok]
        self.seen[r, f] = True
        self.n_read[r] += np.uint32(1)
        if integer:
            c = np.ones(len(f), np.int64) if costs is None else costs[f].astype(np.int64)
            self.cost_q[r] = np.minimum(self.cost_q[r] + c, UINT32_MAX)
        else:
            c32 = np.ones(len(f), np.float32) if costs is None else costs[f]
            self.cost[r] = (self.cost[r] + c32).astype(np.float32)
        return vals


def _f32(v: Any) -> float:
    return float(np.float32(v))


# -- float32 scorer ----------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class LinearScorer:
    """acc = bias + sum_k weight[k] * x[feature[k]] (float32, stored order); label 1 iff acc > threshold."""

    n_features: int
    feature: np.ndarray  # int32 [nnz]
    weight: np.ndarray  # float32 [nnz]
    bias: float
    decision_threshold: float = 0.0
    costs: np.ndarray | None = None  # float32 [n_features]; None = cost 1 each

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "feature", as_array(self.feature, "i4", "feature"))
        set_(self, "weight", as_array(self.weight, "f4", "weight"))
        set_(self, "bias", _f32(self.bias))
        set_(self, "decision_threshold", _f32(self.decision_threshold))
        if self.costs is not None:
            set_(self, "costs", as_array(self.costs, "f4", "costs"))
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

    def to_dict(self) -> dict[str, Any]:
        return {"n_features": self.n_features, "feature": self.feature, "weight": self.weight,
                "bias": self.bias, "decision_threshold": self.decision_threshold, "costs": self.costs}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinearScorer:
        return cls(**_fields(data, _F32_FIELDS))

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

    def q15(self, in_shift: int = 16, w_shift: int | None = None) -> LinearScorerQ15:
        return quantize_linear(self, in_shift, w_shift)


# -- fixed-point scorer ----------------------------------------------------------

@dataclass(frozen=True, eq=False)
class LinearScorerQ15:
    """Integer-only linear scorer (see the module docstring for the exact arithmetic)."""

    n_features: int
    feature: np.ndarray  # int32 [nnz]
    weight_q: np.ndarray  # int16 [nnz], weight * 2**w_shift
    bias_q: int
    decision_threshold_q: int
    in_shift: int
    w_shift: int
    costs: np.ndarray | None = None  # uint16 cost units [n_features]; None = 1 each
    cost_unit: float = 1.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "feature", as_array(self.feature, "i4", "feature"))
        set_(self, "weight_q", as_array(self.weight_q, "i2", "weight_q"))
        if self.costs is not None:
            set_(self, "costs", as_array(self.costs, "u2", "costs"))
        self.validate()

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
        if self.costs is not None:
            require(self.costs.shape == (self.n_features,), "costs must have one entry per feature")
        require(bool(np.isfinite(self.cost_unit) and self.cost_unit > 0), "cost_unit must be > 0")

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _Q15_FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinearScorerQ15:
        return cls(**_fields(data, _Q15_FIELDS))

    def score_into(self, X32: np.ndarray, state: ReadState, acc: np.ndarray,
                   rows: np.ndarray | None = None) -> None:
        """acc (int64 holding int32 values) updated as fm_linear_q15_score."""
        for f, w in zip(self.feature.tolist(), self.weight_q.astype(np.int64), strict=True):
            r = state.active(rows)
            x = state.read(X32, r, np.full(len(r), f, np.int64), self.costs, integer=True)
            ok = state.status[r] == FM_OK
            r, x = r[ok], x[ok]
            p = w * float_to_fixed(x, self.in_shift).astype(np.int64)
            p = np.where(p < 0, -((-p) >> self.in_shift), p >> self.in_shift)
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


_F32_FIELDS = ("n_features", "feature", "weight", "bias", "decision_threshold", "costs")
_Q15_FIELDS = ("n_features", "feature", "weight_q", "bias_q", "decision_threshold_q", "in_shift", "w_shift",
               "costs", "cost_unit")


def _fields(data: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    require(isinstance(data, dict), "tables must be a map")
    missing = [n for n in names if n not in data]
    require(not missing, f"tables miss fields: {', '.join(missing)}")
    return {n: data[n] for n in names}


def quantize_linear(s: LinearScorer, in_shift: int = 16, w_shift: int | None = None) -> LinearScorerQ15:
    """Fixed-point tables: inputs scaled by 2**in_shift (choose it so that |x| * 2**in_shift < 2**31),
    weights by 2**w_shift (default: the largest that keeps every weight in int16)."""
    require(0 <= in_shift <= MAX_SHIFT, "in_shift must be in 0..30")
    if w_shift is None:
        w_shift = pick_shift(float(np.max(np.abs(s.weight), initial=0.0)))
    require(0 <= w_shift <= MAX_SHIFT, "w_shift must be in 0..30")
    wq = np.clip(np.round(s.weight.astype(np.float64) * 2.0**w_shift), -32768, 32767).astype(np.int16)
    costs, unit = quantize_costs(s.costs)
    return LinearScorerQ15(n_features=s.n_features, feature=s.feature.copy(), weight_q=wq,
                           bias_q=to_fixed(s.bias, w_shift),
                           decision_threshold_q=to_fixed(s.decision_threshold, w_shift),
                           in_shift=in_shift, w_shift=w_shift, costs=costs, cost_unit=unit)


def in_shift_for(absmax: float) -> int:
    """Largest input shift in 0..30 with absmax * 2**shift < 2**31 (no saturation up to absmax)."""
    return pick_shift(float(absmax), INT32_MAX - 1)


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
    else:
        s.weight = c_ptr(ffi, keep, "const float *", tables["weight"], "f4")
        s.bias, s.decision_threshold = tables["bias"], tables["decision_threshold"]
        s.costs = c_ptr(ffi, keep, "const float *", tables["costs"], "f4")
    return s


class CLinear:
    """The C evaluator over a linear scorer's tables (float32 or q15 by the model's type).

    ffi/lib default to the packaged binding pyruntime._frugalml_c."""

    def __init__(self, model: LinearScorer | LinearScorerQ15, ffi: Any = None, lib: Any = None) -> None:
        if ffi is None or lib is None:
            from ._frugalml_c import ffi, lib  # noqa: PLC0415 - the binding is optional for the reference
        self.ffi, self.lib, self.model = ffi, lib, model
        self.q = isinstance(model, LinearScorerQ15)
        self._keep: list[Any] = []
        self._struct = linear_struct(ffi, model.to_dict(), self._keep)
        check = lib.fm_linear_q15_check if self.q else lib.fm_linear_check
        if check(self._struct) != FM_OK:
            raise ModelFormatError("the C runtime rejected the linear scorer's tables")
        n = max(model.n_features, 1)
        self._values = ffi.new("float[]", n)
        self._seen = ffi.new("uint8_t[]", n)
        self.memo = ffi.new("fm_memo *")
        lib.fm_memo_init(self.memo, self._values, self._seen, model.n_features)

    def predict(self, X: Any) -> Predictions:
        X32 = check_inputs(X, self.model.n_features)
        return self.predict_raw(X32)

    def predict_raw(self, X32: np.ndarray) -> Predictions:
        """Batch prediction over a float32 matrix; RuntimeCError on the first failing row."""
        ffi, lib = self.ffi, self.lib
        X32 = np.ascontiguousarray(X32, dtype=np.float32)
        rows = X32.shape[0]
        out = ffi.new("fm_result[]", max(rows, 1))
        done = ffi.new("uint32_t *")
        fn = lib.fm_linear_q15_predict_batch if self.q else lib.fm_linear_predict_batch
        xp = ffi.cast("const float *", ffi.from_buffer(X32)) if X32.size else ffi.NULL
        rc = fn(self._struct, xp, rows, X32.shape[1] if X32.ndim == 2 else 0, self.memo, out, done)
        if rc != FM_OK:
            raise RuntimeCError(rc, f"linear scorer failed at row {done[0]} (code {rc})")
        return results_to_predictions(ffi, out, rows, self.q, getattr(self.model, "cost_unit", 1.0))

    def predict_lazy(self, read: Callable[[int], float]) -> Predictions:
        """One prediction whose features come from read(index), called at most once per feature."""
        lazy = LazyReader(self.ffi, read)
        out = self.ffi.new("fm_result[]", 1)
        fn = self.lib.fm_linear_q15_predict if self.q else self.lib.fm_linear_predict
        rc = fn(self._struct, lazy.reader, self.memo, out)
        lazy.raise_for_read()
        if rc != FM_OK:
            raise RuntimeCError(rc, f"linear scorer failed (code {rc})")
        return results_to_predictions(self.ffi, out, 1, self.q, getattr(self.model, "cost_unit", 1.0))
