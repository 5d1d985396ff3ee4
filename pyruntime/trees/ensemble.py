"""Flat tree ensembles (kind ``trees``; boosted trees or forests): IR, q15
quantization, the numpy reference evaluator and the cffi binding of
runtime_c/src/trees/fm_trees.c.

One node table holds every tree. Node i is a leaf when ``feature[i] == -1``;
otherwise the walk goes to ``left[i]`` iff ``x[feature[i]] <= threshold[i]``
(float32 compare) and to ``right[i]`` otherwise. Children are absolute
indices pointing forward (child > i). Tree t starts at ``roots[t]`` and adds
its leaf value to ``scores[tree_output[t]]``; scores start at ``base_score``
and are summed in float32, in tree order. One output: label 1 iff score >
decision_threshold; several outputs: label = first index of the largest.

q15: thresholds become int32 keys (``float_keys``, fm_key_bits in C) compared
with the key of x. The keys are rounded up to the next ``65536 * k + 65535`` so the C
tables hold the 16-bit k biased to k + 32768 as uint16 (``fm_key16(x) <= k`` is the same decision); leaf
values are int16 in units of 2**-shift, summed in a saturating int32 from
``base_q``; costs are uint16 units summed in a saturating uint32.

Features are read lazily: a tree reads only the features on its path, each
feature at most once per prediction (shared across slices of trees and
across models through a ``ReadState``).

The C runtime does not walk these node tables: ``compact_tables`` derives its compact layout
(fm_trees.h: full binary trees, implicit heap order when that is smaller, 16-bit feature
indices, q15 16-bit threshold keys and leaves) with the same decisions and the same reads.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyruntime.arrays import FieldTables, check_inputs, f32_scalar, float_keys, require, set_arrays
from pyruntime.cbind import CEvaluator, c_ptr
from pyruntime.describe import tree_depth
from pyruntime.errors import FM_OK
from pyruntime.fixedpoint import INT32_MAX, INT32_MIN, MAX_SHIFT, pick_shift, to_fixed
from pyruntime.memo import ReadState, check_costs, check_q15_costs, quantize_costs
from pyruntime.result import Predictions

_STRUCTURE = ("n_features", "n_outputs", "feature", "left", "right", "roots", "tree_output")


def check_structure(n_features: Any, n_outputs: Any, feature: np.ndarray, left: np.ndarray, right: np.ndarray,
                    roots: np.ndarray, tree_output: np.ndarray) -> None:
    """The checks of fm_trees_check on the node structure; ModelFormatError when one fails."""
    require(isinstance(n_features, int) and n_features >= 0, "n_features must be an int >= 0")
    require(isinstance(n_outputs, int) and n_outputs >= 1, "n_outputs must be an int >= 1")
    n = feature.shape[0]
    require(left.shape == (n,) and right.shape == (n,), "feature, left and right differ in length")
    require(tree_output.shape == roots.shape, "roots and tree_output differ in length")
    require(roots.shape[0] == 0 or n > 0, "trees without nodes")
    require(bool(np.all((feature >= -1) & (feature < n_features))), "feature index out of range")
    inner = np.flatnonzero(feature >= 0)
    for name, child in (("left", left), ("right", right)):
        c = child[inner]
        require(bool(np.all((c > inner) & (c < n))), f"{name} child out of range or not pointing forward")
    require(bool(np.all((roots >= 0) & (roots < n))), "root index out of range")
    require(bool(np.all((tree_output >= 0) & (tree_output < n_outputs))), "tree_output out of range")


def float32_floor(values: Any) -> np.ndarray:
    """The largest float32 <= each value: for every float32 x, x <= float32_floor(t) iff x <= t.
    Use it to store float64 split thresholds (e.g. scikit-learn's) without changing any decision."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        t32 = v.astype(np.float32)
    down = np.nextafter(t32, np.float32(-np.inf))
    return np.where(t32.astype(np.float64) > v, down, t32).astype(np.float32)


class _TreeShape:
    """What the float32 and q15 tables share: sizes, the structure check and the reference walk (each form
    gives coerce, check_tables, start_scores, accumulate_into, finish and, for q15, read_cost)."""

    n_features: int
    n_outputs: int
    feature: np.ndarray
    left: np.ndarray
    right: np.ndarray
    roots: np.ndarray
    tree_output: np.ndarray

    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

    @property
    def n_trees(self) -> int:
        return int(self.roots.shape[0])

    def __post_init__(self) -> None:
        self.coerce()
        self.validate()

    def coerce(self) -> None:
        """The fields as arrays of their C types (a subclass's own tables)."""
        raise NotImplementedError

    def validate(self) -> None:
        """Raise ModelFormatError unless the tables pass the checks of fm_trees_check (fm_trees_q15_check)."""
        self.check_structure()
        self.check_tables(self.n_nodes)

    def check_tables(self, n: int) -> None:
        """The checks of a subclass's own tables (n nodes)."""
        raise NotImplementedError

    def reference(self, X32: np.ndarray, first_tree: int = 0,
                  end_tree: int | None = None) -> tuple[Predictions, np.ndarray]:
        """Predictions and per-row status over a float32 matrix that may hold NaN/inf (q15: score in int32
        units of 2**-shift, cost = cost units * cost_unit)."""
        X32 = np.asarray(X32, dtype=np.float32)
        state = ReadState.start(X32.shape[0], self.n_features)
        scores = self.start_scores(X32.shape[0])
        self.accumulate_into(X32, state, scores, first_tree, end_tree)
        label, score = self.finish(scores)
        return Predictions(label=label, score=score, n_read=state.n_read, cost=self.read_cost(state),
                           stage=np.zeros(len(label), np.uint32)), state.status

    def predict_reference(self, X: Any) -> Predictions:
        return self.reference(check_inputs(X, self.n_features))[0]

    def read_cost(self, state: ReadState) -> np.ndarray:
        """The cost each row paid (float32 tables: the memo's float cost)."""
        return state.cost

    def check_structure(self) -> None:
        check_structure(self.n_features, self.n_outputs, self.feature, self.left, self.right, self.roots,
                        self.tree_output)


@dataclass(frozen=True, eq=False)
class TreeEnsemble(_TreeShape, FieldTables):
    """Float32 node tables of a tree ensemble (see the module docstring)."""

    FIELDS = ("n_features", "n_outputs", "feature", "threshold", "left", "right", "value", "roots", "tree_output",
              "base_score", "decision_threshold", "costs")
    WHAT = "tree tables"

    n_features: int
    n_outputs: int
    feature: np.ndarray  # int32 [n_nodes], -1 = leaf
    threshold: np.ndarray  # float32 [n_nodes]
    left: np.ndarray  # int32 [n_nodes]
    right: np.ndarray  # int32 [n_nodes]
    value: np.ndarray  # float32 [n_nodes], leaf values (learning rate folded in)
    roots: np.ndarray  # int32 [n_trees]
    tree_output: np.ndarray  # int32 [n_trees]
    base_score: np.ndarray  # float32 [n_outputs]
    decision_threshold: float = 0.0
    costs: np.ndarray | None = None  # float32 [n_features]; None = cost 1 each

    def coerce(self) -> None:
        set_arrays(self, (("feature", "i4"), ("threshold", "f4"), ("left", "i4"), ("right", "i4"),
                          ("value", "f4"), ("roots", "i4"), ("tree_output", "i4"), ("base_score", "f4")))
        object.__setattr__(self, "decision_threshold", f32_scalar(self.decision_threshold, "decision_threshold"))
        set_arrays(self, (), (("costs", "f4"),))

    def check_tables(self, n: int) -> None:
        require(self.threshold.shape == (n,) and self.value.shape == (n,), "threshold/value length differs")
        require(self.base_score.shape == (self.n_outputs,), "base_score must have n_outputs entries")
        require(bool(np.all(np.isfinite(self.threshold)) and np.all(np.isfinite(self.value))),
                "thresholds and values must be finite")
        require(bool(np.all(np.isfinite(self.base_score)) and np.isfinite(self.decision_threshold)),
                "base_score and decision_threshold must be finite")
        check_costs(self.costs, self.n_features)

    @classmethod
    def from_trees(cls, n_features: int, trees: Sequence[dict[str, Any]], base_score: Any,
                   tree_output: Sequence[int] | None = None, decision_threshold: float = 0.0,
                   costs: Any = None) -> TreeEnsemble:
        """Concatenate per-tree tables (keys feature, threshold, left, right, value, with
        tree-local child indices as in sklearn's tree_, leaves: feature < 0) into one ensemble.
        Thresholds are rounded down to float32 (float32_floor), which keeps every decision of a
        float64 threshold on float32 inputs. tree_output defaults to 0 for every tree."""
        base = np.atleast_1d(np.asarray(base_score, np.float32))
        names = ("feature", "threshold", "left", "right", "value")
        parts: dict[str, list[np.ndarray]] = {k: [] for k in names}
        roots, offset = [], 0
        for tree in trees:
            feat = np.asarray(tree["feature"], np.int64)
            leaf = feat < 0
            parts["feature"].append(np.where(leaf, -1, feat))
            parts["threshold"].append(np.where(leaf, 0.0, float32_floor(tree["threshold"])))
            for side in ("left", "right"):
                parts[side].append(np.where(leaf, -1, np.asarray(tree[side], np.int64) + offset))
            parts["value"].append(np.asarray(tree["value"], np.float64).reshape(len(feat)))
            roots.append(offset)
            offset += len(feat)
        cat = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in parts.items()}
        outs = np.zeros(len(roots), np.int32) if tree_output is None else np.asarray(tree_output, np.int32)
        return cls(n_features=n_features, n_outputs=int(base.shape[0]), feature=cat["feature"],
                   threshold=cat["threshold"], left=cat["left"], right=cat["right"], value=cat["value"],
                   roots=np.asarray(roots, np.int32), tree_output=outs, base_score=base,
                   decision_threshold=decision_threshold, costs=costs)

    # -- reference evaluation --
    def start_scores(self, rows: int) -> np.ndarray:
        return np.tile(self.base_score, (rows, 1))

    def accumulate_into(self, X32: np.ndarray, state: ReadState, scores: np.ndarray, first_tree: int = 0,
                        end_tree: int | None = None, rows: np.ndarray | None = None) -> None:
        """Add trees first_tree .. end_tree-1 to scores[rows] (fm_trees_accumulate)."""
        _accumulate(self, X32, state, scores, first_tree, end_tree, rows, q15=False)

    def finish(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(label, score) of every row (fm_trees_finish)."""
        return _finish(scores, np.float32(self.decision_threshold))

    def q15(self, shift: int | None = None) -> TreeEnsembleQ15:
        return quantize_trees(self, shift)


@dataclass(frozen=True, eq=False)
class TreeEnsembleQ15(_TreeShape, FieldTables):
    """Fixed-point tables of a tree ensemble (integer operations only on the device)."""

    FIELDS = ("n_features", "n_outputs", "feature", "threshold_key", "left", "right", "value_q", "roots",
              "tree_output", "base_q", "decision_threshold_q", "shift", "costs", "cost_unit")
    WHAT = "tree tables"

    n_features: int
    n_outputs: int
    feature: np.ndarray  # int32 [n_nodes]
    threshold_key: np.ndarray  # int32 [n_nodes]
    left: np.ndarray  # int32 [n_nodes]
    right: np.ndarray  # int32 [n_nodes]
    value_q: np.ndarray  # int16 [n_nodes], leaf value * 2**shift
    roots: np.ndarray  # int32 [n_trees]
    tree_output: np.ndarray  # int32 [n_trees]
    base_q: np.ndarray  # int32 [n_outputs]
    decision_threshold_q: int
    shift: int
    costs: np.ndarray | None = None  # uint16 cost units; None = 1 each
    cost_unit: float = 1.0

    def coerce(self) -> None:
        set_arrays(self, (("feature", "i4"), ("threshold_key", "i4"), ("left", "i4"), ("right", "i4"),
                          ("value_q", "i2"), ("roots", "i4"), ("tree_output", "i4"), ("base_q", "i4")),
                   (("costs", "u2"),))

    def check_tables(self, n: int) -> None:
        require(self.threshold_key.shape == (n,) and self.value_q.shape == (n,), "key/value length differs")
        require(self.base_q.shape == (self.n_outputs,), "base_q must have n_outputs entries")
        t = self.decision_threshold_q
        require(isinstance(t, int) and INT32_MIN <= t <= INT32_MAX, "decision_threshold_q must fit int32")
        require(isinstance(self.shift, int) and 0 <= self.shift <= MAX_SHIFT, "shift must be in 0..30")
        inner = self.feature >= 0
        require(bool(np.all((self.threshold_key[inner].astype(np.int64) & 0xFFFF) == 0xFFFF)),
                "q15 threshold keys must be 16-bit keys (65536 * k + 65535); re-quantize the model")
        check_q15_costs(self.costs, self.n_features, self.cost_unit)

    def start_scores(self, rows: int) -> np.ndarray:
        return np.tile(self.base_q.astype(np.int64), (rows, 1))

    def accumulate_into(self, X32: np.ndarray, state: ReadState, scores: np.ndarray, first_tree: int = 0,
                        end_tree: int | None = None, rows: np.ndarray | None = None) -> None:
        """fm_trees_q15_accumulate; scores is int64 holding int32 values."""
        _accumulate(self, X32, state, scores, first_tree, end_tree, rows, q15=True)

    def finish(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        label, score = _finish(scores, self.decision_threshold_q)
        return label, score.astype(np.int32)

    def read_cost(self, state: ReadState) -> np.ndarray:
        return state.cost_q.astype(np.float64) * self.cost_unit


def _accumulate(m: TreeEnsemble | TreeEnsembleQ15, X32: np.ndarray, state: ReadState, scores: np.ndarray,
                first_tree: int, end_tree: int | None, rows: np.ndarray | None, q15: bool) -> None:
    end = m.n_trees if end_tree is None else end_tree
    require(0 <= first_tree <= end <= m.n_trees, "tree range out of bounds")
    feature = m.feature.astype(np.int64)
    left, right = m.left.astype(np.int64), m.right.astype(np.int64)
    if isinstance(m, TreeEnsembleQ15):
        cmp, leaf_value = m.threshold_key, m.value_q.astype(np.int64)
    else:
        cmp, leaf_value = m.threshold, m.value
    for t in range(first_tree, end):
        r = state.active(rows)
        node = np.full(len(r), int(m.roots[t]), np.int64)
        while True:
            f = feature[node]
            inner = np.flatnonzero(f >= 0)
            if inner.size == 0:
                break
            ri, ni = r[inner], node[inner]
            x = state.read(X32, ri, f[inner], m.costs, integer=q15)
            go_left = (float_keys(x) <= cmp[ni]) if q15 else (x <= cmp[ni])
            node[inner] = np.where(go_left, left[ni], right[ni])
            failed = state.status[ri] != FM_OK
            if failed.any():
                keep = np.ones(len(r), bool)
                keep[inner[failed]] = False
                r, node = r[keep], node[keep]
        o = int(m.tree_output[t])
        if q15:
            scores[r, o] = np.clip(scores[r, o] + leaf_value[node], INT32_MIN, INT32_MAX)
        else:
            scores[r, o] = (scores[r, o] + leaf_value[node]).astype(np.float32)


def _finish(scores: np.ndarray, threshold: Any) -> tuple[np.ndarray, np.ndarray]:
    rows, n_outputs = scores.shape
    if n_outputs == 1:
        return (scores[:, 0] > threshold).astype(np.int32), scores[:, 0].copy()
    best = np.zeros(rows, np.int64)
    idx = np.arange(rows)
    for o in range(1, n_outputs):
        best = np.where(scores[:, o] > scores[idx, best], o, best)
    return best.astype(np.int32), scores[idx, best]


def key16_threshold(threshold: Any) -> np.ndarray:
    """int32 keys 65536 * k + 65535 with k = fm_key16(threshold), the 16-bit key the C tables hold:
    the smallest such key >= the threshold's own key, so every x <= threshold still goes left (ties
    stay), and fm_key_bits(x) <= 65536 * k + 65535 iff fm_key16(x) <= k."""
    keys = float_keys(np.asarray(threshold, np.float32)).astype(np.int64)
    k = np.floor_divide(keys, 65536)
    return (k * 65536 + 65535).astype(np.int32)


def quantize_trees(m: TreeEnsemble, shift: int | None = None) -> TreeEnsembleQ15:
    """q15 tables: leaf values scaled by 2**shift (default: the largest that keeps every leaf in
    int16), threshold keys from the float32 thresholds rounded to 16-bit keys, base scores and threshold rounded and
    saturated to int32, costs as uint16 units."""
    leaf = m.feature == -1
    if shift is None:
        shift = pick_shift(float(np.max(np.abs(m.value[leaf]), initial=0.0)))
    require(0 <= shift <= MAX_SHIFT, "shift must be in 0..30")
    vq = np.clip(np.round(m.value.astype(np.float64) * 2.0**shift), -32768, 32767)
    costs, unit = quantize_costs(m.costs)
    return TreeEnsembleQ15(
        n_features=m.n_features, n_outputs=m.n_outputs, feature=m.feature.copy(),
        threshold_key=np.where(leaf, 0, key16_threshold(m.threshold)), left=m.left.copy(), right=m.right.copy(),
        value_q=np.where(leaf, vq, 0).astype(np.int16), roots=m.roots.copy(),
        tree_output=m.tree_output.copy(),
        base_q=np.array([to_fixed(b, shift) for b in m.base_score], np.int32),
        decision_threshold_q=to_fixed(m.decision_threshold, shift), shift=shift, costs=costs, cost_unit=unit)


# -- compact C tables ---------------------------------------------------------------------

_MAX_IMPLICIT_DEPTH = 20


def _implicit_tree(feature: np.ndarray, thr: np.ndarray, left: np.ndarray, right: np.ndarray, val: np.ndarray,
                   root: int, depth: int) -> tuple[list[int], list[Any], list[Any]]:
    """Heap-ordered complete tree of the given depth; shallow leaves become dummy nodes that repeat
    their parent's feature (already read) over copies of the leaf."""
    n_inner = (1 << depth) - 1
    feat: list[int] = [0] * n_inner
    th: list[Any] = [0] * n_inner
    leaves: list[Any] = [0] * (n_inner + 1)
    stack = [(0, root, 0)]
    while stack:
        h, n, pf = stack.pop()
        if h >= n_inner:
            leaves[h - n_inner] = val[n]
        elif feature[n] >= 0:
            feat[h], th[h] = int(feature[n]), thr[n]
            stack += [(2 * h + 1, int(left[n]), int(feature[n])), (2 * h + 2, int(right[n]), int(feature[n]))]
        else:
            feat[h] = pf
            stack += [(2 * h + 1, n, pf), (2 * h + 2, n, pf)]
    return feat, th, leaves


