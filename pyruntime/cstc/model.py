"""Cost-sensitive trees of classifiers (kind ``cstc``, Xu et al. JMLR 2014): IR, q15
quantization, the numpy reference evaluator and the cffi binding of runtime_c/src/cstc/fm_cstc.c.

A CSTC model is a binary tree of sparse linear classifiers over the raw features. Node k's terms
are ``feature/weight[term_start[k] .. term_start[k+1]-1]``; its score is
``acc = bias[k] + sum weight * x[feature]`` computed exactly as an fm_linear scorer
(float32: stored order, each product rounded; q15: fm_linear_q15 arithmetic with the node's own
``w_shift[k]`` and the model's ``in_shift``). An internal node (``upper[k] >= 0``) sends the input
to ``upper[k]`` when ``acc > threshold[k]``, else to ``lower[k]``; a leaf (``upper[k] == lower[k]
== -1``) answers label ``acc > threshold[k]`` with score acc and ``stage = k``. Children have larger
indices than their parent and every node but the root has exactly one parent (a tree, checked on
load), so a walk visits at most n_nodes nodes. The features of the nodes on the input's path are
read lazily, each at most once (one memo per prediction): n_read and cost count only them.

K classes (``n_classes`` = K >= 3; docs/cstc.md): the internal nodes route as above and every leaf k
holds K class scorers, scorers ``class_first[k] .. class_first[k] + K - 1`` of the same term arrays
(``term_start`` and ``bias`` hold the n_nodes node scorers, then the class scorers); the leaf answers
the class of the largest score (the first on ties), score that score. In q15 a leaf's class scorers
share its ``w_shift[k]``, so their scores compare in one unit. A binary model has no class scorers
and its tables record is the binary one (no ``n_classes`` field).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyruntime.arrays import check_inputs, kind_tables, require, set_arrays, table_fields
from pyruntime.cbind import CEvaluator, c_ptr
from pyruntime.describe import feature_name, features_with_costs
from pyruntime.errors import FM_OK
from pyruntime.fixedpoint import MAX_SHIFT, scorers_weight_shift, to_fixed
from pyruntime.linear import LinearScorer, LinearScorerQ15, q15_input_scale
from pyruntime.memo import ReadState, check_costs, check_q15_costs, quantize_costs
from pyruntime.result import Predictions

_FIELDS = ("n_features", "term_start", "feature", "weight", "bias", "threshold", "upper", "lower", "costs",
           "input_absmax")
_K_FIELDS = ("n_classes", "class_first")  # K-class tables only
MAX_CLASSES = 64  # FM_VEC_MAX_OUTPUTS: fm_cstc_check refuses more


def _check_classes(n_classes: int, class_first: np.ndarray | None, upper: np.ndarray, n_scorers: int) -> None:
    """K-class leaves (the class checks of fm_cstc_check)."""
    require(isinstance(n_classes, (int, np.integer)) and not isinstance(n_classes, bool),
            "n_classes must be an integer")
    require(2 <= n_classes <= MAX_CLASSES, f"n_classes must be in 2..{MAX_CLASSES}, got {n_classes}")
    n_nodes = upper.shape[0]
    if n_classes == 2:
        require(class_first is None and n_scorers == n_nodes, "a binary CSTC tree has no class scorers")
        return
    require(class_first is not None and class_first.shape == (n_nodes,), "class_first needs one entry per node")
    assert class_first is not None
    leaf = upper < 0
    first = class_first[leaf].astype(np.int64)
    require(bool(np.all((first >= n_nodes) & (first + n_classes <= n_scorers))),
            f"a leaf's {n_classes} class scorers must lie in the class scorers (n_nodes .. n_scorers - 1)")


def _check_tree(term_start: np.ndarray, feature: np.ndarray, upper: np.ndarray, lower: np.ndarray,
                n_features: int, n_nodes: int, n_scorers: int | None = None) -> None:
    """The structure checks fm_cstc_check runs (ModelFormatError on the first defect)."""
    n_scorers = n_nodes if n_scorers is None else n_scorers
    require(isinstance(n_features, int) and n_features >= 0, "n_features must be an int >= 0")
    require(n_nodes >= 1, "a CSTC tree needs at least one node")
    require(term_start.shape == (n_scorers + 1,), "term_start needs n_nodes + n_class_scorers + 1 entries")
    require(int(term_start[0]) == 0, "term_start must start at 0")
    require(bool(np.all(np.diff(term_start.astype(np.int64)) >= 0)), "term_start must be non-decreasing")
    require(int(term_start[-1]) == feature.shape[0], "term_start must end at the number of terms")
    require(bool(np.all((feature >= 0) & (feature < n_features))), "feature index out of range")
    require(upper.shape == (n_nodes,) and lower.shape == (n_nodes,), "upper and lower need one entry per node")
    leaf = upper < 0
    require(bool(np.all((upper == -1) == (lower == -1))), "a node has both children or none (-1)")
    require(bool(np.all(leaf | (upper != lower))), "a node's children must differ")
    k = np.arange(n_nodes)
    inner = ~leaf
    require(bool(np.all((upper[inner] > k[inner]) & (lower[inner] > k[inner]))),
            "children must have larger indices than their parent")
    require(bool(np.all(upper[inner] < n_nodes) and np.all(lower[inner] < n_nodes)), "child index out of range")
    parents = np.bincount(np.concatenate([upper[inner], lower[inner]]).astype(np.int64), minlength=n_nodes)
    require(int(parents[0]) == 0 and bool(np.all(parents[1:] == 1)),
            "every node but the root needs exactly one parent (a tree)")


@dataclass(frozen=True, eq=False)
class CSTCModel:
    """Float32 tables of a CSTC tree (see the module docstring)."""

    n_features: int
    term_start: np.ndarray  # uint32 [n_nodes + 1]
    feature: np.ndarray  # int32 [nnz]
    weight: np.ndarray  # float32 [nnz]
    bias: np.ndarray  # float32 [n_nodes]
    threshold: np.ndarray  # float32 [n_nodes]: routing threshold, a leaf's decision threshold
    upper: np.ndarray  # int32 [n_nodes]: child when acc > threshold, -1 at a leaf
    lower: np.ndarray  # int32 [n_nodes]
    costs: np.ndarray | None = None  # float32 [n_features]; None = 1 each
    input_absmax: float = 1.0  # largest |x| seen in training (sets the q15 input shift)
    n_classes: int = 2  # K >= 3: K-class leaves
    class_first: np.ndarray | None = None  # uint32 [n_nodes] (K >= 3): a leaf's first class scorer

    def __post_init__(self) -> None:
        set_arrays(self, (("term_start", "u4"), ("feature", "i4"), ("weight", "f4"), ("bias", "f4"),
                          ("threshold", "f4"), ("upper", "i4"), ("lower", "i4")),
                   (("costs", "f4"), ("class_first", "u4")))
        require(isinstance(self.input_absmax, (int, float)), "input_absmax must be a number")
        object.__setattr__(self, "input_absmax", float(self.input_absmax))
        self.validate()

    @property
    def n_nodes(self) -> int:
        return int(self.upper.shape[0])

    @property
    def n_scorers(self) -> int:
        """Node scorers plus class scorers (K >= 3)."""
        return int(self.bias.shape[0])

    @property
    def n_used(self) -> int:
        """Distinct features of all nodes (the most one prediction can read)."""
        return int(np.unique(self.feature).size)

    def describe(self, feature_names: Sequence[str]) -> dict[str, Any]:
        """What `frugalml inspect` shows: the tree of classifiers (nodes, leaves, depth), each node's
        features, and the features used with their costs."""
        depth = np.zeros(self.n_nodes, np.int64)
        for k in range(self.n_nodes):  # children have larger indices than their parent
            for child in (int(self.upper[k]), int(self.lower[k])):
                if child >= 0:
                    depth[child] = depth[k] + 1
        leaves = [k for k in range(self.n_nodes) if self.is_leaf(k)]
        nodes = [{"node": k, "leaf": self.is_leaf(k), "upper": int(self.upper[k]), "lower": int(self.lower[k]),
                  "features": [feature_name(feature_names, int(j)) for j in self.node_features(k)]}
                 for k in range(self.n_nodes)]
        used = np.unique(self.feature)
        k_class = {"n_classes": self.n_classes} if self.n_classes > 2 else {}
        return {"n_nodes": self.n_nodes, **k_class, "n_leaves": len(leaves), "max_depth": int(depth.max(initial=0)),
                "n_features_used": int(used.size),
                "features_used": features_with_costs(used, self.costs, feature_names), "nodes": nodes}

    def validate(self) -> None:
        require(self.upper.shape == self.lower.shape and self.upper.ndim == 1,
                "upper and lower need one entry per node")
        require(self.n_scorers >= self.n_nodes, "bias needs one entry per node and class scorer")
        _check_tree(self.term_start, self.feature, self.upper, self.lower, self.n_features, self.n_nodes,
                    self.n_scorers)
        _check_classes(self.n_classes, self.class_first, self.upper, self.n_scorers)
        require(self.weight.shape == self.feature.shape, "weight and feature differ in length")
        require(self.threshold.shape == (self.n_nodes,), "threshold needs one entry per node")
        require(bool(np.all(np.isfinite(self.weight)) and np.all(np.isfinite(self.bias))
                     and np.all(np.isfinite(self.threshold))), "weights, biases and thresholds must be finite")
        check_costs(self.costs, self.n_features)
        require(bool(np.isfinite(self.input_absmax) and self.input_absmax >= 0), "input_absmax must be >= 0")

    def to_dict(self) -> dict[str, Any]:
        out = {n: getattr(self, n) for n in _FIELDS}
        if self.n_classes > 2:  # a binary record stays as before K classes (same bytes)
            out.update({n: getattr(self, n) for n in _K_FIELDS})
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CSTCModel:
        fields = table_fields(data, _FIELDS, "cstc tables")
        require(isinstance(data["n_features"], int), "n_features must be an integer")
        if "n_classes" in data:
            fields.update(table_fields(data, _K_FIELDS, "K-class cstc tables"))
        return cls(**fields)

    def class_scorers(self, k: int) -> range:
        """Scorer indices of leaf k's classes (K >= 3; empty for a binary tree or an internal node)."""
        if self.n_classes <= 2 or not self.is_leaf(k):
            return range(0)
        assert self.class_first is not None
        first = int(self.class_first[k])
        return range(first, first + self.n_classes)

    def node_features(self, k: int) -> np.ndarray:
        """Feature indices node k reads in stored order (a K-class leaf: its class scorers', each once)."""
        scorers = self.class_scorers(k)
        if not scorers:
            return self.feature[self.term_start[k]:self.term_start[k + 1]]
        f = np.concatenate([self.feature[self.term_start[s]:self.term_start[s + 1]] for s in scorers])
        _, first = np.unique(f, return_index=True)
        return f[np.sort(first)]

    def scorer(self, s: int, threshold: float = 0.0) -> LinearScorer:
        a, b = int(self.term_start[s]), int(self.term_start[s + 1])
        return LinearScorer(n_features=self.n_features, feature=self.feature[a:b], weight=self.weight[a:b],
                            bias=float(self.bias[s]), decision_threshold=threshold, costs=self.costs)

    def node(self, k: int) -> LinearScorer:
        """Node k as a linear scorer (the arithmetic the runtime runs)."""
        return self.scorer(k, float(self.threshold[k]))

    def is_leaf(self, k: int) -> bool:
        return int(self.upper[k]) < 0

    def reference(self, X32: np.ndarray) -> tuple[Predictions, np.ndarray]:
        return _reference(self, [self.node(k) for k in range(self.n_nodes)], np.asarray(X32, np.float32), False,
                          [[self.scorer(s) for s in self.class_scorers(k)] for k in range(self.n_nodes)])

    def predict_reference(self, X: Any) -> Predictions:
        return self.reference(check_inputs(X, self.n_features))[0]

    def q15(self) -> CSTCModelQ15:
        """Fixed-point tables: inputs scaled by 2**in_shift (linear.q15_input_scale of input_absmax); node k's
        weights by 2**w_shift[k], the largest shift that keeps its weights in int16 and its score bound
        |bias| + |threshold| + sum |w| * absmax in int32 (fixedpoint.scorers_weight_shift; a K-class leaf's class
        scorers share one shift)."""
        in_shift, amax = q15_input_scale(self.input_absmax)
        ns = self.n_scorers
        shift_of = np.zeros(ns, np.int64)  # the weight shift every scorer is quantized with
        ws = []
        for k in range(self.n_nodes):
            group = [k, *self.class_scorers(k)]  # a K-class leaf: one shift for its class scorers
            shift = scorers_weight_shift([(float(self.bias[s_]), float(self.threshold[k]) if s_ == k else 0.0,
                                           self.weight[int(self.term_start[s_]):int(self.term_start[s_ + 1])])
                                          for s_ in group], amax)
            ws.append(shift)
            shift_of[group] = shift
        wq = [np.clip(np.round(self.weight[int(self.term_start[s_]):int(self.term_start[s_ + 1])].astype(np.float64)
                               * 2.0 ** int(shift_of[s_])), -32768, 32767).astype(np.int16) for s_ in range(ns)]
        bq = [to_fixed(float(self.bias[s_]), int(shift_of[s_])) for s_ in range(ns)]
        tq = [to_fixed(float(self.threshold[k]), ws[k]) for k in range(self.n_nodes)]
        costs, unit = quantize_costs(self.costs)
        return CSTCModelQ15(n_features=self.n_features, term_start=self.term_start.copy(),
                            feature=self.feature.copy(), weight_q=np.concatenate(wq) if wq else np.zeros(0, np.int16),
                            bias_q=bq, threshold_q=tq, w_shift=ws, upper=self.upper.copy(), lower=self.lower.copy(),
                            in_shift=in_shift, costs=costs, cost_unit=unit, n_classes=self.n_classes,
                            class_first=None if self.class_first is None else self.class_first.copy())


