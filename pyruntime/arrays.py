"""Small helpers to validate and coerce the numpy arrays of a model IR."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np

from pyruntime.errors import DataError, ModelFormatError


def as_array(value: Any, dtype: str, name: str, ndim: int = 1) -> np.ndarray:
    """Coerce to a C-contiguous array of dtype, or raise ModelFormatError."""
    try:
        src = np.asarray(value)
        if src.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
            if not np.all(np.isfinite(src)) or np.any(src != np.round(src)):
                raise ModelFormatError(f"{name}: integer array holds non-integer values")
        with np.errstate(invalid="ignore", over="ignore"):
            arr = np.ascontiguousarray(src, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(f"{name}: cannot be read as {dtype}: {exc}") from None
    if arr.ndim != ndim:
        raise ModelFormatError(f"{name}: expected {ndim}-D array, got shape {arr.shape}")
    return arr


def require(cond: bool, message: str) -> None:
    if not cond:
        raise ModelFormatError(message)


def f32_scalar(value: Any, name: str) -> float:
    """A table's scalar as the float32 the C runtime holds; a finite value beyond float32's range is refused (the
    cast would make it infinite, with only a RuntimeWarning to say so)."""
    v = float(value)
    with np.errstate(over="ignore"):
        f = np.float32(v)
    require(bool(np.isfinite(f)) or not np.isfinite(v), f"{name} is {v:g}, beyond float32")
    return float(f)


def table_fields(data: Any, names: Sequence[str], what: str) -> dict[str, Any]:
    """The named fields of a model file's tables map (``what``: e.g. "cascade tables"); a ModelFormatError
    names every missing field."""
    require(isinstance(data, dict), f"{what} must be a map")
    missing = [n for n in names if n not in data]
    require(not missing, f"{what} miss fields: {', '.join(missing)}")
    return {n: data[n] for n in names}


def set_arrays(obj: Any, spec: Sequence[tuple[str, str]], optional: Sequence[tuple[str, str]] = ()) -> None:
    """Coerce the (frozen dataclass) fields ``name`` of ``obj`` to 1-D arrays of ``dtype`` (as_array), then
    the ``optional`` ones that are not None."""
    for name, dtype in (*spec, *((n, dt) for n, dt in optional if getattr(obj, n) is not None)):
        object.__setattr__(obj, name, as_array(getattr(obj, name), dtype, name))


class FieldTables:
    """Tables whose model-file map is their fields ``FIELDS`` (``WHAT`` names them in messages)."""

    FIELDS: ClassVar[tuple[str, ...]]
    WHAT: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(**table_fields(data, cls.FIELDS, cls.WHAT))


def kind_tables(tables: Any, record: type, kind: str, numeric: str | None = None) -> Any:
    """``tables`` (a ``record``, the float32 tables of ``kind``; ModelFormatError otherwise), or with
    ``numeric`` = "q15" their fixed-point form (``record.q15()``)."""
    if not isinstance(tables, record):
        raise ModelFormatError(f"expected {kind} tables")
    return tables.q15() if numeric == "q15" else tables


def float32_zeroed(x: np.ndarray, x32: np.ndarray | None = None) -> np.ndarray:
    """Where a nonzero value of ``x`` becomes 0 as float32 (``x32``: its float32 form, if made already): the
    device reads float32, and the value and its sign would be gone there."""
    return (x != 0) & ((x.astype(np.float32) if x32 is None else x32) == 0)


def float32_zeroed_text(value: float, nonzero: str, fix: str) -> str:
    """The reason a data reader gives for a value float32_zeroed finds (``nonzero``: "values", "samples")."""
    return (f"is {value:g}, which float32 rounds to 0 (nonzero {nonzero} need |x| >= 1.4e-45): the device reads "
            f"float32; {fix}")


def check_inputs(X: Any, n_features: int) -> np.ndarray:
    """Validate an input matrix (or one row) and return it as float32 C-contiguous, 2-D."""
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("inputs must be numeric") from None
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise DataError(f"inputs must be a 2-D matrix, got shape {arr.shape}")
    if arr.shape[1] != n_features:
        raise DataError(f"inputs have {arr.shape[1]} features, the model expects {n_features}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise DataError(f"input row {bad[0]} feature {bad[1]} is NaN or infinite")
    with np.errstate(over="ignore"):
        f32 = arr.astype(np.float32)
    if not np.all(np.isfinite(f32)):
        raise DataError("an input value overflows float32")
    return np.ascontiguousarray(f32)


def float_keys(values: np.ndarray) -> np.ndarray:
    """Order-preserving int32 keys of float32 values (fm_key_bits in C)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.int64)
    neg = (bits & 0x80000000) != 0
    keys = np.where(neg, -(bits & 0x7FFFFFFF), bits)
    return keys.astype(np.int32)
