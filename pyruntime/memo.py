"""The per-prediction feature memo shared by every lazily reading family
(numpy twin of fm_memo): each feature is read at most once per prediction,
n_read counts distinct features, cost sums their costs in first-read order.
Also the validation and uint16 quantization of feature costs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pyruntime.arrays import require
from pyruntime.errors import FM_E_VALUE, FM_OK
from pyruntime.fixedpoint import UINT32_MAX


def check_costs(costs: np.ndarray | None, n_features: int) -> None:
    if costs is not None:
        require(costs.shape == (n_features,), "costs must have one entry per feature")
        require(bool(np.all(np.isfinite(costs)) and np.all(costs >= 0)), "costs must be finite and >= 0")


def check_q15_costs(costs: np.ndarray | None, n_features: int, cost_unit: float) -> None:
    """The cost table of q15 tables (uint16 units, see quantize_costs): one entry per feature, a unit > 0."""
    if costs is not None:
        require(costs.shape == (n_features,), "costs must have one entry per feature")
    require(bool(np.isfinite(cost_unit) and cost_unit > 0), "cost_unit must be > 0")


def quantize_costs(costs: np.ndarray | None) -> tuple[np.ndarray | None, float]:
    """uint16 cost units and the unit (integer costs up to 65535 stay exact)."""
    if costs is None:
        return None, 1.0
    c = costs.astype(np.float64)
    if np.all(c == np.round(c)) and c.max(initial=0) <= 65535:
        return c.astype(np.uint16), 1.0
    unit = float(c.max()) / 65535.0 if c.max(initial=0) > 0 else 1.0
    return np.round(c / unit).astype(np.uint16), unit


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
