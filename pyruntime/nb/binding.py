"""cffi binding of the C runtime for the NB kinds (runtime_c/src/nb/fm_nb.c).

``CNaiveBayes(model, numeric)`` builds the C struct (record or fixed-stride
layout) over numpy buffers that it keeps alive, runs the run-time table check
(unless ``check=False``: the skyline's fm_skymodel check covers its NB
models), and predicts in batches or lazily through a Python callable
(machinery in pyruntime.cbind).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyruntime.arrays import float_keys
from pyruntime.cbind import CEvaluator, c_ptr
from pyruntime.nb.model import NBModel
from pyruntime.nb.multi import NBMultiModel
from pyruntime.nb.records import hot_steps, pos_records

NUMERIC_TYPES = ("float32", "q15")


class CNaiveBayes(CEvaluator):
    """The C evaluator over an NB model's tables (float32 or q15)."""

    what = "naive Bayes model"

    def __init__(self, model: NBModel, numeric: str = "float32", ffi: Any = None, lib: Any = None,
                 check: bool = True, q15: Any = None) -> None:
        """``q15``: the model's q15 form when the caller has it already (``model.q15()`` otherwise)."""
        if numeric not in NUMERIC_TYPES:
            raise ValueError(f"numeric must be one of {', '.join(NUMERIC_TYPES)}, got {numeric!r}")
        self.numeric = numeric
        self._q15_given = q15
        super().__init__(model, ffi, lib, check)

    def _q15_form(self, model: Any) -> Any:
        return self._q15_given if self._q15_given is not None else model.q15()

    def is_q15(self, model: Any) -> bool:
        return self.numeric == "q15"

    def symbol(self, verb: str) -> str:
        return f"fm_nb_q15_{verb}" if self.q else f"fm_nb_{verb}"

    def make_scratch(self) -> tuple[Any, ...]:
        return ()

    def make_struct(self) -> Any:
        ffi, model = self.ffi, self.model

        def ptr(ctype: str, arr: np.ndarray | None) -> object:
            return c_ptr(ffi, self._keep, ctype, arr, arr.dtype.str if arr is not None else "f4")

        def rec_ptr(ctype: str, rec: np.ndarray) -> object:
            a = rec if rec.size else np.zeros(1, dtype=rec.dtype)
            self._keep.append(a)
            return ffi.cast(ctype, ffi.from_buffer(a))

        if not self.q:
            rec = pos_records(model)
            n_edges, edges, d = model.strided()
            s = ffi.new("fm_nb *")
            if rec is None:
                s.edges = ptr("const float *", edges)
                s.d = ptr("const float *", d)
                s.costs = ptr("const float *", model.costs)
            else:
                s.pos = rec_ptr("const fm_nb_pos *", rec)
                s.cum_cost = ptr("const float *", model.cum_cost())
            s.d0, s.threshold = model.d0, model.threshold
            s.stop_hi = ptr("const float *", model.stop_hi)
            s.stop_lo = ptr("const float *", model.stop_lo)
        else:
            q = self.q15 = self._q15_form(model)
            rec = pos_records(model, q)
            n_edges, edges, d = model.strided(q.d)
            s = ffi.new("fm_nb_q15 *")
            if rec is None:
                s.edge_keys = ptr("const int32_t *", float_keys(edges))
                s.d = ptr("const int16_t *", d)
                s.costs = ptr("const uint16_t *", q.costs)
            else:
                s.hot = rec_ptr("const fm_nb_q15_hot *", hot_steps(rec, model.stop_at))
                s.cum_cost = ptr("const uint32_t *", q.cum_cost())
            s.d0, s.threshold = q.d0, q.threshold
            s.stop_hi = ptr("const int32_t *", q.stop_hi)
            s.stop_lo = ptr("const int32_t *", q.stop_lo)
        s.n_features, s.n_used, s.n_stops = model.n_features, model.n_used, model.n_stops
        s.n_edges = 2 if rec is not None else n_edges
        if rec is None:
            s.order = ptr("const uint32_t *", model.order)
        s.stop_at = ptr("const uint32_t *", model.stop_at)
        return s

    def q15_cost_unit(self) -> float:
        return float(self.q15.cost_unit)


class CNaiveBayesK(CNaiveBayes):
    """The C evaluator over a K-class NB model's tables (fm_nbk / fm_nbk_q15, float32 or q15)."""

    what = "K-class naive Bayes model"

    def symbol(self, verb: str) -> str:
        return f"fm_nbk_q15_{verb}" if self.q else f"fm_nbk_{verb}"

    def make_struct(self) -> Any:
        ffi, model = self.ffi, self.model
        assert isinstance(model, NBMultiModel)

        def ptr(ctype: str, arr: np.ndarray | None) -> object:
            return c_ptr(ffi, self._keep, ctype, arr, arr.dtype.str if arr is not None else "f4")

        if not self.q:
            n_edges, edges, d = model.strided()
            s = ffi.new("fm_nbk *")
            s.edges = ptr("const float *", edges)
            s.d = ptr("const float *", d.ravel())
            s.d0 = ptr("const float *", model.d0)
            s.stop_margin = ptr("const float *", model.stop_margin)
            s.costs = ptr("const float *", model.costs)
        else:
            q = self.q15 = self._q15_form(model)
            n_edges, edges, d = model.strided(q.words)
            s = ffi.new("fm_nbk_q15 *")
            s.edge_keys = ptr("const int32_t *", float_keys(edges))
            s.d = ptr("const uint32_t *", d.ravel())
            s.d0 = ptr("const uint32_t *", q.d0_words)
            s.stop_margin = ptr("const int32_t *", q.stop_margin)
            s.costs = ptr("const uint16_t *", q.costs)
        s.n_features, s.n_used, s.n_classes, s.n_stops = model.n_features, model.n_used, model.n_classes, \
            model.n_stops
        s.n_edges = n_edges
        s.order = ptr("const uint32_t *", model.order)
        s.stop_at = ptr("const uint32_t *", model.stop_at)
        return s