@dataclass(frozen=True, eq=False)
class CSTCModelQ15:
    """Fixed-point tables of a CSTC tree: node k's bias/threshold/score in units of 2**-w_shift[k]."""

    n_features: int
    term_start: np.ndarray  # uint32 [n_nodes + 1]
    feature: np.ndarray  # int32 [nnz]
    weight_q: np.ndarray  # int16 [nnz]
    bias_q: np.ndarray  # int32 [n_nodes]
    threshold_q: np.ndarray  # int32 [n_nodes]
    w_shift: np.ndarray  # uint8 [n_nodes], each 0..30
    upper: np.ndarray  # int32 [n_nodes]
    lower: np.ndarray  # int32 [n_nodes]
    in_shift: int = 16
    costs: np.ndarray | None = None  # uint16 cost units [n_features]; None = 1 each
    cost_unit: float = 1.0
    n_classes: int = 2
    class_first: np.ndarray | None = None  # uint32 [n_nodes] (K >= 3); a leaf's class scorers use its w_shift

    def __post_init__(self) -> None:
        set_arrays(self, (("term_start", "u4"), ("feature", "i4"), ("weight_q", "i2"), ("bias_q", "i4"),
                          ("threshold_q", "i4"), ("w_shift", "u1"), ("upper", "i4"), ("lower", "i4")),
                   (("costs", "u2"), ("class_first", "u4")))
        n = int(self.upper.shape[0])
        ns = int(self.bias_q.shape[0])
        require(ns >= n, "bias_q needs one entry per node and class scorer")
        _check_tree(self.term_start, self.feature, self.upper, self.lower, self.n_features, n, ns)
        _check_classes(self.n_classes, self.class_first, self.upper, ns)
        require(self.weight_q.shape == self.feature.shape, "weight_q and feature differ in length")
        require(self.threshold_q.shape == (n,) and self.w_shift.shape == (n,),
                "threshold_q and w_shift need one entry per node")
        require(bool(np.all(self.w_shift <= MAX_SHIFT)), "w_shift must be in 0..30")
        require(isinstance(self.in_shift, int) and 0 <= self.in_shift <= MAX_SHIFT, "in_shift must be in 0..30")
        check_q15_costs(self.costs, self.n_features, self.cost_unit)

    @property
    def n_nodes(self) -> int:
        return int(self.upper.shape[0])

    @property
    def n_scorers(self) -> int:
        return int(self.bias_q.shape[0])

    def class_scorers(self, k: int) -> range:
        if self.n_classes <= 2 or int(self.upper[k]) >= 0:
            return range(0)
        assert self.class_first is not None
        first = int(self.class_first[k])
        return range(first, first + self.n_classes)

    def scorer(self, s: int, k: int, threshold_q: int = 0) -> LinearScorerQ15:
        """Scorer s with node k's weight shift."""
        a, b = int(self.term_start[s]), int(self.term_start[s + 1])
        return LinearScorerQ15(n_features=self.n_features, feature=self.feature[a:b], weight_q=self.weight_q[a:b],
                               bias_q=int(self.bias_q[s]), decision_threshold_q=threshold_q,
                               in_shift=self.in_shift, w_shift=int(self.w_shift[k]), costs=self.costs,
                               cost_unit=self.cost_unit)

    def node(self, k: int) -> LinearScorerQ15:
        return self.scorer(k, k, int(self.threshold_q[k]))

    def to_dict(self) -> dict[str, Any]:
        names = ("n_features", "term_start", "feature", "weight_q", "bias_q", "threshold_q", "w_shift", "upper",
                 "lower", "in_shift", "costs", "cost_unit") + (_K_FIELDS if self.n_classes > 2 else ())
        return {n: getattr(self, n) for n in names}

    def reference(self, X32: np.ndarray) -> tuple[Predictions, np.ndarray]:
        return _reference(self, [self.node(k) for k in range(self.n_nodes)], np.asarray(X32, np.float32), True,
                          [[self.scorer(s, k) for s in self.class_scorers(k)] for k in range(self.n_nodes)])

    def predict_reference(self, X: Any) -> Predictions:
        return self.reference(check_inputs(X, self.n_features))[0]


