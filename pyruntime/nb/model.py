"""Naive Bayes tables (``nb-static``, ``nb-stop``): IR, q15 quantization and
the pure-numpy reference evaluator.

The reference reproduces the C runtime (runtime_c/src/nb/fm_nb.c) bit for bit:
float32 sums in reading order, the same binning rule, the same stop tests.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from pyruntime.arrays import as_array, check_inputs, f32_scalar, float_keys, require, table_fields
from pyruntime.describe import feature_name, features_with_costs
from pyruntime.fixedpoint import INT32_MAX, INT32_MIN
from pyruntime.result import Predictions

NB_KINDS = ("nb-static", "nb-stop")


class NBLayout:
    """What both NB IRs (binary NBModel, K-class NBMultiModel) have alike: a reading order of n_used features
    (order, bins, table starts) and stop points after stop_at[s] features."""

    order: np.ndarray
    stop_at: np.ndarray
    costs: np.ndarray | None

    @property
    def n_used(self) -> int:
        return int(self.order.shape[0])

    @property
    def n_stops(self) -> int:
        return int(self.stop_at.shape[0])

    def describe_order(self, feature_names: Sequence[str]) -> dict[str, Any]:
        """`inspect` facts of the reading order: the budget k, the features with costs, the stop points."""
        return {
            "budget": self.n_used,
            "reading_order": [feature_name(feature_names, int(j)) for j in self.order],
            "feature_costs": features_with_costs(self.order, self.costs, feature_names),
            "n_stop_points": self.n_stops,
        }


@dataclass
class NBModel(NBLayout):
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
        coerce_layout(self)
        self.d = as_array(self.d, "f4", "d")
        self.d0 = f32_scalar(self.d0, "d0")
        self.threshold = f32_scalar(self.threshold, "threshold")
        self.stop_hi = as_array(self.stop_hi, "f4", "stop_hi")
        self.stop_lo = as_array(self.stop_lo, "f4", "stop_lo")
        self.validate()

    def describe(self, feature_names: Sequence[str]) -> dict[str, Any]:
        """What `frugalml inspect` shows: the budget k, the reading order with costs, the stop points."""
        return {
            **self.describe_order(feature_names),
            "stop_points": [{"after": int(a), "upper": float(u), "lower": float(lo)}
                            for a, u, lo in zip(self.stop_at, self.stop_hi, self.stop_lo)],
            "threshold": self.threshold,
        }

    def validate(self) -> None:
        """Raise ModelFormatError unless every index and length is consistent."""
        validate_layout(self, self.d.shape[0])
        require(bool(np.all(np.isfinite(self.d))), "table entries must be finite")
        require(bool(np.isfinite(self.d0) and np.isfinite(self.threshold)), "d0 and threshold must be finite")
        s = self.n_stops
        require(self.stop_hi.shape == (s,) and self.stop_lo.shape == (s,), "stop arrays differ in length")
        require(not np.any(np.isnan(self.stop_hi)) and not np.any(np.isnan(self.stop_lo)), "NaN stop bound")


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
        fields = table_fields(data, names, "NB tables")
        require(isinstance(data["n_features"], int), "n_features must be an integer")
        return cls(**fields)

    # -- evaluation ------------------------------------------------------------
    def bins(self, X32: np.ndarray) -> np.ndarray:
        """Bin index of each used feature for each row: int64 [rows, n_used]."""
        return bin_index(self, X32)

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
        n_edges, edges, out = strided_layout(self, self.d if d is None else d)
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


def strided_layout(m: Any, table: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """The fixed-stride layout of an NB IR's table rows (entries, or rows of K class entries): (n_edges, edges
    [k, n_edges] +inf padded, entries [k, n_edges + 2, ...]) with slot 0 for an exact zero (for a position
    without a zero bin, the entry its zero falls into) and slot 1 + c for a value with c edges below it."""
    k = int(m.order.shape[0])
    n_edges = int(np.max(np.diff(m.edge_start), initial=0))
    edges = np.full((k, n_edges), np.inf, dtype=np.float32)
    out = np.empty((k, n_edges + 2, *table.shape[1:]), dtype=table.dtype)
    for i in range(k):
        e = m.edges[m.edge_start[i]:m.edge_start[i + 1]]
        t = table[m.table_start[i]:m.table_start[i + 1]]
        zb = int(m.zero_bin[i])
        edges[i, :e.size] = e
        intervals = t[zb:]
        out[i, 1:1 + intervals.shape[0]] = intervals
        out[i, 1 + intervals.shape[0]:] = intervals[-1]
        out[i, 0] = t[0] if zb else intervals[int(np.sum(e < np.float32(0.0)))]
    return n_edges, edges, out


def coerce_layout(m: Any) -> None:
    """The arrays both NB IRs share, as their dtypes: order, bins, table starts, stop positions, costs."""
    for name, dtype in (("order", "u4"), ("zero_bin", "u1"), ("edge_start", "u4"), ("edges", "f4"),
                        ("table_start", "u4"), ("stop_at", "u4")):
        setattr(m, name, as_array(getattr(m, name), dtype, name))
    if m.costs is not None:
        m.costs = as_array(m.costs, "f4", "costs")


def validate_layout(m: Any, n_entries: int) -> None:
    """What both NB IRs (binary NBModel, K-class NBMultiModel) check alike: the reading order, bins, table
    starts against n_entries table rows, stop positions and costs. Raises ModelFormatError."""
    k = int(m.order.shape[0])
    require(isinstance(m.n_features, int) and m.n_features >= 1, "n_features must be >= 1")
    require(m.zero_bin.shape == (k,), "zero_bin length differs from order")
    require(m.edge_start.shape == (k + 1,), "edge_start must have n_used + 1 entries")
    require(m.table_start.shape == (k + 1,), "table_start must have n_used + 1 entries")
    require(bool(np.all(m.order < m.n_features)), "feature index out of range in order")
    require(len(np.unique(m.order)) == k, "a feature appears twice in the reading order")
    require(bool(np.all(m.zero_bin <= 1)), "zero_bin must be 0 or 1")
    es, ts = m.edge_start.astype(np.int64), m.table_start.astype(np.int64)
    require(es[0] == 0 and ts[0] == 0, "edge_start and table_start must start at 0")
    require(bool(np.all(np.diff(es) >= 0)), "edge_start is not ascending")
    require(es[-1] == m.edges.shape[0], "edge_start does not match the number of edges")
    require(ts[-1] == n_entries, "table_start does not match the table length")
    nbins = np.diff(es) + 1 + m.zero_bin
    require(bool(np.all(np.diff(ts) == nbins)), "table sizes do not match the number of bins")
    require(bool(np.all(np.isfinite(m.edges))), "bin edges must be finite")
    for i in range(k):
        e = m.edges[es[i] : es[i + 1]]
        require(bool(np.all(np.diff(e) >= 0)), f"bin edges of position {i} are not sorted")
        # -0.0 == +0.0 as floats, but the q15 record layout compares order-preserving keys (-0 -> -1, +0 -> 0)
        require(bool(np.all(np.diff(nb_keys(e).astype(np.int64)) >= 0)),
                f"bin edges of position {i} are not sorted (-0.0 after +0.0)")
    if m.stop_at.shape[0]:
        sa = m.stop_at.astype(np.int64)
        require(bool(np.all(np.diff(sa) > 0)), "stop points are not strictly increasing")
        require(sa[0] >= 1 and sa[-1] < k, "stop point outside 1 .. n_used-1")
    if m.costs is not None:
        require(m.costs.shape == (m.n_features,), "costs must have one entry per feature")
        require(bool(np.all(np.isfinite(m.costs)) and np.all(m.costs >= 0)), "costs must be >= 0")
        with np.errstate(over="ignore"):
            total = _cum_costs(m.costs, m.order, np.float32)
        require(total is not None and bool(np.isfinite(total[-1])),
                "the costs of the reading order sum past the float32 range")


def bin_index(m: Any, X32: np.ndarray) -> np.ndarray:
    """Bin index of each used feature of an NB IR for each row: int64 [rows, n_used] (0 = the zero bin of a
    position with one, else zero_bin + the number of edges below the value)."""
    k = int(m.order.shape[0])
    out = np.empty((X32.shape[0], k), dtype=np.int64)
    for i in range(k):
        v = X32[:, m.order[i]]
        e = m.edges[m.edge_start[i] : m.edge_start[i + 1]]
        b = (e[None, :] < v[:, None]).sum(axis=1) + int(m.zero_bin[i])
        if m.zero_bin[i]:
            b[v == 0] = 0
        out[:, i] = b
    return out


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


def walk_segments(entries: np.ndarray, score: np.ndarray, stop_at: np.ndarray,
                  saturate: bool) -> Iterator[tuple[int, int, np.ndarray]]:
    """The runtime's sums segment by segment: yields (segment t, features read, scores) after each stop point
    (t < len(stop_at)) and at the end (t == len(stop_at)). Adds entries [rows, n_used, ...] in reading order:
    float32 sums, or (saturate) int32-saturating sums in int64."""
    pos = 0
    for t, upto in enumerate([*(int(s) for s in stop_at), entries.shape[1]]):
        with np.errstate(over="ignore"):  # float32 sums of huge finite entries reach +-inf, as the C runtime's do
            for i in range(pos, upto):
                if saturate:
                    score = np.clip(score + entries[:, i], INT32_MIN, INT32_MAX)
                else:
                    score = (score + entries[:, i]).astype(np.float32)
        pos = upto
        yield t, upto, score


def _run_stops(entries: np.ndarray, d0: Any, threshold: Any, stop_at: np.ndarray, stop_hi: np.ndarray,
               stop_lo: np.ndarray, cum_cost: np.ndarray | None, saturate: bool) -> Predictions:
    rows, k = entries.shape
    start = np.full(rows, d0, dtype=entries.dtype if not saturate else np.int64)
    label = np.full(rows, -1, dtype=np.int32)
    n_read = np.full(rows, k, dtype=np.uint32)
    stage = np.zeros(rows, dtype=np.uint32)
    final = np.zeros(rows, dtype=start.dtype)
    running = np.ones(rows, dtype=bool)
    score = start
    for s_index, upto, score in walk_segments(entries, start, stop_at, saturate):
        if s_index == len(stop_at):
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
    return Predictions(label=label, score=final, n_read=n_read, cost=read_costs(n_read, cum_cost), stage=stage)


def read_costs(n_read: np.ndarray, cum_cost: np.ndarray | None) -> np.ndarray:
    """Cost of each prediction from its features read: cum_cost[n_read], or n_read (float32) without costs."""
    return n_read.astype(np.float32) if cum_cost is None else cum_cost[n_read.astype(np.int64)]


def _q(value: float, scale: float) -> int:
    """Round value*scale to int32 with saturation (+-inf map to the int32 extremes)."""
    if np.isposinf(value):
        return INT32_MAX
    if np.isneginf(value):
        return INT32_MIN
    return int(np.clip(np.round(np.float64(value) * scale), INT32_MIN, INT32_MAX))


def q15_shift(d: np.ndarray) -> int:
    """The largest power-of-two scale (shift <= 24) that keeps round(d * 2**shift) in int16."""
    peak = float(np.max(np.abs(d))) if d.size else 0.0
    shift = 0
    if peak > 0:
        shift = int(np.floor(np.log2(32767.0 / peak)))
        while shift > -30 and np.round(peak * 2.0**shift) > 32767:
            shift -= 1
        shift = min(shift, 24)
    return shift


def q15_costs(costs: np.ndarray | None) -> tuple[np.ndarray | None, float]:
    """(uint16 integer cost units, what one unit is worth): the costs themselves when they are integers up
    to 65535, else scaled so that the largest is 65535."""
    if costs is None:
        return None, 1.0
    c = costs.astype(np.float64)
    if np.all(c == np.round(c)) and c.max(initial=0) <= 65535:
        return c.astype(np.uint16), 1.0
    unit = float(c.max()) / 65535.0 if c.max() > 0 else 1.0
    return np.round(c / unit).astype(np.uint16), unit


def q15_entries(d: np.ndarray, costs: np.ndarray | None) -> tuple[int, float, np.ndarray, np.ndarray | None,
                                                                   float]:
    """(shift, scale = 2**shift, int16 entries, uint16 costs, cost unit) of an NB table's q15 form."""
    shift = q15_shift(d)
    scale = 2.0**shift
    return (shift, scale, np.round(d.astype(np.float64) * scale).astype(np.int16), *q15_costs(costs))


def quantize_q15(m: NBModel) -> NBQ15:
    """Quantize the tables to int16 with the largest power-of-two scale that fits."""
    shift, scale, d, costs, unit = q15_entries(m.d, m.costs)
    return NBQ15(
        base=m, shift=shift, d=d, d0=_q(m.d0, scale), threshold=_q(m.threshold, scale),
        stop_hi=np.array([_q(v, scale) for v in m.stop_hi], dtype=np.int32),
        stop_lo=np.array([_q(v, scale) for v in m.stop_lo], dtype=np.int32),
        edge_keys=float_keys(m.edges), costs=costs, cost_unit=unit,
    )