def _explicit_tree(feature: np.ndarray, thr: np.ndarray, left: np.ndarray, right: np.ndarray, val: np.ndarray,
                   root: int) -> tuple[list[int], list[Any], list[int], list[Any]]:
    """Breadth-first full binary tree with sibling pairs side by side; a leaf whose sibling is
    internal becomes a dummy node (parent's feature, two copies of the leaf)."""
    if feature[root] < 0:
        return [], [], [], [val[root]]
    order: list[tuple[int, int]] = [(root, -1)]  # (node, -1) real; (leaf, parent feature) dummy
    feat: list[int] = []
    th: list[Any] = []
    kids: list[tuple[bool, int]] = []  # (to internal?, index in that space)
    leaves: list[Any] = []
    k = 0
    while k < len(order):
        n, pf = order[k]
        k += 1
        if pf >= 0:  # dummy
            feat.append(pf)
            th.append(0)
            kids.append((False, len(leaves)))
            leaves += [val[n], val[n]]
            continue
        f = int(feature[n])
        feat.append(f)
        th.append(thr[n])
        lc, rc = int(left[n]), int(right[n])
        l_in, r_in = feature[lc] >= 0, feature[rc] >= 0
        if not l_in and not r_in:
            kids.append((False, len(leaves)))
            leaves += [val[lc], val[rc]]
        else:
            kids.append((True, len(order)))
            order += [(lc, -1) if l_in else (lc, f), (rc, -1) if r_in else (rc, f)]
    n_inner = len(feat)
    return feat, th, [c if inner else n_inner + c for inner, c in kids], leaves


