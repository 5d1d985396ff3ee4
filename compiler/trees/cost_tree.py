"""Cost-aware CART regression trees on binned features.

The fitter grows a depth-limited regression tree for a target vector under
(weighted) squared loss. The gain of a split is its impurity reduction (per
unit of total training weight) minus ``penalty * cost[j]`` when the split's
feature ``j`` is not yet "used". A feature becomes free once ``used[j]`` is
True: the caller passes the features earlier trees used; features chosen
inside the tree become free for the rest of the tree. This is the split rule
of Greedy Miser (Xu et al., ICML 2012) and of ADAPT-GBRT (Nan and Saligrama,
NIPS 2017); ``penalty = 0`` gives plain least-squares CART.

Features are binned once per data set (:class:`Binner`, up to 64 bins by
quantiles). Every threshold is a float32 value with this property: for every
float32 ``x`` of the training data, ``x <= threshold`` holds exactly when the
sample's bin is on the left of the split, so the float32 runtime reproduces
the training partition exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_BINS_LIMIT = 256


def _midpoint_f32(a: np.float32, b: np.float32) -> np.float32:
    """A float32 t with a <= t < b (a < b, both float32)."""
    m = np.float32((np.float64(a) + np.float64(b)) / 2.0)
    if not (a <= m < b):
        m = a
    return m


class Binner:
    """Quantile binning of float32 features; fit once, transform many."""

    def __init__(self, max_bins: int = 64) -> None:
        if not 2 <= max_bins <= MAX_BINS_LIMIT:
            raise ValueError(f"max_bins must be in 2..{MAX_BINS_LIMIT}, got {max_bins}")
        self.max_bins = max_bins
        self.thresholds_: list[np.ndarray] = []

    def fit(self, X: np.ndarray) -> Binner:
        X32 = as_float32_matrix(X)
        self.thresholds_ = [self._feature_thresholds(X32[:, j]) for j in range(X32.shape[1])]
        return self

    def _feature_thresholds(self, col: np.ndarray) -> np.ndarray:
        values, counts = np.unique(col, return_counts=True)
        if values.size <= 1:
            return np.zeros(0, dtype=np.float32)
        if values.size <= self.max_bins:
            cut = np.arange(values.size - 1)
        else:
            # cut after the unique value at each quantile of the empirical distribution
            cum = np.cumsum(counts)
            targets = cum[-1] * np.arange(1, self.max_bins) / self.max_bins
            cut = np.searchsorted(cum, targets, side="left")
            cut = np.unique(np.clip(cut, 0, values.size - 2))
        thr = [_midpoint_f32(values[i], values[i + 1]) for i in cut]
        return np.unique(np.asarray(thr, dtype=np.float32))

    @property
    def n_features(self) -> int:
        return len(self.thresholds_)

    @property
    def n_bins(self) -> int:
        """Bins per feature in the code space (max thresholds + 1)."""
        return 1 + max((t.size for t in self.thresholds_), default=0)

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Bin codes, uint8/uint16 (n, d): code b means thr[b-1] < x <= thr[b]."""
        X32 = as_float32_matrix(X)
        if X32.shape[1] != self.n_features:
            raise ValueError(f"expected {self.n_features} features, got {X32.shape[1]}")
        dtype = np.uint8 if self.n_bins <= 256 else np.uint16
        codes = np.empty(X32.shape, dtype=dtype)
        for j, thr in enumerate(self.thresholds_):
            codes[:, j] = np.searchsorted(thr, X32[:, j], side="left")
        return codes


def as_float32_matrix(X: np.ndarray) -> np.ndarray:
    X32 = np.asarray(X, dtype=np.float32)
    if X32.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X32.shape}")
    if not np.all(np.isfinite(X32)):
        raise ValueError("X contains NaN or infinite values (after conversion to float32)")
    return X32


