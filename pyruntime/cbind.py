"""Pieces every C-runtime binding shares: pointers into kept-alive numpy
arrays, the fm_result record, a lazy reader over a Python callable, and the
ns-per-prediction timer. Independent of the model family and of which cffi
module is used (the packaged one or a test build)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import DataError
from .nb import Predictions

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
