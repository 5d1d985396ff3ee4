"""cffi binding of the C runtime for the NB kinds.

``CNaiveBayes(model, numeric)`` builds the C structs over numpy buffers that
it keeps alive, runs the run-time table check, and predicts in batches, one
row eagerly, or lazily through a Python callable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ._frugalml_c import ffi, lib
from .arrays import check_inputs, float_keys
from .errors import DataError, ModelFormatError, RuntimeCError
from .nb import NBQ15, NBModel, Predictions

RESULT_DTYPE = np.dtype([("label", "<i4"), ("score", "<f4"), ("score_q", "<i4"), ("n_read", "<u4"),
                         ("cost", "<f4"), ("stage", "<u4"), ("cost_q", "<u4")])
assert RESULT_DTYPE.itemsize == ffi.sizeof("fm_result")

NUMERIC_TYPES = ("float32", "q15")

ERRORS = {
    lib.FM_E_ARG: "bad argument (NULL pointer or wrong input length)",
    lib.FM_E_READ: "the feature callback failed",
    lib.FM_E_VALUE: "a feature value is NaN or infinite",
    lib.FM_E_MODEL: "inconsistent model tables",
    lib.FM_E_BUDGET: "nothing fits the budget",
}


def raise_for(rc: int, what: str) -> None:
    if rc != lib.FM_OK:
        raise RuntimeCError(rc, f"{what}: {ERRORS.get(rc, f'error {rc}')}")


def _ptr(keep: list[Any], ctype: str, arr: np.ndarray | None) -> Any:
    if arr is None:
        return ffi.NULL
    arr = np.ascontiguousarray(arr)
    keep.append(arr)
    return ffi.cast(ctype, ffi.from_buffer(arr)) if arr.size else ffi.cast(ctype, ffi.from_buffer(
        np.zeros(1, arr.dtype)))


@ffi.def_extern()
def fm_py_read(ctx: Any, index: int, value: Any) -> int:
    reader = ffi.from_handle(ctx)
    try:
        value[0] = float(reader(int(index)))
    except Exception as exc:  # noqa: BLE001 - reported through the C error code
        reader_errors.append(exc)
        return 1
    return 0


reader_errors: list[BaseException] = []


class CNaiveBayes:
    """The C evaluator over an NB model's tables (float32 or q15)."""

    def __init__(self, model: NBModel, numeric: str = "float32") -> None:
        if numeric not in NUMERIC_TYPES:
            raise ValueError(f"numeric must be one of {', '.join(NUMERIC_TYPES)}, got {numeric!r}")
        self.model = model
        self.numeric = numeric
        self._keep: list[Any] = []
        k = self._keep
        if numeric == "float32":
            self.q: NBQ15 | None = None
            n_edges, edges, d = model.strided()
            s = ffi.new("fm_nb_f32 *")
            s.edges = _ptr(k, "const float *", edges)
            s.d = _ptr(k, "const float *", d)
            s.d0, s.threshold = model.d0, model.threshold
            s.stop_hi = _ptr(k, "const float *", model.stop_hi)
            s.stop_lo = _ptr(k, "const float *", model.stop_lo)
            s.costs = _ptr(k, "const float *", model.costs)
            self._predict_batch = lib.fm_nb_f32_predict_batch
            self._predict_lazy = lib.fm_nb_f32_predict
            check = lib.fm_nb_f32_check
        else:
            q = self.q = model.q15()
            n_edges, edges, d = model.strided(q.d)
            s = ffi.new("fm_nb_q15 *")
            s.edge_keys = _ptr(k, "const int32_t *", float_keys(edges))
            s.d = _ptr(k, "const int16_t *", d)
            s.d0, s.threshold = q.d0, q.threshold
            s.stop_hi = _ptr(k, "const int32_t *", q.stop_hi)
            s.stop_lo = _ptr(k, "const int32_t *", q.stop_lo)
            s.costs = _ptr(k, "const uint16_t *", q.costs)
            self._predict_batch = lib.fm_nb_q15_predict_batch
            self._predict_lazy = lib.fm_nb_q15_predict
            check = lib.fm_nb_q15_check
        s.n_features, s.n_used, s.n_stops, s.n_edges = model.n_features, model.n_used, model.n_stops, n_edges
        s.order = _ptr(k, "const uint32_t *", model.order)
        s.stop_at = _ptr(k, "const uint32_t *", model.stop_at)
        self._struct = s
        rc = check(s)
        if rc != lib.FM_OK:
            raise ModelFormatError("the C runtime rejected the model tables (inconsistent indices or lengths)")

    @property
    def n_features(self) -> int:
        return self.model.n_features

    def _to_predictions(self, res: np.ndarray) -> Predictions:
        if self.numeric == "float32":
            score, cost = res["score"].copy(), res["cost"].astype(np.float32)
        else:
            assert self.q is not None
            score = res["score_q"].copy()
            cost = res["cost_q"].astype(np.float64) * self.q.cost_unit
        return Predictions(label=res["label"].copy(), score=score, n_read=res["n_read"].copy(), cost=cost,
                           stage=res["stage"].copy())

    def predict(self, X: Any) -> Predictions:
        """Predict every row of X (validated: 2-D, right width, finite)."""
        X32 = check_inputs(X, self.n_features)
        res = np.zeros(X32.shape[0], dtype=RESULT_DTYPE)
        done = ffi.new("uint32_t *")
        rc = self._predict_batch(self._struct, ffi.cast("const float *", ffi.from_buffer(X32)),
                                 X32.shape[0], X32.shape[1],
                                 ffi.cast("fm_result *", ffi.from_buffer(res)), done)
        raise_for(rc, f"row {done[0]}")
        return self._to_predictions(res)

    def predict_lazy(self, read: Callable[[int], float]) -> Predictions:
        """One prediction whose features come from read(index), called at most once per feature."""
        reader = ffi.new("fm_reader *")
        handle = ffi.new_handle(read)
        reader.read = lib.fm_py_read
        reader.ctx = handle
        out = ffi.new("fm_result *")
        reader_errors.clear()
        rc = self._predict_lazy(self._struct, reader, out)
        if reader_errors:
            exc = reader_errors.pop()
            raise DataError(f"feature callback failed: {exc}") from exc
        raise_for(rc, "lazy prediction")
        res = np.frombuffer(ffi.buffer(out), dtype=RESULT_DTYPE).copy()
        return self._to_predictions(res)

    def ns_per_prediction(self, X: Any, min_seconds: float = 0.2) -> float:
        """Wall-clock ns per prediction of the batch call, repeated for at least min_seconds."""
        X32 = check_inputs(X, self.n_features)
        n = X32.shape[0]
        if n == 0:
            raise DataError("no rows to time")
        res = np.zeros(n, dtype=RESULT_DTYPE)
        xp = ffi.cast("const float *", ffi.from_buffer(X32))
        rp = ffi.cast("fm_result *", ffi.from_buffer(res))
        done = ffi.new("uint32_t *")
        reps, best = 1, float("inf")
        total = 0.0
        while total < min_seconds:
            t0 = time.perf_counter()
            for _ in range(reps):
                self._predict_batch(self._struct, xp, n, X32.shape[1], rp, done)
            dt = time.perf_counter() - t0
            total += dt
            best = min(best, dt / reps)
            reps *= 2
        return best / n * 1e9
