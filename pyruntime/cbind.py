"""Pieces every C-runtime binding shares: pointers into kept-alive numpy
arrays, the fm_result record, a lazy reader over a Python callable, and the
ns-per-prediction timer. Independent of the model family and of which cffi
module is used (the packaged one or a test build)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from pyruntime.arrays import check_inputs
from pyruntime.errors import FM_OK, DataError, ModelFormatError, raise_for
from pyruntime.result import Predictions

RESULT_DTYPE = np.dtype([("label", "<i4"), ("score", "<f4"), ("score_q", "<i4"), ("n_read", "<u4"),
                         ("cost", "<f4"), ("stage", "<u4"), ("cost_q", "<u4")])


def c_ptr(ffi: Any, keep: list[Any], ctype: str, arr: np.ndarray | None, dtype: str) -> Any:
    """A C pointer to arr (kept alive in keep); NULL for None."""
    if arr is None:
        return ffi.NULL
    a = np.ascontiguousarray(arr, dtype=dtype)
    if a.size == 0:
        a = np.zeros(1, dtype=dtype)
    keep.append(a)
    return ffi.cast(ctype, ffi.from_buffer(a))


class LazyReader:
    """An fm_reader over a Python callable read(index) -> float; exceptions become FM_E_READ and are
    re-raised as DataError by raise_for_read()."""

    def __init__(self, ffi: Any, read: Callable[[int], float]) -> None:
        self.errors: list[BaseException] = []

        def call(ctx: Any, index: int, value: Any) -> int:
            try:
                value[0] = float(read(int(index)))
            except Exception as exc:  # noqa: BLE001 - reported through the C error code
                self.errors.append(exc)
                return 1
            return 0

        self._cb = ffi.callback("int(void *, uint32_t, float *)", call)
        self.reader = ffi.new("fm_reader *", {"read": self._cb, "ctx": ffi.NULL})

    def raise_for_read(self) -> None:
        if self.errors:
            exc = self.errors[-1]
            raise DataError(f"feature callback failed: {exc}") from exc


def results_to_predictions(ffi: Any, out: Any, rows: int, q: bool, cost_unit: float = 1.0) -> Predictions:
    """Copy fm_result[rows] into a Predictions (q15: score_q and cost_q * cost_unit)."""
    assert ffi.sizeof("fm_result") == RESULT_DTYPE.itemsize
    res = np.frombuffer(ffi.buffer(out, rows * RESULT_DTYPE.itemsize), dtype=RESULT_DTYPE).copy()
    if q:
        score, cost = res["score_q"].copy(), res["cost_q"].astype(np.float64) * cost_unit
    else:
        score, cost = res["score"].copy(), res["cost"].copy()
    return Predictions(label=res["label"].copy(), score=score, n_read=res["n_read"].copy(), cost=cost,
                       stage=res["stage"].copy())


def time_batch(call: Callable[[], None], rows: int, min_seconds: float = 0.2) -> float:
    """ns per prediction of call() (one batch of rows), best of doubling repeats over >= min_seconds."""
    if rows == 0:
        raise DataError("no rows to time")
    reps, best, total = 1, float("inf"), 0.0
    while total < min_seconds:
        t0 = time.perf_counter()
        for _ in range(reps):
            call()
        dt = time.perf_counter() - t0
        total += dt
        best = min(best, dt / reps)
        reps *= 2
    return best / rows * 1e9


def x_ptr(ffi: Any, X32: np.ndarray) -> Any:
    """A const float * over a float32 matrix (NULL when empty)."""
    return ffi.cast("const float *", ffi.from_buffer(X32)) if X32.size else ffi.NULL


class CEvaluator:
    """Base of every C-backed evaluator: one family's tables behind the C functions
    ``fm_<family>[_q15]_{check,predict,predict_batch}``.

    A subclass sets ``family`` and ``what`` (for messages) and builds the C struct in
    ``make_struct``; ``make_scratch`` returns the working buffers the family's calls take
    between the input and the result (by default a feature memo, plus a scores buffer when
    ``n_scores`` is positive). Calls are ``fn(struct, X, rows, cols, *scratch, out, n_done)``
    for batches and ``fn(struct, reader, *scratch, out)`` for lazy reads. ffi/lib default to
    the packaged binding pyruntime._frugalml_c (tests pass their own builds). ``check=False`` skips
    the family's run-time table check, for a struct that an enclosing model's check covers (the
    skyline's NB models)."""

    family: str = ""
    what: str = "model"

    def __init__(self, model: Any, ffi: Any = None, lib: Any = None, check: bool = True) -> None:
        if ffi is None or lib is None:
            from pyruntime._frugalml_c import ffi, lib  # noqa: PLC0415 - the binding is optional for the reference
        self.ffi, self.lib, self.model = ffi, lib, model
        self.q = self.is_q15(model)
        self._keep: list[Any] = []
        self.struct = self.make_struct()
        if check and self.fn("check")(self.struct) != FM_OK:
            raise ModelFormatError(f"the C runtime rejected the {self.what}'s tables")
        self.scratch: tuple[Any, ...] = self.make_scratch()
        self.cost_unit = self.q15_cost_unit() if self.q else 1.0
        self._batch = self.fn("predict_batch")
        self._lazy = self.fn("predict")

    # -- what a family provides ------------------------------------------------------
    def is_q15(self, model: Any) -> bool:
        return type(model).__name__.endswith("Q15")

    def make_struct(self) -> Any:
        raise NotImplementedError

    def n_scores(self) -> int:
        return 0

    def q15_cost_unit(self) -> float:
        """What one integer cost unit of the q15 tables is worth."""
        return float(getattr(self.model, "cost_unit", 1.0))

    def make_scratch(self) -> tuple[Any, ...]:
        """One buffer of the family's fm_<family>[_q15]_scratch_size bytes split by its _scratch_init (memo and
        scores); separate buffers for a family (or a test build) without the scratch query."""
        size_fn = getattr(self.lib, self.symbol("scratch_size"), None)
        if size_fn is None:
            memo = self.new_memo(int(self.model.n_features))
            k = self.n_scores()
            return (memo, self.ffi.new("int32_t[]" if self.q else "float[]", k)) if k else (memo,)
        size = int(size_fn(self.struct))
        buf = self.ffi.new("uint32_t[]", max((size + 3) // 4, 1))
        memo = self.ffi.new("fm_memo *")
        self._keep += [buf, memo]
        init = self.fn("scratch_init")
        if self.n_scores():
            scores = self.ffi.new("int32_t **" if self.q else "float **")
            raise_for(init(self.struct, buf, size, memo, scores), f"{self.what}: scratch")
            return memo, scores[0]
        raise_for(init(self.struct, buf, size, memo), f"{self.what}: scratch")
        return (memo,)

    def symbol(self, verb: str) -> str:
        return f"fm_{self.family}{'_q15' if self.q else ''}_{verb}"

    # -- shared machinery --------------------------------------------------------------
    def fn(self, verb: str) -> Any:
        return getattr(self.lib, self.symbol(verb))

    def new_memo(self, n_features: int) -> Any:
        """An fm_memo over buffers kept alive with this evaluator."""
        n = max(n_features, 1)
        values, seen = self.ffi.new("float[]", n), self.ffi.new("uint8_t[]", n)
        keys = self.ffi.new("int16_t[]", n)
        memo = self.ffi.new("fm_memo *")
        self._keep += [values, seen, keys, memo]
        self.lib.fm_memo_init(memo, values, seen, n_features)
        self.lib.fm_memo_set_keys(memo, keys)  # the q15 batch calls walk trees eagerly with it
        return memo

    @property
    def memo(self) -> Any:
        """The fm_memo the calls use (for callers that drive the C functions themselves)."""
        return self.scratch[0]

    @property
    def scores(self) -> Any:
        """The scores buffer of the families that take one."""
        return self.scratch[1]

    @property
    def n_features(self) -> int:
        return int(self.model.n_features)

    def _call(self, X32: np.ndarray, out: Any) -> None:
        done = self.ffi.new("uint32_t *")
        cols = X32.shape[1] if X32.ndim == 2 else 0
        rc = self._batch(self.struct, x_ptr(self.ffi, X32), X32.shape[0], cols, *self.scratch, out, done)
        raise_for(rc, f"{self.what}, row {done[0]}")

    def _results(self, out: Any, rows: int) -> Predictions:
        return results_to_predictions(self.ffi, out, rows, self.q, self.cost_unit)

    def predict(self, X: Any) -> Predictions:
        """Predict every row of X (validated: 2-D, right width)."""
        return self.predict_raw(check_inputs(X, self.n_features))

    def predict_raw(self, X32: np.ndarray) -> Predictions:
        """Batch prediction over a float32 matrix; RuntimeCError on the first failing row."""
        X32 = np.ascontiguousarray(X32, dtype=np.float32)
        out = self.ffi.new("fm_result[]", max(X32.shape[0], 1))
        self._call(X32, out)
        return self._results(out, X32.shape[0])

    def predict_lazy(self, read: Callable[[int], float]) -> Predictions:
        """One prediction whose features come from read(index), each at most once, only those the
        model's path needs."""
        lazy = LazyReader(self.ffi, read)
        out = self.ffi.new("fm_result[]", 1)
        rc = self._lazy(self.struct, lazy.reader, *self.scratch, out)
        lazy.raise_for_read()
        raise_for(rc, f"{self.what}, lazy prediction")
        return self._results(out, 1)

    def ns_per_prediction(self, X: Any, min_seconds: float = 0.2) -> float:
        """Wall-clock ns per prediction of the batch call, best of doubling repeats over >= min_seconds."""
        X32 = check_inputs(X, self.n_features)
        out = self.ffi.new("fm_result[]", max(X32.shape[0], 1))
        return time_batch(lambda: self._call(X32, out), X32.shape[0], min_seconds)