def _reference(m: CSTCModel | CSTCModelQ15, nodes: list[Any], X32: np.ndarray,
               q15: bool, classes: list[list[Any]]) -> tuple[Predictions, np.ndarray]:
    """Walk every row down the tree (nodes in index order: parents before children); classes[k]: leaf k's
    class scorers (K >= 3), else empty."""
    rows = X32.shape[0]
    state = ReadState.start(rows, m.n_features)
    at = np.zeros(rows, np.int64)
    acc = np.zeros(rows, np.int64 if q15 else np.float32)
    label = np.zeros(rows, np.int32)
    score = np.zeros(rows, np.int32 if q15 else np.float32)
    stage = np.zeros(rows, np.uint32)
    for k, node in enumerate(nodes):
        r = state.active(np.flatnonzero(at == k))
        if r.size == 0:
            continue
        if classes[k]:
            _leaf_k(classes[k], X32, state, r, q15, label, score)
            stage[r[state.status[r] == FM_OK]] = k
            at[r] = -1
            continue
        acc[r] = node.bias_q if q15 else node.bias
        node.score_into(X32, state, acc, rows=r)
        r = r[state.status[r] == FM_OK]
        thr = node.decision_threshold_q if q15 else np.float32(node.decision_threshold)
        above = acc[r] > thr
        if int(m.upper[k]) < 0:
            label[r] = above.astype(np.int32)
            score[r] = acc[r]
            stage[r] = k
            at[r] = -1
        else:
            at[r] = np.where(above, int(m.upper[k]), int(m.lower[k]))
    cost = state.cost_q.astype(np.float64) * m.cost_unit if q15 else state.cost
    return Predictions(label=label, score=score, n_read=state.n_read, cost=cost, stage=stage), state.status


