"""K-class naive Bayes tables (``nb-static`` / ``nb-stop`` with K > 2 classes): IR, q15 quantization and
the pure-numpy reference evaluator of runtime_c's fm_nbk (fm_nb.h).

The same reading order and bins as the binary NBModel; each bin holds K class log-likelihoods and d0 the K
log priors. A prediction sums them in reading order (float32; q15: saturating int32 sums of int16
entries); at a stop point it answers the leader (the first class of largest score) when its margin over
the runner-up is larger than the stop point's margin, else at the end the leader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from pyruntime.arrays import as_array, check_inputs, float_keys, require, table_fields
from pyruntime.nb.model import (
    NBLayout,
    _cum_costs,
    _q,
    bin_index,
    coerce_layout,
    q15_costs,
    read_costs,
    strided_layout,
    validate_layout,
    walk_segments,
)
from pyruntime.result import Predictions

MAX_CLASSES = 64  # FM_VEC_MAX_OUTPUTS: the class scores of one call live on the stack


@dataclass
class NBMultiModel(NBLayout):
    """Float32 tables of a K-class naive Bayes with a reading order and margin stop points."""

    reports_cost: ClassVar[bool] = False  # `predict` prints LABEL FEATURES_READ, as for binary NB

    n_features: int
    n_classes: int
    order: np.ndarray  # uint32 [n_used]
    zero_bin: np.ndarray  # uint8 [n_used]
    edge_start: np.ndarray  # uint32 [n_used + 1]
    edges: np.ndarray  # float32
    table_start: np.ndarray  # uint32 [n_used + 1]: rows of d per position
    d: np.ndarray  # float32 [rows, n_classes]: l(bin | class)
    d0: np.ndarray  # float32 [n_classes]: l(class)
    stop_at: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    stop_margin: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    costs: np.ndarray | None = None  # float32 [n_features]

    def __post_init__(self) -> None:
        coerce_layout(self)
        self.d = as_array(self.d, "f4", "d", ndim=2)
        self.d0 = as_array(self.d0, "f4", "d0")
        self.stop_margin = as_array(self.stop_margin, "f4", "stop_margin")
        self.validate()

    def validate(self) -> None:
        k = self.n_classes
        require(isinstance(k, int) and 2 <= k <= MAX_CLASSES, f"n_classes must be 2 .. {MAX_CLASSES}")
        require(self.d.ndim == 2 and self.d.shape[1] == k, "d must have one column per class")
        require(self.d0.shape == (k,), "d0 must have one entry per class")
        validate_layout(self, self.d.shape[0])
        require(bool(np.all(np.isfinite(self.d)) and np.all(np.isfinite(self.d0))), "table entries must be finite")
        require(self.stop_margin.shape == (self.n_stops,), "stop_margin differs in length from stop_at")
        require(not np.any(np.isnan(self.stop_margin)), "NaN stop margin")

    def describe(self, feature_names: Sequence[str]) -> dict[str, Any]:
        """What `frugalml inspect` shows: the budget k, the reading order with costs, the stop points."""
        return {
            **self.describe_order(feature_names),
            "stop_points": [{"after": int(a), "margin": float(m)} for a, m in zip(self.stop_at, self.stop_margin)],
        }

    # -- serialization -------------------------------------------------------
    FIELDS: ClassVar[tuple[str, ...]] = ("n_features", "n_classes", "order", "zero_bin", "edge_start", "edges",
                                         "table_start", "d", "d0", "stop_at", "stop_margin", "costs")

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NBMultiModel:
        fields = table_fields(data, cls.FIELDS, "K-class NB tables")
        require(isinstance(data["n_features"], int) and isinstance(data["n_classes"], int),
                "n_features and n_classes must be integers")
        return cls(**fields)

    # -- evaluation ------------------------------------------------------------
    def entries(self, X32: np.ndarray) -> np.ndarray:
        """Class entries added at each position for each row: float32 [rows, n_used, n_classes]."""
        return self.d[self.table_start[:-1].astype(np.int64)[None, :] + bin_index(self, X32)]

    def predict_reference(self, X: Any) -> Predictions:
        X32 = check_inputs(X, self.n_features)
        return run_margin_stops(self.entries(X32), self.d0, self.stop_at, self.stop_margin,
                                _cum_costs(self.costs, self.order, np.float32), saturate=False)

    def partial_scores(self, X: Any) -> np.ndarray:
        """float32 class scores after 0..n_used features, as the runtime sums them: [rows, n_used + 1, K]."""
        E = self.entries(check_inputs(X, self.n_features))
        out = np.empty((E.shape[0], E.shape[1] + 1, self.n_classes), dtype=np.float32)
        acc = np.broadcast_to(self.d0, (E.shape[0], self.n_classes)).astype(np.float32)
        out[:, 0] = acc
        for i in range(E.shape[1]):
            acc = (acc + E[:, i]).astype(np.float32)
            out[:, i + 1] = acc
        return out

    def strided(self, d: np.ndarray | None = None) -> tuple[int, np.ndarray, np.ndarray]:
        """fm_nbk's fixed-stride layout: (n_edges, edges [k*n_edges], entries [k*(n_edges+2), K], or of the
        columns of d: fm_nbk_q15's packed words) with the binary layout's slots (slot 0 an exact zero, 1 + c
        for c edges below the value)."""
        ne, edges, out = strided_layout(self, self.d if d is None else d)
        k = self.n_used
        return ne, edges.ravel(), out.reshape(k * (ne + 2), out.shape[-1])

    def q15(self) -> NBMultiQ15:
        return quantize_multi_q15(self)


@dataclass
class NBMultiQ15:
    """Packed fixed-point K-class tables (fm_nbk_q15): per (position, bin) the class log-likelihoods minus
    their mean over the classes, and the priors minus theirs, scaled by 2**shift and rounded to int16 lanes
    so small that no class's partial sum leaves int16 (``lane_bound`` <= 32767); int32 margins. Each row of
    K lanes is stored as ceil(K/2) 32-bit words w = hi * 65536 + lo (class 2j in lo, 2j + 1 in hi; mod 2**32,
    an odd K's last hi lane 0), so plain 32-bit adds sum two classes at once, exactly."""

    base: NBMultiModel
    shift: int
    d: np.ndarray  # int16 [rows, K] lanes
    d0: np.ndarray  # int32 [K] lanes (int16 range)
    stop_margin: np.ndarray  # int32
    edge_keys: np.ndarray  # int32
    costs: np.ndarray | None  # uint16 integer units
    cost_unit: float

    @property
    def words(self) -> np.ndarray:
        """The packed rows: uint32 [rows, ceil(K/2)]."""
        return pack_lanes(self.d)

    @property
    def d0_words(self) -> np.ndarray:
        """The packed priors: uint32 [ceil(K/2)]."""
        return pack_lanes(self.d0[None, :])[0]

    def predict_reference(self, X: Any) -> Predictions:
        """fm_nbk_q15's arithmetic: uint32 sums (mod 2**32) of the packed words in reading order, the
        lanes decoded at each stop point and at the end."""
        m = self.base
        X32 = check_inputs(X, m.n_features)
        rows = X32.shape[0]
        k = m.n_classes
        words = self.words[m.table_start[:-1].astype(np.int64)[None, :] + bin_index(m, X32)]  # [rows, used, W]
        acc = np.broadcast_to(self.d0_words, (rows, self.d0_words.shape[0])).astype(np.uint32)
        label = np.zeros(rows, dtype=np.int32)
        n_read = np.full(rows, m.n_used, dtype=np.uint32)
        stage = np.zeros(rows, dtype=np.uint32)
        final = np.zeros(rows, dtype=np.int32)
        running = np.ones(rows, dtype=bool)
        pos = 0
        for t, upto in enumerate([*(int(a) for a in m.stop_at), m.n_used]):
            for i in range(pos, upto):
                acc = acc + words[:, i]  # uint32: wraps mod 2**32 as the C adds
            pos = upto
            score = unpack_lanes(acc, k)
            lead, margin = leader_margin(score)
            last = t == m.n_stops
            done = running.copy() if last else running & (margin > self.stop_margin[t])
            label[done] = lead[done]
            n_read[done] = upto
            stage[done] = 0 if last else t + 1
            final[done] = score[np.flatnonzero(done), lead[done]]
            running &= ~done
        cost = read_costs(n_read, _cum_costs(self.costs, m.order, np.int64))
        return Predictions(label=label, score=final, n_read=n_read, cost=cost.astype(np.float64) * self.cost_unit,
                           stage=stage)


def pack_lanes(lanes: np.ndarray) -> np.ndarray:
    """Rows of K int16 lanes as ceil(K/2) uint32 words w = hi * 65536 + lo (mod 2**32; odd K: hi 0)."""
    rows, k = lanes.shape
    a = np.zeros((rows, 2 * ((k + 1) // 2)), dtype=np.int64)
    a[:, :k] = lanes
    return ((a[:, 1::2] * 65536 + a[:, 0::2]) % (1 << 32)).astype(np.uint32)


def unpack_lanes(words: np.ndarray, k: int) -> np.ndarray:
    """The K int16 lanes of packed words [..., ceil(K/2)] as int32 [..., K] (lo = the low half
    sign-extended, hi = the high half of w - lo, sign-extended)."""
    w = words.astype(np.uint32)
    lo = (w & np.uint32(0xFFFF)).astype(np.uint16).view(np.int16).astype(np.int32)
    hi = ((w - lo.astype(np.uint32)) >> np.uint32(16)).astype(np.uint16).view(np.int16).astype(np.int32)
    out = np.empty((*w.shape[:-1], 2 * w.shape[-1]), dtype=np.int32)
    out[..., 0::2], out[..., 1::2] = lo, hi
    return out[..., :k]


def lane_bound(d: np.ndarray, d0: np.ndarray, table_start: np.ndarray) -> int:
    """The largest |partial sum| a class lane can reach: max over classes of |d0[c]| plus, over the
    positions, the largest |entry| of the position's rows (fm_nbk_q15_check wants <= 32767)."""
    a = np.abs(d.astype(np.int64))
    total = np.abs(d0.astype(np.int64))
    for i in range(table_start.shape[0] - 1):
        total = total + a[int(table_start[i]):int(table_start[i + 1])].max(axis=0, initial=0)
    return int(total.max(initial=0))


def leader_margin(score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(leader, margin) per row: the first class of largest score and its score minus the largest other
    class's (float32 subtraction, as in C; int64 for integer scores)."""
    lead = np.argmax(score, axis=1)
    top2 = np.sort(score, axis=1)[:, -2:]
    if np.issubdtype(score.dtype, np.floating):
        return lead, (top2[:, 1] - top2[:, 0]).astype(np.float32)
    return lead, top2[:, 1].astype(np.int64) - top2[:, 0].astype(np.int64)


def run_margin_stops(entries: np.ndarray, d0: np.ndarray, stop_at: np.ndarray, stop_margin: np.ndarray,
                     cum_cost: np.ndarray | None, saturate: bool) -> Predictions:
    """fm_nbk's walk over precomputed entries [rows, n_used, K]."""
    rows = entries.shape[0]
    start = np.broadcast_to(d0, (rows, d0.shape[0])).astype(np.int64 if saturate else np.float32)
    label = np.zeros(rows, dtype=np.int32)
    n_read = np.full(rows, entries.shape[1], dtype=np.uint32)
    stage = np.zeros(rows, dtype=np.uint32)
    final = np.zeros(rows, dtype=np.int64 if saturate else np.float32)
    running = np.ones(rows, dtype=bool)
    for t, upto, score in walk_segments(entries, start, stop_at, saturate):
        lead, margin = leader_margin(score)
        last = t == stop_at.shape[0]
        done = running.copy() if last else running & (margin > stop_margin[t])
        label[done] = lead[done]
        n_read[done] = upto
        stage[done] = 0 if last else t + 1
        final[done] = score[np.flatnonzero(done), lead[done]]
        running &= ~done
    return Predictions(label=label, score=final if not saturate else final.astype(np.int32), n_read=n_read,
                       cost=read_costs(n_read, cum_cost), stage=stage)


def quantize_multi_q15(m: NBMultiModel) -> NBMultiQ15:
    """Packed q15 lanes: entries and priors minus their mean over the classes (a per-bin constant changes no
    class ranking, margin or stop), with the largest power-of-two scale (shift <= 24) under which every
    class's partial sums stay in int16 (lane_bound <= 32767)."""
    d = m.d.astype(np.float64)
    d = d - d.mean(axis=1, keepdims=True)
    d0 = m.d0.astype(np.float64)
    d0 = d0 - d0.mean()
    peak = lane_bound_float(d, d0, m.table_start)
    shift = 24 if peak <= 0 else min(24, int(np.floor(np.log2(32767.0 / peak))))
    while True:
        scale = 2.0**shift
        lanes, prior = np.round(d * scale), np.round(d0 * scale)
        if shift <= -60 or lane_bound(lanes, prior, m.table_start) <= 32767:
            break
        shift -= 1
    costs, unit = q15_costs(m.costs)
    return NBMultiQ15(
        base=m, shift=shift, d=lanes.astype(np.int16), d0=prior.astype(np.int32),
        stop_margin=np.array([_q(v, scale) for v in m.stop_margin], dtype=np.int32),
        edge_keys=float_keys(m.edges), costs=costs, cost_unit=unit,
    )


def lane_bound_float(d: np.ndarray, d0: np.ndarray, table_start: np.ndarray) -> float:
    """lane_bound of unscaled (float) lanes."""
    a = np.abs(d)
    total = np.abs(d0)
    for i in range(table_start.shape[0] - 1):
        total = total + a[int(table_start[i]):int(table_start[i + 1])].max(axis=0, initial=0.0)
    return float(total.max(initial=0.0))
