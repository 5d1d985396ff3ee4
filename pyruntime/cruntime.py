"""cffi binding of the C runtime for the NB kinds.

``CNaiveBayes(model, numeric)`` builds the C structs over numpy buffers that
it keeps alive, runs the run-time table check, and predicts in batches, one
row eagerly, or lazily through a Python callable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._frugalml_c import ffi, lib
from .arrays import check_inputs, float_keys
from .cbind import LazyReader, c_ptr, results_to_predictions, time_batch
from .errors import ModelFormatError, RuntimeCError
from .nb import NBQ15, NBModel, Predictions

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


class CNaiveBayes:
    """The C evaluator over an NB model's tables (float32 or q15)."""

    def __init__(self, model: NBModel, numeric: str = "float32") -> None:
        if numeric not in NUMERIC_TYPES:
            raise ValueError(f"numeric must be one of {', '.join(NUMERIC_TYPES)}, got {numeric!r}")
        self.model = model
        self.numeric = numeric
        self._keep: list[Any] = []
        k = self._keep

        def ptr(ctype: str, arr: np.ndarray | None) -> object:
            return c_ptr(ffi, k, ctype, arr, arr.dtype.str if arr is not None else "f4")
        if numeric == "float32":
            self.q: NBQ15 | None = None
            n_edges, edges, d = model.strided()
            s = ffi.new("fm_nb_f32 *")
            s.edges = ptr("const float *", edges)
            s.d = ptr("const float *", d)
            s.d0, s.threshold = model.d0, model.threshold
            s.stop_hi = ptr("const float *", model.stop_hi)
            s.stop_lo = ptr("const float *", model.stop_lo)
            s.costs = ptr("const float *", model.costs)
            self._predict_batch = lib.fm_nb_f32_predict_batch
            self._predict_lazy = lib.fm_nb_f32_predict
            check = lib.fm_nb_f32_check
        else:
            q = self.q = model.q15()
            n_edges, edges, d = model.strided(q.d)
            s = ffi.new("fm_nb_q15 *")
            s.edge_keys = ptr("const int32_t *", float_keys(edges))
            s.d = ptr("const int16_t *", d)
            s.d0, s.threshold = q.d0, q.threshold
            s.stop_hi = ptr("const int32_t *", q.stop_hi)
            s.stop_lo = ptr("const int32_t *", q.stop_lo)
            s.costs = ptr("const uint16_t *", q.costs)
            self._predict_batch = lib.fm_nb_q15_predict_batch
            self._predict_lazy = lib.fm_nb_q15_predict
            check = lib.fm_nb_q15_check
        s.n_features, s.n_used, s.n_stops, s.n_edges = model.n_features, model.n_used, model.n_stops, n_edges
        s.order = ptr("const uint32_t *", model.order)
        s.stop_at = ptr("const uint32_t *", model.stop_at)
        self._struct = s
        rc = check(s)
        if rc != lib.FM_OK:
            raise ModelFormatError("the C runtime rejected the model tables (inconsistent indices or lengths)")

    @property
    def n_features(self) -> int:
        return self.model.n_features

    def _results(self, out: Any, rows: int) -> Predictions:
        return results_to_predictions(ffi, out, rows, self.q is not None, self.q.cost_unit if self.q else 1.0)

    def _call(self, X32: np.ndarray, out: Any) -> None:
        done = ffi.new("uint32_t *")
        xp = ffi.cast("const float *", ffi.from_buffer(X32)) if X32.size else ffi.NULL
        rc = self._predict_batch(self._struct, xp, X32.shape[0], X32.shape[1], out, done)
        raise_for(rc, f"row {done[0]}")

    def predict(self, X: Any) -> Predictions:
        """Predict every row of X (validated: 2-D, right width, finite)."""
        X32 = check_inputs(X, self.n_features)
        out = ffi.new("fm_result[]", max(X32.shape[0], 1))
        self._call(X32, out)
        return self._results(out, X32.shape[0])

    def predict_lazy(self, read: Callable[[int], float]) -> Predictions:
        """One prediction whose features come from read(index), called at most once per feature."""
        lazy = LazyReader(ffi, read)
        out = ffi.new("fm_result[]", 1)
        rc = self._predict_lazy(self._struct, lazy.reader, out)
        lazy.raise_for_read()
        raise_for(rc, "lazy prediction")
        return self._results(out, 1)

    def ns_per_prediction(self, X: Any, min_seconds: float = 0.2) -> float:
        """Wall-clock ns per prediction of the batch call, best of doubling repeats over >= min_seconds."""
        X32 = check_inputs(X, self.n_features)
        out = ffi.new("fm_result[]", max(X32.shape[0], 1))
        return time_batch(lambda: self._call(X32, out), X32.shape[0], min_seconds)