def compact_tables(tables: dict[str, Any], layout: str | None = None, shared_splits: bool = True,
                   split_dict: bool | None = None) -> dict[str, Any]:
    """The compact C tables (fm_trees.h) of a TreeEnsemble(Q15).to_dict(): every tree as a full
    binary tree, in the implicit heap layout (no child table) when that is not larger than the
    explicit one (or when layout says so; "explicit" forces a child table). Same decisions and
    reads as the IR. The IR must be valid (run its validate first). Runs of K trees with equal splits
    (``run``) store their splits once (``shared_splits``; False: every tree its own copy, the layout of tables
    written before it). float32: ``split_dict`` (None: when it saves at least a fifth of the tables' bytes; True,
    False: always, never) replaces the per-node feature and threshold by uint16 codes into a dictionary of the
    distinct (feature, threshold) pairs (fm_trees.h, "Split dictionary"; split_dictionary)."""
    q = "value_q" in tables
    feature = np.asarray(tables["feature"], np.int64)
    left, right = np.asarray(tables["left"], np.int64), np.asarray(tables["right"], np.int64)
    roots = np.asarray(tables["roots"], np.int64)
    n_features, n_outputs = int(tables["n_features"]), int(tables["n_outputs"])
    require(n_features <= 65536 and n_outputs <= 65536, "compact tree tables hold at most 65536 features/outputs")
    if q:
        key = np.asarray(tables["threshold_key"], np.int64)
        # biased 16-bit keys U = k + 32768 (fm_ukey16): the walk goes right iff fm_ukey16(x) > U
        thr = (np.where(feature >= 0, (key - 65535) >> 16, 0) + 32768).astype(np.uint16)
        val = np.asarray(tables["value_q"], np.int16)
    else:
        thr = np.asarray(tables["threshold"], np.float32)
        val = np.asarray(tables["value"], np.float32)
    depths = [tree_depth(feature, left, right, int(r)) for r in roots]
    explicit = [_explicit_tree(feature, thr, left, right, val, int(r)) for r in roots]
    node_b, leaf_b = (4, 2) if q else (6, 4)
    n_exp = sum(len(e[0]) for e in explicit)
    exp_bytes = n_exp * (node_b + 4) + (n_exp + len(roots)) * leaf_b
    imp_ok = all(d <= _MAX_IMPLICIT_DEPTH for d in depths)
    n_imp = sum((1 << d) - 1 for d in depths) if imp_ok else 0
    imp_bytes = n_imp * node_b + (n_imp + len(roots)) * leaf_b
    if layout is None:
        implicit = imp_ok and imp_bytes <= exp_bytes
    else:
        require(layout in ("implicit", "explicit"), "layout must be implicit or explicit")
        require(layout == "explicit" or imp_ok, "trees too deep for the implicit layout")
        implicit = layout == "implicit"
    uniform = 0
    if implicit and depths and min(depths) >= 1:
        # one depth for every tree (fm_trees.depth: the depth-specialized eager walk): pad the shallower
        # trees (dummy nodes repeat a feature already read on the path) when that costs at most 1/8 more bytes
        top = max(depths)
        n_pad = len(roots) * ((1 << top) - 1)
        if n_pad * node_b + (n_pad + len(roots)) * leaf_b <= imp_bytes + imp_bytes // 8:
            uniform = top
            depths = [top] * len(roots)
    feats: list[int] = []
    ths: list[Any] = []
    kids: list[int] = []
    leaves: list[Any] = []
    node_end: list[int] = []
    for t, r in enumerate(roots):
        if implicit:
            f, th, lv = _implicit_tree(feature, thr, left, right, val, int(r), depths[t])
        else:
            f, th, ch, lv = explicit[t]
            kids += ch
        feats += f
        ths += th
        leaves += lv
        node_end.append(len(feats))
    out: dict[str, Any] = {
        "n_features": n_features, "n_outputs": n_outputs, "n_trees": len(roots), "n_nodes": len(feats),
        "node_end": np.asarray(node_end, np.uint32), "feature": np.asarray(feats, np.uint16),
        "child": None if implicit else np.asarray(kids, np.uint32),
        "tree_output": np.asarray(tables["tree_output"], np.uint16), "costs": _costs_or_none(tables.get("costs")),
        "depth": uniform}
    out["run"] = tree_run(out, np.asarray(ths, np.uint16 if q else np.float32))
    out["shared_splits"] = int(shared_splits and out["run"] > 1)
    if out["shared_splits"]:  # the first tree of each run keeps its splits
        sizes = np.diff(np.concatenate([[0], np.asarray(node_end, np.int64)]))
        tree_of_node = np.repeat(np.arange(sizes.size), sizes)
        keep = np.flatnonzero(tree_of_node % out["run"] == 0)
        feats, ths = [feats[i] for i in keep], [ths[i] for i in keep]
        if not implicit:
            kids = [kids[i] for i in keep]
        out["feature"] = np.asarray(feats, np.uint16)
        out["child"] = None if implicit else np.asarray(kids, np.uint32)
    if q:
        out.update(threshold_q=np.asarray(ths, np.uint16), leaf_q=np.asarray(leaves, np.int16),
                   base_q=np.asarray(tables["base_q"], np.int32),
                   decision_threshold_q=int(tables["decision_threshold_q"]), shift=int(tables["shift"]))
    else:
        out.update(threshold=np.asarray(ths, np.float32), leaf=np.asarray(leaves, np.float32),
                   base_score=np.asarray(tables["base_score"], np.float32),
                   decision_threshold=float(tables["decision_threshold"]),
                   exact_costs=int(costs_order_exact(tables.get("costs"))))
        out.update(split_dictionary(out["feature"], out["threshold"], split_dict, compact_bytes(out)))
    return out


