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
    q15_entries,
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
        """fm_nbk's fixed-stride layout: (n_edges, edges [k*n_edges], entries [k*(n_edges+2), K]) with the
        binary layout's slots (slot 0 an exact zero, 1 + c for c edges below the value)."""
        ne, edges, out = strided_layout(self, self.d if d is None else d)
        k = self.n_used
        return ne, edges.ravel(), out.reshape(k * (ne + 2), self.n_classes)

    def q15(self) -> NBMultiQ15:
        return quantize_multi_q15(self)


@dataclass
class NBMultiQ15:
    """Fixed-point K-class tables: int16 entries scaled by 2**shift, int32 priors and margins."""

    base: NBMultiModel
    shift: int
    d: np.ndarray  # int16 [rows, K]
    d0: np.ndarray  # int32 [K]
    stop_margin: np.ndarray  # int32
    edge_keys: np.ndarray  # int32
    costs: np.ndarray | None  # uint16 integer units
    cost_unit: float

    def predict_reference(self, X: Any) -> Predictions:
        m = self.base
        X32 = check_inputs(X, m.n_features)
        entries = self.d.astype(np.int64)[m.table_start[:-1].astype(np.int64)[None, :] + bin_index(m, X32)]
        p = run_margin_stops(entries, self.d0.astype(np.int64), m.stop_at, self.stop_margin,
                             _cum_costs(self.costs, m.order, np.int64), saturate=True)
        p.cost = p.cost.astype(np.float64) * self.cost_unit
        return p


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
    """int16 entries with the largest power-of-two scale that fits (the binary quantizer's rule)."""
    shift, scale, d, costs, unit = q15_entries(m.d, m.costs)
    return NBMultiQ15(
        base=m, shift=shift, d=d, d0=np.array([_q(v, scale) for v in m.d0], dtype=np.int32),
        stop_margin=np.array([_q(v, scale) for v in m.stop_margin], dtype=np.int32),
        edge_keys=float_keys(m.edges), costs=costs, cost_unit=unit,
    )
