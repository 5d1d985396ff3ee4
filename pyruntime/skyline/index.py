"""Budget index (``skyline``): IR and the pure-numpy reference lookup.

A skyline index holds ``n_models`` models, each on its own feature set, and
answers, for an item of size ``n`` and a budget ``B``: the most accurate model
whose cost ``c0 + c1*n + c2*n*n`` is at most ``B`` (or nothing fits).

Layout (mirrors ``fm_skyline`` in runtime_c/include/skyline/fm_skyline.h)::

    model_coef  float64 [n_models, 3]  cost polynomial of each model
    model_acc   float64 [n_models]     validation accuracy of each model
    feat_ptr    uint32  [n_models + 1] model m uses feat_idx[feat_ptr[m]:feat_ptr[m+1]]
    feat_idx    uint32  [feat_ptr[-1]] feature indices, ascending per model
    breaks      float64 [n_ranges]     ascending; range r covers [breaks[r], breaks[r+1])
    sky_ptr     uint32  [n_ranges + 1] range r's skyline is sky_model[sky_ptr[r]:sky_ptr[r+1]]
    sky_model   uint32  [sky_ptr[-1]]  model indices, cost-sorted inside their range

Lookup: binary search for the range (the last r with breaks[r] <= n; sizes
below breaks[0] use range 0), then binary search for the last skyline entry
whose cost at n is <= B. Only an entry whose cost was tested against the
budget is ever returned, so the budget is never exceeded even for an
inconsistent or out-of-range query; inside the indexed size range the
answer is the most accurate model that fits.

The cost of a model at size n is evaluated exactly like the C runtime:
``c0 + c1 * n + c2 * n * n`` in float64, left to right, no fused multiply-add.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyruntime.arrays import as_array, require, table_fields

NO_MODEL = -1


def poly_cost(coef: np.ndarray, size: float | np.ndarray) -> np.ndarray:
    """Cost of polynomials ``coef[..., 0] + coef[..., 1]*n + coef[..., 2]*n*n`` (C order of operations)."""
    c = np.asarray(coef, dtype=np.float64)
    n = np.asarray(size, dtype=np.float64)
    return c[..., 0] + c[..., 1] * n + c[..., 2] * n * n


@dataclass
class Lookup:
    """Outcome of one lookup: the chosen model (NO_MODEL when nothing fits) and its cost."""

    model: int
    cost: float

    @property
    def fits(self) -> bool:
        return self.model != NO_MODEL


@dataclass
class SkylineIndex:
    """Tables of a budget index over models on different feature sets."""

    n_features: int
    model_coef: np.ndarray
    model_acc: np.ndarray
    feat_ptr: np.ndarray
    feat_idx: np.ndarray
    breaks: np.ndarray
    sky_ptr: np.ndarray
    sky_model: np.ndarray
    method: str = "polydom"

    def __post_init__(self) -> None:
        self.model_coef = as_array(self.model_coef, "f8", "model_coef", ndim=2)
        self.model_acc = as_array(self.model_acc, "f8", "model_acc")
        self.feat_ptr = as_array(self.feat_ptr, "u4", "feat_ptr")
        self.feat_idx = as_array(self.feat_idx, "u4", "feat_idx")
        self.breaks = as_array(self.breaks, "f8", "breaks")
        self.sky_ptr = as_array(self.sky_ptr, "u4", "sky_ptr")
        self.sky_model = as_array(self.sky_model, "u4", "sky_model")
        self.check()

    # -- structure ---------------------------------------------------------------
    @property
    def n_models(self) -> int:
        return int(self.model_coef.shape[0])

    @property
    def n_ranges(self) -> int:
        return int(self.breaks.shape[0])

    def features_of(self, model: int) -> np.ndarray:
        """Feature indices (ascending) read by a model."""
        return self.feat_idx[self.feat_ptr[model] : self.feat_ptr[model + 1]]

    def skyline(self, r: int) -> np.ndarray:
        """Model indices of range r's skyline, cost-sorted."""
        return self.sky_model[self.sky_ptr[r] : self.sky_ptr[r + 1]]

    def range_of(self, size: float) -> int:
        """Index of the size range holding ``size`` (range 0 for sizes below the first break)."""
        return max(int(np.searchsorted(self.breaks, size, side="right")) - 1, 0)

    def nbytes(self) -> int:
        """Bytes of the tables the C runtime needs (coefficients, ranges, skylines, feature lists)."""
        return int(
            self.model_coef.nbytes + self.feat_ptr.nbytes + self.feat_idx.nbytes + self.breaks.nbytes
            + self.sky_ptr.nbytes + self.sky_model.nbytes
        )

    def check(self) -> None:
        """Raise ModelFormatError unless every table is consistent (same checks as fm_skyline_check)."""
        m = self.n_models
        require(isinstance(self.n_features, int | np.integer) and self.n_features >= 0,
                "n_features must be a non-negative integer")
        require(self.model_coef.shape == (m, 3), f"model_coef must have shape (n_models, 3), got "
                f"{self.model_coef.shape}")
        require(self.model_acc.shape == (m,), "model_acc must have one entry per model")
        require(bool(np.all(np.isfinite(self.model_coef))) and bool(np.all(self.model_coef >= 0)),
                "model_coef must be finite and >= 0")
        require(self.feat_ptr.shape == (m + 1,), "feat_ptr must have n_models + 1 entries")
        require(m == 0 or int(self.feat_ptr[0]) == 0, "feat_ptr must start at 0")
        require(bool(np.all(np.diff(self.feat_ptr.astype(np.int64)) >= 0)), "feat_ptr must be non-decreasing")
        require(int(self.feat_ptr[-1]) == self.feat_idx.shape[0], "feat_ptr must end at len(feat_idx)")
        require(bool(np.all(self.feat_idx < self.n_features)), "feat_idx out of range")
        for k in range(m):
            f = self.features_of(k).astype(np.int64)
            require(bool(np.all(np.diff(f) > 0)), f"model {k}: feature indices must be strictly ascending")
        r = self.n_ranges
        require(r >= 1, "an index needs at least one size range")
        require(bool(np.all(np.isfinite(self.breaks))), "breaks must be finite")
        require(bool(np.all(np.diff(self.breaks) > 0)), "breaks must be strictly ascending")
        require(self.sky_ptr.shape == (r + 1,), "sky_ptr must have n_ranges + 1 entries")
        require(int(self.sky_ptr[0]) == 0, "sky_ptr must start at 0")
        require(bool(np.all(np.diff(self.sky_ptr.astype(np.int64)) >= 0)), "sky_ptr must be non-decreasing")
        require(int(self.sky_ptr[-1]) == self.sky_model.shape[0], "sky_ptr must end at len(sky_model)")
        require(bool(np.all(self.sky_model < m)), "sky_model index out of range")

    # -- lookup ------------------------------------------------------------------
    def lookup(self, budget: float, size: float = 0.0) -> Lookup:
        """The most accurate model whose cost at ``size`` is <= ``budget``; NO_MODEL if none fits."""
        b = float(budget)
        n = float(size)
        if np.isnan(b) or not np.isfinite(n):
            raise ValueError("budget must not be NaN and size must be finite")
        sky = self.skyline(self.range_of(n))
        lo, hi = 0, int(sky.shape[0])
        coef = self.model_coef
        while lo < hi:
            mid = (lo + hi) // 2
            if float(poly_cost(coef[sky[mid]], n)) <= b:
                lo = mid + 1
            else:
                hi = mid
        if lo == 0:
            return Lookup(NO_MODEL, 0.0)
        k = int(sky[lo - 1])
        return Lookup(k, float(poly_cost(coef[k], n)))

    def lookup_many(self, budget: Any, size: Any = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised lookup: (model int64 [rows] with NO_MODEL where nothing fits, cost float64 [rows])."""
        b, n = np.broadcast_arrays(np.asarray(budget, np.float64), np.asarray(size, np.float64))
        b = np.atleast_1d(b)
        n = np.atleast_1d(n)
        if np.any(np.isnan(b)) or not np.all(np.isfinite(n)):
            raise ValueError("budget must not be NaN and size must be finite")
        model = np.full(b.shape, NO_MODEL, dtype=np.int64)
        cost = np.zeros(b.shape, dtype=np.float64)
        r = np.maximum(np.searchsorted(self.breaks, n, side="right") - 1, 0)
        start = self.sky_ptr[r].astype(np.int64)
        lo = np.zeros(b.shape, dtype=np.int64)
        hi = self.sky_ptr[r + 1].astype(np.int64) - start
        active = lo < hi
        while np.any(active):
            mid = (lo + hi) // 2
            idx = np.where(active, start + mid, 0)
            ok = poly_cost(self.model_coef[self.sky_model[idx] if self.sky_model.size else idx], n) <= b
            lo = np.where(active & ok, mid + 1, lo)
            hi = np.where(active & ~ok, mid, hi)
            active = lo < hi
        found = lo > 0
        k = self.sky_model[start[found] + lo[found] - 1].astype(np.int64)
        model[found] = k
        cost[found] = poly_cost(self.model_coef[k], n[found])
        return model, cost

    # -- serialization -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            name: getattr(self, name)
            for name in ("n_features", "model_coef", "model_acc", "feat_ptr", "feat_idx", "breaks", "sky_ptr",
                         "sky_model", "method")
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SkylineIndex:
        names = ("n_features", "model_coef", "model_acc", "feat_ptr", "feat_idx", "breaks", "sky_ptr",
                 "sky_model", "method")
        fields = table_fields(data, names, "skyline tables")
        require(isinstance(data["n_features"], int), "n_features must be an integer")
        require(isinstance(data["method"], str), "method must be a string")
        return cls(**fields)
