"""Naive Bayes tables (``nb-static``, ``nb-stop``): IR, q15 quantization and
the pure-numpy reference evaluator.

The reference reproduces the C runtime (runtime_c/src/nb/fm_nb.c) bit for bit:
float32 sums in reading order, the same binning rule, the same stop tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from pyruntime.arrays import as_array, check_inputs, float_keys, require
from pyruntime.describe import feature_name, features_with_costs
from pyruntime.fixedpoint import INT32_MAX, INT32_MIN
from pyruntime.result import Predictions

NB_KINDS = ("nb-static", "nb-stop")


@dataclass
class NBModel:
    """Float32 tables of a naive Bayes with a reading order and stop points."""

    reports_cost: ClassVar[bool] = False  # `predict` prints LABEL FEATURES_READ (no COST column)

    n_features: int
    order: np.ndarray  # uint32 [n_used]
    zero_bin: np.ndarray  # uint8 [n_used]
    edge_start: np.ndarray  # uint32 [n_used + 1]
    edges: np.ndarray  # float32
    table_start: np.ndarray  # uint32 [n_used + 1]
    d: np.ndarray  # float32
    d0: float
    threshold: float
    stop_at: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    stop_hi: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    stop_lo: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    costs: np.ndarray | None = None  # float32 [n_features]

    def __post_init__(self) -> None:
        self.order = as_array(self.order, "u4", "order")
        self.zero_bin = as_array(self.zero_bin, "u1", "zero_bin")
        self.edge_start = as_array(self.edge_start, "u4", "edge_start")
        self.edges = as_array(self.edges, "f4", "edges")
        self.table_start = as_array(self.table_start, "u4", "table_start")
        self.d = as_array(self.d, "f4", "d")
        self.d0 = float(np.float32(self.d0))
        self.threshold = float(np.float32(self.threshold))
        self.stop_at = as_array(self.stop_at, "u4", "stop_at")
        self.stop_hi = as_array(self.stop_hi, "f4", "stop_hi")
        self.stop_lo = as_array(self.stop_lo, "f4", "stop_lo")
        if self.costs is not None:
            self.costs = as_array(self.costs, "f4", "costs")
        self.validate()

    @property
    def n_used(self) -> int:
        return int(self.order.shape[0])

    @property
    def n_stops(self) -> int:
        return int(self.stop_at.shape[0])

    def describe(self, feature_names: Sequence[str]) -> dict[str, Any]:
        """What `frugalml inspect` shows: the budget k, the reading order with costs, the stop points."""
        return {
            "budget": self.n_used,
            "reading_order": [feature_name(feature_names, int(j)) for j in self.order],
            "feature_costs": features_with_costs(self.order, self.costs, feature_names),
            "n_stop_points": self.n_stops,
            "stop_points": [{"after": int(a), "upper": float(u), "lower": float(lo)}
                            for a, u, lo in zip(self.stop_at, self.stop_hi, self.stop_lo)],
            "threshold": self.threshold,
        }

    def validate(self) -> None:
        """Raise ModelFormatError unless every index and length is consistent."""
        k = self.n_used
        require(isinstance(self.n_features, int) and self.n_features >= 1, "n_features must be >= 1")
        require(self.zero_bin.shape == (k,), "zero_bin length differs from order")
        require(self.edge_start.shape == (k + 1,), "edge_start must have n_used + 1 entries")
        require(self.table_start.shape == (k + 1,), "table_start must have n_used + 1 entries")
        require(bool(np.all(self.order < self.n_features)), "feature index out of range in order")
        require(len(np.unique(self.order)) == k, "a feature appears twice in the reading order")
        require(bool(np.all(self.zero_bin <= 1)), "zero_bin must be 0 or 1")
        es, ts = self.edge_start.astype(np.int64), self.table_start.astype(np.int64)
        require(es[0] == 0 and ts[0] == 0, "edge_start and table_start must start at 0")
        require(bool(np.all(np.diff(es) >= 0)), "edge_start is not ascending")
        require(es[-1] == self.edges.shape[0], "edge_start does not match the number of edges")
        require(ts[-1] == self.d.shape[0], "table_start does not match the table length")
        nbins = np.diff(es) + 1 + self.zero_bin
        require(bool(np.all(np.diff(ts) == nbins)), "table sizes do not match the number of bins")
        require(bool(np.all(np.isfinite(self.edges))), "bin edges must be finite")
        for i in range(k):
            e = self.edges[es[i] : es[i + 1]]
            require(bool(np.all(np.diff(e) >= 0)), f"bin edges of position {i} are not sorted")
        require(bool(np.all(np.isfinite(self.d))), "table entries must be finite")
        require(bool(np.isfinite(self.d0) and np.isfinite(self.threshold)), "d0 and threshold must be finite")
        s = self.n_stops
        require(self.stop_hi.shape == (s,) and self.stop_lo.shape == (s,), "stop arrays differ in length")
        if s:
            sa = self.stop_at.astype(np.int64)
            require(bool(np.all(np.diff(sa) > 0)), "stop points are not strictly increasing")
            require(sa[0] >= 1 and sa[-1] < k, "stop point outside 1 .. n_used-1")
            require(not np.any(np.isnan(self.stop_hi)) and not np.any(np.isnan(self.stop_lo)), "NaN stop bound")
        if self.costs is not None:
            require(self.costs.shape == (self.n_features,), "costs must have one entry per feature")
            require(bool(np.all(np.isfinite(self.costs)) and np.all(self.costs >= 0)), "costs must be >= 0")

    # -- serialization -------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            name: getattr(self, name)
            for name in ("n_features", "order", "zero_bin", "edge_start", "edges", "table_start", "d",
                         "d0", "threshold", "stop_at", "stop_hi", "stop_lo")
        }
        out["costs"] = self.costs
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NBModel:
        names = ("n_features", "order", "zero_bin", "edge_start", "edges", "table_start", "d", "d0",
                 "threshold", "stop_at", "stop_hi", "stop_lo", "costs")
        missing = [n for n in names if n not in data]
        require(not missing, f"NB tables miss fields: {', '.join(missing)}")
        require(isinstance(data["n_features"], int), "n_features must be an integer")
        return cls(**{n: data[n] for n in names})

    # -- evaluation ------------------------------------------------------------
    def bins(self, X32: np.ndarray) -> np.ndarray:
        """Bin index of each used feature for each row: int64 [rows, n_used]."""
        k = self.n_used
        out = np.empty((X32.shape[0], k), dtype=np.int64)
        for i in range(k):
            v = X32[:, self.order[i]]
            e = self.edges[self.edge_start[i] : self.edge_start[i + 1]]
            b = (e[None, :] < v[:, None]).sum(axis=1) + int(self.zero_bin[i])
            if self.zero_bin[i]:
                b[v == 0] = 0
            out[:, i] = b
        return out

    def entries(self, X32: np.ndarray) -> np.ndarray:
        """Table entry added at each position for each row: [rows, n_used]."""
        return self.d[self.table_start[:-1].astype(np.int64)[None, :] + self.bins(X32)]

    def predict_reference(self, X: Any) -> Predictions:
        X32 = check_inputs(X, self.n_features)
        return _run_stops(
            self.entries(X32), np.float32(self.d0), self.threshold, self.stop_at, self.stop_hi,
            self.stop_lo, _cum_costs(self.costs, self.order, np.float32), saturate=False,
        )

    def q15(self) -> NBQ15:
        return quantize_q15(self)

    def strided(self, d: np.ndarray | None = None) -> tuple[int, np.ndarray, np.ndarray]:
        """The C runtime's fixed-stride layout: (n_edges, edges [k*n_edges], entries [k*(n_edges+2)]).

        Every position gets n_edges edges (+inf padded) and n_edges + 2 entries: entry 0 for an
        exact zero (for a feature without a zero bin, the entry its zero falls into), entry 1 + c
        for a value with c edges below it. Exactly the same answers as the variable layout.
        """
        table = self.d if d is None else d
        k = self.n_used
        n_edges = int(np.max(np.diff(self.edge_start), initial=0))
        edges = np.full((k, n_edges), np.inf, dtype=np.float32)
        out = np.empty((k, n_edges + 2), dtype=table.dtype)
        for i in range(k):
            e = self.edges[self.edge_start[i]:self.edge_start[i + 1]]
            t = table[self.table_start[i]:self.table_start[i + 1]]
            zb = int(self.zero_bin[i])
            edges[i, :e.size] = e
            intervals = t[zb:]
            out[i, 1:1 + intervals.size] = intervals
            out[i, 1 + intervals.size:] = intervals[-1]
            out[i, 0] = t[0] if zb else intervals[int(np.sum(e < np.float32(0.0)))]
        return n_edges, edges.ravel(), out.ravel()

    def records(self, d: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The C runtime's record layout of a model with at most two edges per position (mean-std bins):
        (feature [k], edges [k, 2], entries [k, 4]), or None for more edges.

        The same slots as strided(), but a position with fewer than two edges repeats its last edge
        (0 when it has none) instead of +inf padding, so every edge is finite and a NaN or infinite
        input always falls in the first or the last interval (the q15 walk tests finiteness only
        there). Exactly the same answers as strided() for finite inputs.
        """
        n_edges, _, t = self.strided(d)
        if n_edges > 2:
            return None
        k = self.n_used
        edges = np.zeros((k, 2), dtype=np.float32)
        for i in range(k):
            e = self.edges[self.edge_start[i]:self.edge_start[i + 1]]
            if e.size:
                edges[i, :e.size] = e
                edges[i, e.size:] = e[-1]
        entries = t.reshape(k, n_edges + 2)
        # slots 1 + c for c edges below the value; missing slots repeat the last interval's entry
        out = np.concatenate([entries, np.repeat(entries[:, -1:], 2 - n_edges, axis=1)], axis=1)
        return self.order.copy(), edges, out

    def cum_cost(self) -> np.ndarray | None:
        """float32 cost of the first p positions (p = 0 .. n_used), summed in reading order, or None."""
        return _cum_costs(self.costs, self.order, np.float32)