@dataclass
class CostTree:
    """One fitted tree; node arrays are relative to the tree (child -1 = none)."""

    feature: np.ndarray  # int32, -1 for a leaf
    threshold: np.ndarray  # float32
    left: np.ndarray  # int32
    right: np.ndarray  # int32
    value: np.ndarray  # float64 leaf value (0 for internal nodes)

    @property
    def n_nodes(self) -> int:
        return int(self.feature.size)

    def features_used(self) -> np.ndarray:
        f = self.feature[self.feature >= 0]
        return np.unique(f)

    def apply(self, X32: np.ndarray) -> np.ndarray:
        """Leaf node index of every row of a float32 matrix."""
        node = np.zeros(X32.shape[0], dtype=np.int64)
        rows = np.arange(X32.shape[0])
        while True:
            f = self.feature[node]
            inner = f >= 0
            if not inner.any():
                return node
            r = rows[inner]
            n = node[inner]
            go_left = X32[r, f[inner]] <= self.threshold[n]
            node[inner] = np.where(go_left, self.left[n], self.right[n])


@dataclass
class TreeFit:
    tree: CostTree
    leaf_of_sample: np.ndarray  # node index of each training sample's leaf
    new_features: np.ndarray  # features this tree used that were not in ``used``


class CostTreeFitter:
    """Fits cost-aware regression trees on one binned training set.

    Precomputes the bin codes once; :meth:`fit` is then called per tree.
    """

    def __init__(self, binner: Binner, codes: np.ndarray) -> None:
        self.binner = binner
        self.codes = codes
        n, d = codes.shape
        self.n_samples = n
        self.n_features = d
        self.n_bins = binner.n_bins
        self.n_thr = np.array([t.size for t in binner.thresholds_], dtype=np.int64)
        offsets = (np.arange(d, dtype=np.int64) * self.n_bins)[None, :]
        self.flat_codes = codes.astype(np.int64) + offsets  # (n, d)

    @classmethod
    def from_data(cls, X: np.ndarray, max_bins: int = 64) -> CostTreeFitter:
        binner = Binner(max_bins).fit(X)
        return cls(binner, binner.transform(X))

    def fit(
        self,
        target: np.ndarray,
        weight: np.ndarray | None = None,
        *,
        max_depth: int = 3,
        penalty: float = 0.0,
        costs: np.ndarray | None = None,
        used: np.ndarray | None = None,
        min_samples_leaf: int = 1,
        sample_mask: np.ndarray | None = None,
    ) -> TreeFit:
        """Grow one tree to ``target`` (float64, n) with weights (default 1).

        The gain of a split is the weighted SSE reduction divided by the total
        weight of the samples given, minus ``penalty * costs[j]`` if feature j
        is unused. A node splits only if its best gain is > 0.
        """
        n, d, nb = self.n_samples, self.n_features, self.n_bins
        r = np.asarray(target, dtype=np.float64)
        if r.shape != (n,):
            raise ValueError(f"target must have shape ({n},), got {r.shape}")
        w = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
        if w.shape != (n,) or np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError("weight must be a finite non-negative vector of length n_samples")
        if sample_mask is not None:
            w = np.where(sample_mask, w, 0.0)
        c = np.zeros(d) if costs is None else np.asarray(costs, dtype=np.float64)
        used_local = np.zeros(d, dtype=bool) if used is None else np.array(used, dtype=bool)
        used_before = used_local.copy()
        total_w = float(w.sum())
        scale = 1.0 / total_w if total_w > 0 else 0.0

        feature = [-1]
        threshold = [np.float32(0.0)]
        left = [-1]
        right = [-1]
        node_of = np.zeros(n, dtype=np.int64)
        active = w > 0
        wr = w * r
        frontier = [0]
        bins_range = np.arange(nb)
        for _depth in range(max_depth):
            if not frontier:
                break
            pos = np.full(len(feature), -1, dtype=np.int64)
            pos[frontier] = np.arange(len(frontier))
            rows = np.flatnonzero(active & (pos[node_of] >= 0))
            if rows.size == 0:
                break
            m = len(frontier)
            key = (pos[node_of[rows]] * (d * nb))[:, None] + self.flat_codes[rows]
            key = key.ravel()
            size = m * d * nb
            G = np.bincount(key, weights=np.repeat(wr[rows], d), minlength=size).reshape(m, d, nb)
            H = np.bincount(key, weights=np.repeat(w[rows], d), minlength=size).reshape(m, d, nb)
            if min_samples_leaf > 1:
                N = np.bincount(key, minlength=size).reshape(m, d, nb)
            next_frontier: list[int] = []
            for k, node in enumerate(frontier):
                GL = np.cumsum(G[k], axis=1)
                HL = np.cumsum(H[k], axis=1)
                Gt = GL[0, -1]
                Ht = HL[0, -1]
                GR = Gt - GL
                HR = Ht - HL
                valid = (HL > 0) & (HR > 0) & (bins_range[None, :] < self.n_thr[:, None])
                if min_samples_leaf > 1:
                    NL = np.cumsum(N[k], axis=1)
                    NR = NL[:, -1:] - NL
                    valid &= (NL >= min_samples_leaf) & (NR >= min_samples_leaf)
                if not valid.any() or Ht <= 0:
                    continue
                with np.errstate(divide="ignore", invalid="ignore"):
                    gain = GL * GL / HL + GR * GR / HR - Gt * Gt / Ht
                gain = np.where(valid, gain * scale, -np.inf)
                gain -= (penalty * c * ~used_local)[:, None]
                best = int(np.argmax(gain))
                j, b = divmod(best, nb)
                if not gain[j, b] > 0.0:
                    continue
                used_local[j] = True
                li, ri = len(feature), len(feature) + 1
                feature[node] = j
                threshold[node] = self.binner.thresholds_[j][b]
                left[node], right[node] = li, ri
                feature += [-1, -1]
                threshold += [np.float32(0.0), np.float32(0.0)]
                left += [-1, -1]
                right += [-1, -1]
                in_node = np.flatnonzero(node_of == node)
                go_left = self.codes[in_node, j] <= b
                node_of[in_node[go_left]] = li
                node_of[in_node[~go_left]] = ri
                next_frontier += [li, ri]
            frontier = next_frontier

        n_nodes = len(feature)
        sw = np.bincount(node_of, weights=w, minlength=n_nodes)
        swr = np.bincount(node_of, weights=wr, minlength=n_nodes)
        value = np.divide(swr, sw, out=np.zeros(n_nodes), where=sw > 0)
        feat = np.asarray(feature, dtype=np.int32)
        value[feat >= 0] = 0.0
        tree = CostTree(
            feature=feat,
            threshold=np.asarray(threshold, dtype=np.float32),
            left=np.asarray(left, dtype=np.int32),
            right=np.asarray(right, dtype=np.int32),
            value=value,
        )
        new = np.flatnonzero(used_local & ~used_before)
        return TreeFit(tree=tree, leaf_of_sample=node_of, new_features=new)