def _leaf_k(scorers: list[Any], X32: np.ndarray, state: ReadState, r: np.ndarray, q15: bool, label: np.ndarray,
            score: np.ndarray) -> None:
    """A K-class leaf on rows r: class 0, 1, .., K-1 scored in turn over the shared memo, the first largest
    wins (as the C argmax)."""
    n = X32.shape[0]
    best = np.zeros(n, np.int64 if q15 else np.float32)
    lab = np.zeros(n, np.int32)
    for c, s in enumerate(scorers):
        acc: np.ndarray = np.full(n, s.bias_q, np.int64) if q15 else np.full(n, s.bias, np.float32)
        s.score_into(X32, state, acc, rows=r)
        better = acc > best if c else np.ones(n, bool)
        best = np.where(better, acc, best)
        lab = np.where(better, c, lab).astype(np.int32)
    ok = r[state.status[r] == FM_OK]
    label[ok] = lab[ok]
    score[ok] = best[ok]


# -- C binding -------------------------------------------------------------------------

def cstc_struct(ffi: Any, model: CSTCModel | CSTCModelQ15, keep: list[Any]) -> Any:
    """fm_cstc / fm_cstc_q15 over the model's arrays (not validated: C checks it)."""
    q = isinstance(model, CSTCModelQ15)
    s = ffi.new("fm_cstc_q15 *" if q else "fm_cstc *")
    s.n_features, s.n_nodes = model.n_features, model.n_nodes
    s.n_classes = model.n_classes if model.n_classes > 2 else 0
    s.n_class_scorers = model.n_scorers - model.n_nodes
    s.class_first = c_ptr(ffi, keep, "const uint32_t *", model.class_first, "u4")
    s.term_start = c_ptr(ffi, keep, "const uint32_t *", model.term_start, "u4")
    s.feature = c_ptr(ffi, keep, "const int32_t *", model.feature, "i4")
    s.upper = c_ptr(ffi, keep, "const int32_t *", model.upper, "i4")
    s.lower = c_ptr(ffi, keep, "const int32_t *", model.lower, "i4")
    if q:
        s.weight_q = c_ptr(ffi, keep, "const int16_t *", model.weight_q, "i2")
        s.bias_q = c_ptr(ffi, keep, "const int32_t *", model.bias_q, "i4")
        s.threshold_q = c_ptr(ffi, keep, "const int32_t *", model.threshold_q, "i4")
        s.w_shift = c_ptr(ffi, keep, "const uint8_t *", model.w_shift, "u1")
        s.in_shift = model.in_shift
        s.costs = c_ptr(ffi, keep, "const uint16_t *", model.costs, "u2")
    else:
        s.weight = c_ptr(ffi, keep, "const float *", model.weight, "f4")
        s.bias = c_ptr(ffi, keep, "const float *", model.bias, "f4")
        s.threshold = c_ptr(ffi, keep, "const float *", model.threshold, "f4")
        s.costs = c_ptr(ffi, keep, "const float *", model.costs, "f4")
    return s


class CCSTC(CEvaluator):
    """The C evaluator over a CSTC tree's tables (float32 or q15 by the model's type)."""

    family, what = "cstc", "CSTC tree"

    def make_struct(self) -> Any:
        return cstc_struct(self.ffi, self.model, self._keep)


def for_numeric(tables: Any, numeric: str) -> CSTCModel | CSTCModelQ15:
    return kind_tables(tables, CSTCModel, "cstc", numeric)