@dataclass
class NBQ15:
    """Fixed-point tables: int16 entries scaled by 2**shift, int32 edge keys."""

    base: NBModel
    shift: int
    d: np.ndarray  # int16
    d0: int
    threshold: int
    stop_hi: np.ndarray  # int32
    stop_lo: np.ndarray  # int32
    edge_keys: np.ndarray  # int32
    costs: np.ndarray | None  # uint16 integer units
    cost_unit: float

    def cum_cost(self) -> np.ndarray | None:
        """uint32 cost units of the first p positions (p = 0 .. n_used), or None (one unit per feature)."""
        cum = _cum_costs(self.costs, self.base.order, np.int64)
        return None if cum is None else cum.astype(np.uint32)

    def predict_reference(self, X: Any) -> Predictions:
        m = self.base
        X32 = check_inputs(X, m.n_features)
        entries = self.d.astype(np.int64)[m.table_start[:-1].astype(np.int64)[None, :] + m.bins(X32)]
        p = _run_stops(entries, np.int64(self.d0), self.threshold, m.stop_at, self.stop_hi, self.stop_lo,
                       _cum_costs(self.costs, m.order, np.int64), saturate=True)
        p.cost = p.cost.astype(np.float64) * self.cost_unit
        return p


def nb_keys(values: np.ndarray) -> np.ndarray:
    """fm_nb_key() of float32 values: bits ^ ((bits asr 31) lsr 1) as int32 (order-preserving for finite
    non-zero values; +0 -> 0, -0 -> -1; the q15 record layout's edge keys)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    return (bits ^ ((bits >> np.uint32(31)) * np.uint32(0x7FFFFFFF))).view(np.int32)


def q15_cannot_saturate(d0: int, n_used: int) -> bool:
    """|d0| + 32768 * n_used <= INT32_MAX: plain int32 adds equal the saturating ones (q15 record layout)."""
    return abs(int(d0)) + 32768 * int(n_used) <= INT32_MAX


def _cum_costs(costs: np.ndarray | None, order: np.ndarray, dtype: Any) -> np.ndarray | None:
    """Cost after reading the first p features, p = 0 .. n_used, summed in reading order."""
    if costs is None:
        return None
    cum = np.zeros(order.shape[0] + 1, dtype=dtype)
    acc = dtype(0)
    for p, j in enumerate(order):
        acc = dtype(acc + costs[j])
        cum[p + 1] = acc
    return cum


def _run_stops(entries: np.ndarray, d0: Any, threshold: Any, stop_at: np.ndarray, stop_hi: np.ndarray,
               stop_lo: np.ndarray, cum_cost: np.ndarray | None, saturate: bool) -> Predictions:
    rows, k = entries.shape
    score = np.full(rows, d0, dtype=entries.dtype if not saturate else np.int64)
    label = np.full(rows, -1, dtype=np.int32)
    n_read = np.full(rows, k, dtype=np.uint32)
    stage = np.zeros(rows, dtype=np.uint32)
    final = np.zeros(rows, dtype=score.dtype)
    running = np.ones(rows, dtype=bool)
    stops = [int(s) for s in stop_at]
    pos = 0
    for s_index, upto in enumerate([*stops, k]):
        for i in range(pos, upto):
            if saturate:
                score = np.clip(score + entries[:, i], INT32_MIN, INT32_MAX)
            else:
                score = (score + entries[:, i]).astype(np.float32)
        pos = upto
        if s_index == len(stops):
            break
        hi = running & (score > stop_hi[s_index])
        lo = running & ~hi & (score < stop_lo[s_index])
        for mask, lab in ((hi, 1), (lo, 0)):
            label[mask] = lab
            n_read[mask] = upto
            stage[mask] = s_index + 1
            final[mask] = score[mask]
        running &= ~(hi | lo)
    label[running] = (score[running] > threshold).astype(np.int32)
    final[running] = score[running]
    if cum_cost is None:
        cost = n_read.astype(np.float32)
    else:
        cost = cum_cost[n_read.astype(np.int64)]
    return Predictions(label=label, score=final, n_read=n_read, cost=cost, stage=stage)


def _q(value: float, scale: float) -> int:
    """Round value*scale to int32 with saturation (+-inf map to the int32 extremes)."""
    if np.isposinf(value):
        return INT32_MAX
    if np.isneginf(value):
        return INT32_MIN
    return int(np.clip(np.round(np.float64(value) * scale), INT32_MIN, INT32_MAX))


def quantize_q15(m: NBModel) -> NBQ15:
    """Quantize the tables to int16 with the largest power-of-two scale that fits."""
    peak = float(np.max(np.abs(m.d))) if m.d.size else 0.0
    shift = 0
    if peak > 0:
        shift = int(np.floor(np.log2(32767.0 / peak)))
        while shift > -30 and np.round(peak * 2.0**shift) > 32767:
            shift -= 1
        shift = min(shift, 24)
    scale = 2.0**shift
    d = np.round(m.d.astype(np.float64) * scale).astype(np.int16)
    costs = None
    unit = 1.0
    if m.costs is not None:
        c = m.costs.astype(np.float64)
        if np.all(c == np.round(c)) and c.max(initial=0) <= 65535:
            costs = c.astype(np.uint16)
        else:
            unit = float(c.max()) / 65535.0 if c.max() > 0 else 1.0
            costs = np.round(c / unit).astype(np.uint16)
    return NBQ15(
        base=m, shift=shift, d=d, d0=_q(m.d0, scale), threshold=_q(m.threshold, scale),
        stop_hi=np.array([_q(v, scale) for v in m.stop_hi], dtype=np.int32),
        stop_lo=np.array([_q(v, scale) for v in m.stop_lo], dtype=np.int32),
        edge_keys=float_keys(m.edges), costs=costs, cost_unit=unit,
    )