def leaf_ratio(leaf_of_sample: np.ndarray, num: np.ndarray, den: np.ndarray, n_nodes: int,
               eps: float = 1e-12) -> np.ndarray:
    """Per-node sum(num)/sum(den) over the samples in each leaf (Newton leaf values)."""
    s_num = np.bincount(leaf_of_sample, weights=num, minlength=n_nodes)
    s_den = np.bincount(leaf_of_sample, weights=den, minlength=n_nodes)
    return np.divide(s_num, np.maximum(s_den, eps), out=np.zeros(n_nodes), where=s_den > 0)


# ---------------------------------------------------------------------------
# Tree ensembles in the model IR (a plain dict of flat arrays)
# ---------------------------------------------------------------------------


def ensemble_to_ir(
    trees: list[CostTree],
    tree_output: list[int],
    base_score: np.ndarray,
    n_features: int,
    costs: np.ndarray,
    decision_threshold: float = 0.0,
) -> dict:
    """Concatenate trees (leaf values already float32-ready) into the flat IR dict.

    Keys: n_features, n_outputs, feature (int32, -1 = leaf), threshold (float32,
    go left iff x <= thr), left, right (int32 absolute indices, -1 at leaves),
    value (float32 leaf values, learning rate folded in), roots, tree_output,
    base_score (float32[n_outputs]), decision_threshold, costs (float32).
    """
    base = np.asarray(base_score, dtype=np.float32).ravel()
    feats, thrs, lefts, rights, vals, roots = [], [], [], [], [], []
    offset = 0
    for t in trees:
        roots.append(offset)
        feats.append(t.feature.astype(np.int32))
        thrs.append(t.threshold.astype(np.float32))
        inner = t.feature >= 0
        lefts.append(np.where(inner, t.left + offset, -1).astype(np.int32))
        rights.append(np.where(inner, t.right + offset, -1).astype(np.int32))
        vals.append(np.where(inner, 0.0, t.value).astype(np.float32))
        offset += t.n_nodes

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    return {
        "n_features": int(n_features),
        "n_outputs": int(base.size),
        "feature": cat(feats, np.int32),
        "threshold": cat(thrs, np.float32),
        "left": cat(lefts, np.int32),
        "right": cat(rights, np.int32),
        "value": cat(vals, np.float32),
        "roots": np.asarray(roots, dtype=np.int32),
        "tree_output": np.asarray(tree_output, dtype=np.int32),
        "base_score": base,
        "decision_threshold": float(decision_threshold),
        "costs": np.asarray(costs, dtype=np.float32).ravel(),
    }