# The split dictionary costs about one load a node (x86: +0.7 instructions a node on depth-3 trees): without a
# request it is taken when it saves at least this fraction of the tables' bytes (digits' 100-round K-class miser:
# 30%; a binary 100-tree satimage miser: 12%, whose tables stay at <= 0.5x emlearn's loadable instructions).
SPLIT_DICT_MIN_SAVING = 0.2


def split_dictionary(feature: np.ndarray, threshold: np.ndarray, use: bool | None = None,
                     table_bytes: int = 0) -> dict[str, Any]:
    """The float32 split dictionary (fm_trees.h, "Split dictionary") of per-node features and thresholds:
    ``split`` (uint16 codes, one a node) into ``split_feature`` / ``split_threshold``, the ``n_splits`` distinct
    (feature, threshold bits) pairs sorted by feature, then threshold, with ``feature`` and ``threshold`` None;
    or no dictionary (split None, n_splits 0, the per-node arrays kept). use None: the dictionary (at most 65536
    pairs) when its 2 bytes a node + 6 a pair instead of 6 a node save at least SPLIT_DICT_MIN_SAVING of
    table_bytes (the tables without it; 0: any saving); True, False: always, never."""
    feature = np.asarray(feature, np.uint16)
    threshold = np.asarray(threshold, np.float32)
    bits = threshold.view(np.uint32).astype(np.int64)
    key = feature.astype(np.int64) << 32 | bits  # one pair, bit for bit
    pairs, codes = np.unique(key, return_inverse=True)
    n = int(pairs.size)
    if use is None:
        saving = 4 * feature.size - 6 * n
        use = n <= 65536 and saving > 0 and saving >= SPLIT_DICT_MIN_SAVING * table_bytes
    if not use:
        return {"split": None, "split_feature": None, "split_threshold": None, "n_splits": 0}
    require(n <= 65536, "a split dictionary holds at most 65536 pairs")
    pf = (pairs >> 32).astype(np.uint16)
    pt = (pairs & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    order = np.lexsort((pairs, pt.astype(np.float64), pf))  # by feature, then threshold (bits break -0/0 ties)
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    return {"feature": None, "threshold": None, "split": rank[codes.reshape(-1)].astype(np.uint16),
            "split_feature": pf[order], "split_threshold": pt[order], "n_splits": n}


def tree_run(c: dict[str, Any], thresholds: np.ndarray) -> int:
    """fm_trees.run of compact tables: K = n_outputs > 1 when every run of K consecutive trees has equal splits
    (the same internal node count, features, thresholds bit for bit and children) and tree j of each run adds
    to output j (a K-class model on shared trees), so that the C walks walk each run once; else 0 (every
    tree walked)."""
    k, n = int(c["n_outputs"]), int(c["n_trees"])
    if k < 2 or n == 0 or n % k:
        return 0
    if not np.array_equal(np.asarray(c["tree_output"], np.int64), np.tile(np.arange(k), n // k)):
        return 0
    ends = np.concatenate([[0], np.asarray(c["node_end"], np.int64)])
    inner = np.diff(ends).reshape(-1, k)
    if not bool(np.all(inner == inner[:, :1])):
        return 0
    th = thresholds.view(np.uint32) if thresholds.dtype == np.float32 else thresholds  # bit for bit
    parts = [np.asarray(c["feature"], np.int64), th.astype(np.int64)]
    if c.get("child") is not None:
        parts.append(np.asarray(c["child"], np.int64))
    for r in range(n // k):
        lo, m = int(ends[r * k]), int(inner[r, 0])
        for a in parts:
            first = a[lo:lo + m]
            if any(not np.array_equal(a[lo + j * m:lo + (j + 1) * m], first) for j in range(1, k)):
                return 0
    return k


def _costs_or_none(costs: Any) -> Any:
    """None (the C tables' NULL: cost 1 each) for costs that are all 1."""
    return None if costs is None or bool(np.all(np.asarray(costs) == 1)) else costs


def costs_order_exact(costs: Any) -> bool:
    """float32 costs are order-exact (fm_trees.exact_costs): every cost is k_j * 2**e for one power of two
    with integers k_j >= 0 and sum k_j < 2**24, so every partial sum is exact in float32 and the eager walk
    may sum the costs of the features it read in any order. None (cost 1 each) is."""
    if costs is None:
        return True
    c = np.asarray(costs, np.float32).astype(np.float64)
    if not bool(np.all(np.isfinite(c) & (c >= 0))):
        return False
    nz = c[c > 0]
    if nz.size == 0:
        return True
    mant, ex = np.frexp(nz)  # nz = mant * 2**ex, 0.5 <= mant < 1: an integer m24 * 2**(ex - 24)
    m24 = (mant * 2.0**24).astype(np.int64)
    low = np.array([(int(m) & -int(m)).bit_length() - 1 for m in m24])  # trailing zeros
    e = int(np.min(ex - 24 + low))
    k = [int(m) >> int(b) << int(x - 24 + b - e) if x - 24 + b - e < 64 else 1 << 64
         for m, b, x in zip(m24, low, ex, strict=True)]
    return sum(k) < 2**24


def compact_bytes(c: dict[str, Any]) -> int:
    """Flash bytes of the compact tables (without the costs, shared between parts)."""
    names = ("node_end", "feature", "child", "tree_output", "threshold", "threshold_q", "leaf", "leaf_q",
             "base_score", "base_q", "split", "split_feature", "split_threshold")
    return sum(int(c[n].nbytes) for n in names if c.get(n) is not None)


# -- C binding -------------------------------------------------------------------------

def compact_struct(ffi: Any, c: dict[str, Any], keep: list[Any]) -> Any:
    """fm_trees / fm_trees_q15 over compact tables (not validated: C checks it)."""
    q = "leaf_q" in c
    s = ffi.new("fm_trees_q15 *" if q else "fm_trees *")
    s.n_features, s.n_outputs, s.n_trees, s.n_nodes = c["n_features"], c["n_outputs"], c["n_trees"], c["n_nodes"]
    s.node_end = c_ptr(ffi, keep, "const uint32_t *", c["node_end"], "u4")
    s.feature = c_ptr(ffi, keep, "const uint16_t *", c["feature"], "u2")
    s.child = c_ptr(ffi, keep, "const uint32_t *", c["child"], "u4")
    s.tree_output = c_ptr(ffi, keep, "const uint16_t *", c["tree_output"], "u2")
    if q:
        s.threshold_q = c_ptr(ffi, keep, "const uint16_t *", c["threshold_q"], "u2")
        s.leaf_q = c_ptr(ffi, keep, "const int16_t *", c["leaf_q"], "i2")
        s.base_q = c_ptr(ffi, keep, "const int32_t *", c["base_q"], "i4")
        s.decision_threshold_q, s.shift = c["decision_threshold_q"], c["shift"]
        s.depth, s.run, s.shared_splits = c.get("depth", 0), c.get("run", 0), c.get("shared_splits", 0)
        s.costs = c_ptr(ffi, keep, "const uint16_t *", c["costs"], "u2")
    else:
        s.threshold = c_ptr(ffi, keep, "const float *", c["threshold"], "f4")
        s.leaf = c_ptr(ffi, keep, "const float *", c["leaf"], "f4")
        s.base_score = c_ptr(ffi, keep, "const float *", c["base_score"], "f4")
        s.decision_threshold = c["decision_threshold"]
        s.depth, s.exact_costs, s.run = c.get("depth", 0), c.get("exact_costs", 0), c.get("run", 0)
        s.shared_splits = c.get("shared_splits", 0)
        s.costs = c_ptr(ffi, keep, "const float *", c["costs"], "f4")
        s.split = c_ptr(ffi, keep, "const uint16_t *", c.get("split"), "u2")
        s.split_feature = c_ptr(ffi, keep, "const uint16_t *", c.get("split_feature"), "u2")
        s.split_threshold = c_ptr(ffi, keep, "const float *", c.get("split_threshold"), "f4")
        s.n_splits = c.get("n_splits", 0)
    return s


# the compact tables of recent ensembles, by the content of their to_dict(): a sweep's points share one f0 (ADAPT-LIN,
# L1, ADAPT-GBRT: 1,000 trees on digits, 40% of a sweep's time when it was compacted again at every point); keyed
# by content, not by object, so an ensemble whose arrays were changed in place is compacted again
_COMPACT: OrderedDict[bytes, dict[str, Any]] = OrderedDict()
_COMPACT_KEEP = 4


def _content_key(tables: dict[str, Any]) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    for k in sorted(tables):
        v = tables[k]
        h.update(k.encode())
        if isinstance(v, np.ndarray):
            h.update(f"{v.dtype.str}{v.shape}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        else:
            h.update(repr(v).encode())
    return h.digest()


def ensemble_struct(ffi: Any, ensemble: TreeEnsemble | TreeEnsembleQ15, keep: list[Any]) -> Any:
    """fm_trees / fm_trees_q15 over an ensemble's compact tables, computed once for the last few ensembles of equal
    content."""
    tables = ensemble.to_dict()
    key = _content_key(tables)
    c = _COMPACT.get(key)
    if c is None:
        c = _COMPACT[key] = compact_tables(tables)
        while len(_COMPACT) > _COMPACT_KEEP:
            _COMPACT.popitem(last=False)
    else:
        _COMPACT.move_to_end(key)
    return compact_struct(ffi, c, keep)


class CTrees(CEvaluator):
    """The C evaluator over a tree ensemble's tables (float32 or q15 by the model's type)."""

    family, what = "trees", "tree ensemble"

    def make_struct(self) -> Any:
        return ensemble_struct(self.ffi, self.model, self._keep)

    def n_scores(self) -> int:
        return int(self.model.n_outputs)