def ir_leaves(ir: dict, X: np.ndarray) -> np.ndarray:
    """Leaf node (absolute index) reached by every row in every tree: int64 (n, T)."""
    X32 = as_float32_matrix(X)
    feature, threshold = ir["feature"], ir["threshold"]
    left, right = ir["left"], ir["right"]
    n = X32.shape[0]
    rows = np.arange(n)
    out = np.empty((n, ir["roots"].size), dtype=np.int64)
    for t, root in enumerate(ir["roots"]):
        node = np.full(n, int(root), dtype=np.int64)
        while True:
            f = feature[node]
            inner = f >= 0
            if not inner.any():
                break
            r, nd = rows[inner], node[inner]
            go_left = X32[r, f[inner]] <= threshold[nd]
            node[inner] = np.where(go_left, left[nd], right[nd])
        out[:, t] = node
    return out


def ir_tree_features(ir: dict, X: np.ndarray) -> list[np.ndarray]:
    """For every tree, a bool (n, d) matrix of the features each row reads in it."""
    X32 = as_float32_matrix(X)
    feature, threshold = ir["feature"], ir["threshold"]
    left, right = ir["left"], ir["right"]
    n, d = X32.shape
    rows = np.arange(n)
    result = []
    for root in ir["roots"]:
        read = np.zeros((n, d), dtype=bool)
        node = np.full(n, int(root), dtype=np.int64)
        while True:
            f = feature[node]
            inner = f >= 0
            if not inner.any():
                break
            r, nd, fi = rows[inner], node[inner], f[inner]
            read[r, fi] = True
            go_left = X32[r, fi] <= threshold[nd]
            node[inner] = np.where(go_left, left[nd], right[nd])
        result.append(read)
    return result


def ir_staged_scores(ir: dict, X: np.ndarray, stops: list[int] | None = None) -> np.ndarray:
    """Float32 scores after the first ``s`` trees for each s in ``stops``: (len(stops), n, n_outputs).

    Scores accumulate exactly like the C runtime: base_score, then each tree's
    leaf value added in float32, in tree order.
    """
    T = int(ir["roots"].size)
    stops = [T] if stops is None else [int(s) for s in stops]
    leaves = ir_leaves(ir, X)
    n = leaves.shape[0]
    K = int(ir["n_outputs"])
    vals = ir["value"][leaves]  # float32 (n, T)
    score = np.tile(ir["base_score"].astype(np.float32), (n, 1))
    out = np.empty((len(stops), n, K), dtype=np.float32)
    order = sorted(range(len(stops)), key=lambda i: stops[i])
    t = 0
    outputs = ir["tree_output"]
    for i in order:
        s = stops[i]
        if not 0 <= s <= T:
            raise ValueError(f"stop {s} out of range 0..{T}")
        while t < s:
            k = outputs[t]
            score[:, k] = score[:, k] + vals[:, t]  # float32 + float32 -> float32
            t += 1
        out[i] = score
    return out


def ir_scores(ir: dict, X: np.ndarray, n_trees: int | None = None) -> np.ndarray:
    T = int(ir["roots"].size) if n_trees is None else n_trees
    return ir_staged_scores(ir, X, [T])[0]


def ir_decide(ir: dict, scores: np.ndarray) -> np.ndarray:
    """Class index: one output -> 1 iff score > decision_threshold; several -> first argmax."""
    if scores.shape[1] == 1:
        return (scores[:, 0] > np.float32(ir["decision_threshold"])).astype(np.int64)
    return np.argmax(scores, axis=1).astype(np.int64)
